import { describe, expect, it } from 'vitest';
import { API_TOKEN_MAX_DAYS } from '@vdi/contracts';
import { ApiError } from '../http/errors';
import { assertTokenMayCall, checkedExpiry, hashSecret, lastUseDue, LAST_USED_EVERY_MS, newApiToken, parseApiToken, usableToken, type ApiTokenRow } from './api-tokens';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ApiError ? `${err.status} ${err.code}` : String(err);
  }
  return 'passed';
};

const rowOf = (secret: string, over: Partial<ApiTokenRow> = {}): ApiTokenRow => ({
  id: '0123456789abcdef', userId: 'u', name: 'n', secretHash: hashSecret(secret), readOnly: false,
  createdAt: new Date(), expiresAt: null, lastUsedAt: null, revokedAt: null, ...over,
});

describe('personal API tokens', () => {
  it('are made of an id and a secret that parse back, and only the hash is kept', () => {
    const made = newApiToken();
    const parsed = parseApiToken(made.token);
    expect(parsed?.id).toBe(made.id);
    expect(made.secretHash).toBe(hashSecret(parsed!.secret));
    expect(made.token).not.toContain(made.secretHash);
    expect(newApiToken().token).not.toBe(made.token);
  });

  it('refuse texts of another shape', () => {
    for (const bad of ['vdi_', 'vdi_xyz_abc', `vdi_0123456789abcdef_${'a'.repeat(42)}`, `vdi_0123456789ABCDEF_${'a'.repeat(43)}`, 'eyJhbGciOi.x.y']) {
      expect(parseApiToken(bad), bad).toBeNull();
    }
  });

  it('work with the right secret only, while neither revoked nor expired', () => {
    const { token } = newApiToken();
    const { secret } = parseApiToken(token)!;
    const row = rowOf(secret);
    expect(usableToken(row, secret)).toBe(row);
    expect(codeOf(() => usableToken(row, `${secret.slice(0, -1)}x`))).toBe('401 invalid_token');
    expect(codeOf(() => usableToken(undefined, secret))).toBe('401 invalid_token');
    expect(codeOf(() => usableToken(rowOf(secret, { revokedAt: new Date() }), secret))).toBe('401 invalid_token');
    expect(codeOf(() => usableToken(rowOf(secret, { expiresAt: new Date(Date.now() - 1) }), secret))).toBe('401 token_expired');
    expect(usableToken(rowOf(secret, { expiresAt: new Date(Date.now() + 60_000) }), secret).id).toBe(row.id);
  });

  it('read-only ones only read', () => {
    expect(codeOf(() => assertTokenMayCall({ readOnly: true }, 'GET'))).toBe('passed');
    expect(codeOf(() => assertTokenMayCall({ readOnly: true }, 'HEAD'))).toBe('passed');
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(codeOf(() => assertTokenMayCall({ readOnly: true }, m))).toBe('403 api_token_read_only');
    expect(codeOf(() => assertTokenMayCall({ readOnly: false }, 'DELETE'))).toBe('passed');
  });

  it('expire in the future, at most the maximum life ahead, or never', () => {
    const now = Date.UTC(2026, 0, 1);
    const day = 86_400_000;
    expect(checkedExpiry(null, now)).toBeNull();
    expect(checkedExpiry(new Date(now + day).toISOString(), now)?.getTime()).toBe(now + day);
    expect(checkedExpiry(new Date(now + API_TOKEN_MAX_DAYS * day).toISOString(), now)).not.toBeNull();
    expect(codeOf(() => checkedExpiry(new Date(now + API_TOKEN_MAX_DAYS * day + 1000).toISOString(), now))).toBe('400 api_token_expiry_invalid');
    expect(codeOf(() => checkedExpiry(new Date(now - 1000).toISOString(), now))).toBe('400 api_token_expiry_invalid');
  });

  it('record their last use at most once a minute', () => {
    const now = Date.now();
    expect(lastUseDue({ lastUsedAt: null }, now)).toBe(true);
    expect(lastUseDue({ lastUsedAt: new Date(now - LAST_USED_EVERY_MS + 1000) }, now)).toBe(false);
    expect(lastUseDue({ lastUsedAt: new Date(now - LAST_USED_EVERY_MS) }, now)).toBe(true);
  });
});
