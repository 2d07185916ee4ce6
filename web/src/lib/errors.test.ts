import { describe, expect, it } from 'vitest';
import i18n from '../i18n';
import { HttpError, RequestTimeout } from './api';
import { classifyError, errorMessage } from './errors';

const err = (status: number, code: string, params: Record<string, unknown> | null = null) =>
  new HttpError(status, { error: 'x', msg: '', description_code: code, description: '', params }, new Headers());

describe('error handling', () => {
  it('maps statuses to the spec actions', () => {
    expect(classifyError(err(503, 'maintenance'))).toEqual({ kind: 'maintenance' });
    expect(classifyError(err(503, 'x'), { schedulerCall: true }).kind).toBe('notify');
    expect(classifyError(err(500, 'x'))).toEqual({ kind: 'error-page', code: 500 });
    expect(classifyError(err(401, 'x'))).toEqual({ kind: 'logout' });
    expect(classifyError(err(429, 'x'))).toEqual({ kind: 'ignore' });
    expect(classifyError(err(428, 'desktop_start_user_quota_exceeded'))).toEqual({ kind: 'quota', code: 'desktop_start_user_quota_exceeded' });
    expect(classifyError(err(409, 'username_exists'))).toEqual({ kind: 'notify', code: 'username_exists' });
    expect(classifyError(new Error('network'))).toEqual({ kind: 'notify', code: 'generic_error' });
  });

  it('looks the message up by description_code with params, generic otherwise', async () => {
    await i18n.changeLanguage('en-US');
    const t = i18n.t.bind(i18n);
    const exists = (k: string) => i18n.exists(k);
    expect(errorMessage(t, err(400, 'password_policy_length', { length: 12 }), exists)).toBe('The password needs at least 12 characters.');
    expect(errorMessage(t, err(400, 'never_heard_of_it'), exists)).toBe(i18n.t('errors.generic_error'));
    await i18n.changeLanguage('es-ES');
    expect(errorMessage(i18n.t.bind(i18n), err(403, 'user_disabled'), exists)).not.toBe('This account is disabled.');
    await i18n.changeLanguage('en-US');
  });

  it('names a call that got no answer in time by its own notice (desktop creation: 25 s)', async () => {
    await i18n.changeLanguage('en-US');
    const exists = (k: string) => i18n.exists(k);
    expect(errorMessage(i18n.t.bind(i18n), new RequestTimeout('desktop_create_timeout'), exists)).toMatch(/longer than expected/);
    expect(errorMessage(i18n.t.bind(i18n), new RequestTimeout('generic_error'), exists)).toBe(i18n.t('errors.generic_error'));
  });
});
