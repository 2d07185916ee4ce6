/**
 * Two-factor sign-in for local accounts: TOTP (RFC 6238 with the `otpauth` library: SHA-1, 6 digits, 30 s steps,
 * ±1 step of clock allowance) and one-time recovery codes. The secret is kept sealed on the user
 * (auth/secret-box.ts); a code is accepted once: the step of the last accepted code is stored and only a later
 * step passes (in one conditional UPDATE, so two requests with the same code cannot both pass). Recovery codes are
 * random (50 bits each) and kept as SHA-256 digests only; a used one is deleted in the statement that checks it.
 */
import { createHash, randomInt } from 'node:crypto';
import { and, count, eq, isNotNull, lt } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import { RECOVERY_CODE_COUNT, TWO_FACTOR_DIGITS, TWO_FACTOR_PERIOD, type TRole, type TTwoFactorEnrolment } from '@vdi/contracts';
import { schema, type Db } from '../db';
import type { Settings } from '../settings';
import { openSecret, sealSecret } from './secret-box';
import type { UserRow } from './sessions';

export const TOTP_WINDOW = 1;
const ALGORITHM = 'SHA1';
const u = schema.users;
const rc = schema.twoFactorRecoveryCodes;

export const totpOf = (secret: string, label = '', issuer = '') =>
  new OTPAuth.TOTP({ issuer, label, algorithm: ALGORITHM, digits: TWO_FACTOR_DIGITS, period: TWO_FACTOR_PERIOD, secret: OTPAuth.Secret.fromBase32(secret) });

/** A new random secret (160 bits, as RFC 4226 recommends), base32. */
export const newTotpSecret = () => new OTPAuth.Secret({ size: 20 }).base32;

/** The time step a code of `secret` matches at `now` within ±TOTP_WINDOW, or null. */
export function matchingStep(secret: string, code: string, now = Date.now()): number | null {
  const token = code.replace(/\s+/g, '');
  if (!new RegExp(`^\\d{${TWO_FACTOR_DIGITS}}$`).test(token)) return null;
  const delta = totpOf(secret).validate({ token, timestamp: now, window: TOTP_WINDOW });
  if (delta === null) return null;
  return Math.floor(now / 1000 / TWO_FACTOR_PERIOD) + delta;
}

/** What an enrolment shows: the secret, its otpauth:// URI and the URI as a QR image. */
export async function enrolmentView(secret: string, account: string, issuer: string): Promise<TTwoFactorEnrolment> {
  const uri = totpOf(secret, account, issuer).toString();
  const qr = await QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 1, width: 240 });
  return { secret, uri, qr, issuer, account };
}

// Recovery codes: 10 characters of an alphabet without look-alikes (0/O, 1/I/L), shown as xxxxx-xxxxx.
const ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';
export function newRecoveryCode(): string {
  let s = '';
  for (let i = 0; i < 10; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}
/** A recovery code as typed (any case, with or without the dash or spaces) → its canonical form, or null. */
export function normalRecoveryCode(code: string): string | null {
  const s = code.toLowerCase().replace(/[\s-]+/g, '');
  if (s.length !== 10 || [...s].some((ch) => !ALPHABET.includes(ch))) return null;
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}
export const recoveryCodeHash = (userId: string, code: string) =>
  createHash('sha256').update(`two-factor-recovery:${userId}:${code}`).digest('base64url');

/** Replaces a person's recovery codes by ten new ones (in `db`, a transaction of the caller's) and answers them. */
export async function replaceRecoveryCodes(db: Db, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.delete(rc).where(eq(rc.userId, userId));
  await db.insert(rc).values(codes.map((c) => ({ userId, codeHash: recoveryCodeHash(userId, c) })));
  return codes;
}

export async function recoveryCodesLeft(db: Db, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(rc).where(eq(rc.userId, userId));
  return row?.n ?? 0;
}

export const hasTwoFactor = (user: Pick<UserRow, 'totpEnabledAt' | 'totpSecret'>) => user.totpEnabledAt !== null && user.totpSecret !== null;

/** Whether two-factor is required of this person (local accounts only) by the setting: their role or their category. */
export async function twoFactorRequired(settings: Settings, user: Pick<UserRow, 'provider' | 'roleId' | 'categoryId'>): Promise<boolean> {
  if (user.provider !== 'local') return false;
  const s = await settings.get('two_factor');
  return s.required_roles.includes(user.roleId as Exclude<TRole, never>) || s.required_categories.includes(user.categoryId);
}

export type CodeCheck = { ok: false } | { ok: true; kind: 'totp' } | { ok: true; kind: 'recovery'; left: number };

/**
 * Checks a code against a person's second factor: a TOTP code of a step later than the last accepted one (that step
 * is then stored), or one of their recovery codes (then deleted). Each code is good once.
 */
export async function checkSecondFactor(db: Db, serverSecret: string, user: Pick<UserRow, 'id' | 'totpSecret' | 'totpEnabledAt'>, code: string, now = Date.now()): Promise<CodeCheck> {
  if (!user.totpSecret || !user.totpEnabledAt) return { ok: false };
  // A secret sealed under another SECRET (the server's key changed) opens no more: recovery codes still work.
  const secret = openedOrNull(serverSecret, user.totpSecret);
  const step = secret === null ? null : matchingStep(secret, code, now);
  if (step !== null) {
    const taken = await db
      .update(u)
      .set({ totpLastStep: step })
      .where(and(eq(u.id, user.id), lt(u.totpLastStep, step), isNotNull(u.totpEnabledAt)))
      .returning({ id: u.id });
    return taken.length > 0 ? { ok: true, kind: 'totp' } : { ok: false };
  }
  const recovery = normalRecoveryCode(code);
  if (recovery === null) return { ok: false };
  const used = await db.delete(rc).where(and(eq(rc.userId, user.id), eq(rc.codeHash, recoveryCodeHash(user.id, recovery)))).returning({ userId: rc.userId });
  if (used.length === 0) return { ok: false };
  return { ok: true, kind: 'recovery', left: await recoveryCodesLeft(db, user.id) };
}

/** Checks a code of the pending secret (enrolment): answers the step it matched, or null. */
export function checkPendingCode(serverSecret: string, user: Pick<UserRow, 'totpPendingSecret'>, code: string, now = Date.now()): number | null {
  if (!user.totpPendingSecret) return null;
  const secret = openedOrNull(serverSecret, user.totpPendingSecret);
  return secret === null ? null : matchingStep(secret, code, now);
}

function openedOrNull(serverSecret: string, sealed: string): string | null {
  try {
    return openSecret(serverSecret, sealed);
  } catch {
    return null;
  }
}

export const sealTotp = (serverSecret: string, secret: string) => sealSecret(serverSecret, secret);
