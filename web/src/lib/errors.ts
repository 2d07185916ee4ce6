import type { TFunction } from 'i18next';
import { isQuotaCode } from '@vdi/contracts';
import { HttpError, RequestTimeout } from './api';

/** The translated message of a failure: errors.<description_code> with its params, else the generic one. */
export function errorMessage(t: TFunction, err: unknown, exists: (key: string) => boolean): string {
  if (err instanceof HttpError) {
    const key = `errors.${err.code}`;
    if (exists(key)) return t(key, { ...(err.body.params ?? {}) });
    const byType = `errors.${err.body.error}`;
    if (exists(byType)) return t(byType, { ...(err.body.params ?? {}) });
  }
  // A call that got no answer in its time: its own notice (e.g. the desktop creation's).
  if (err instanceof RequestTimeout && exists(`errors.${err.code}`)) return t(`errors.${err.code}`);
  return t('errors.generic_error');
}

/** What the one central handler does with a failure (spec core §8). */
export type ErrorAction =
  | { kind: 'maintenance' }
  | { kind: 'error-page'; code: number }
  | { kind: 'logout' }
  | { kind: 'ignore' }
  | { kind: 'quota'; code: string }
  | { kind: 'notify'; code: string };

export function classifyError(err: unknown, opts: { schedulerCall?: boolean } = {}): ErrorAction {
  if (!(err instanceof HttpError)) return { kind: 'notify', code: 'generic_error' };
  if (err.status === 503 && !opts.schedulerCall) return { kind: 'maintenance' };
  if (err.status === 500) return { kind: 'error-page', code: 500 };
  if (err.status === 401) return { kind: 'logout' };
  if (err.status === 429) return { kind: 'ignore' };
  if (isQuotaCode(err.code)) return { kind: 'quota', code: err.code };
  return { kind: 'notify', code: err.code };
}
