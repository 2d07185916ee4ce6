import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_TOKEN_MAX_DAYS, API_TOKEN_PREFIX, type TApiToken } from '@vdi/contracts';
import type { schema } from '../db';
import { badRequest, forbidden, unauthorized } from '../http/errors';

// Personal API tokens: `vdi_<id>_<secret>`. The id (16 hex digits) finds the row by its primary key; the
// secret (32 random bytes, base64url) is kept only as its SHA-256 — a secret of 256 random bits needs no slow
// hash, and a fast one keeps a token's every call cheap. Which calls a token may make is decided here; who its
// owner is and what they may do is the guard's and the modules' usual business, at each call.

export type ApiTokenRow = typeof schema.apiTokens.$inferSelect;

const ID_HEX = 16;
const TOKEN_SHAPE = new RegExp(`^${API_TOKEN_PREFIX}([0-9a-f]{${ID_HEX}})_([A-Za-z0-9_-]{43})$`);
/** The last-used time is written at most this often per token (a script's every call would otherwise write). */
export const LAST_USED_EVERY_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

export const isApiToken = (bearer: string) => bearer.startsWith(API_TOKEN_PREFIX);
export const apiTokenPrefix = (id: string) => `${API_TOKEN_PREFIX}${id}`;
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('base64url');

/** A new token: its id, the text handed out once, and the hash that is stored. */
export function newApiToken() {
  const id = randomBytes(ID_HEX / 2).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, token: `${apiTokenPrefix(id)}_${secret}`, secretHash: hashSecret(secret) };
}

/** The id and secret of a bearer text shaped like a token, else null. */
export function parseApiToken(bearer: string): { id: string; secret: string } | null {
  const m = TOKEN_SHAPE.exec(bearer);
  return m ? { id: m[1]!, secret: m[2]! } : null;
}

/** The expiry asked for at creation: null (until revoked), else in the future and within the maximum life. */
export function checkedExpiry(expires: string | null, now = Date.now()): Date | null {
  if (expires === null) return null;
  const at = new Date(expires);
  if (!(at.getTime() > now) || at.getTime() > now + API_TOKEN_MAX_DAYS * DAY_MS) {
    throw badRequest('api_token_expiry_invalid', `The expiry must be in the future and at most ${API_TOKEN_MAX_DAYS} days ahead`);
  }
  return at;
}

/**
 * The row a bearer token names, when its secret matches and it is neither revoked nor expired (401 otherwise:
 * an unknown, wrong or revoked token all answer the same `invalid_token`).
 */
export function usableToken(row: ApiTokenRow | null | undefined, secret: string, now = Date.now()): ApiTokenRow {
  const given = Buffer.from(hashSecret(secret));
  const kept = Buffer.from(row?.secretHash ?? '');
  if (!row || given.length !== kept.length || !timingSafeEqual(given, kept) || row.revokedAt) {
    throw unauthorized('invalid_token', 'Invalid token');
  }
  if (row.expiresAt && row.expiresAt.getTime() <= now) throw unauthorized('token_expired', 'Token expired');
  return row;
}

/** A read-only token reads only: anything but GET and HEAD is refused (403). */
export function assertTokenMayCall(row: Pick<ApiTokenRow, 'readOnly'>, method: string) {
  if (row.readOnly && method !== 'GET' && method !== 'HEAD') throw forbidden('api_token_read_only', 'This API token may only read');
}

/** Whether this call should record the token's last use (never used, or not within the last minute). */
export const lastUseDue = (row: Pick<ApiTokenRow, 'lastUsedAt'>, now = Date.now()) =>
  !row.lastUsedAt || now - row.lastUsedAt.getTime() >= LAST_USED_EVERY_MS;

export const apiTokenView = (row: ApiTokenRow): TApiToken => ({
  id: row.id,
  name: row.name,
  prefix: apiTokenPrefix(row.id),
  scope: row.readOnly ? 'read' : 'full',
  created: row.createdAt.toISOString(),
  expires: row.expiresAt?.toISOString() ?? null,
  last_used: row.lastUsedAt?.toISOString() ?? null,
  revoked: row.revokedAt?.toISOString() ?? null,
});
