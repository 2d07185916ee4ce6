import { z } from 'zod';

/**
 * Two-factor sign-in for local accounts: TOTP (RFC 6238: SHA-1, 6 digits, 30 s; ±1 step of clock allowance;
 * a code is good once) and ten one-time recovery codes (only their hashes are kept).
 */
export const TWO_FACTOR_DIGITS = 6;
export const TWO_FACTOR_PERIOD = 30;
export const RECOVERY_CODE_COUNT = 10;

/** A code as typed: a TOTP code (6 digits) or a recovery code (`xxxxx-xxxxx`); spaces are ignored. */
export const ZTwoFactorCode = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .regex(/^[0-9A-Za-z\s-]+$/);

/** GET /user/two-factor: whether it is on, an enrolment is pending, it is required, recovery codes left. */
export const ZTwoFactorStatus = z.object({
  enabled: z.boolean(),
  enabled_at: z.string().nullable(),
  pending: z.boolean(),
  required: z.boolean(),
  recovery_codes_left: z.number().int(),
  /** Only local accounts have a second factor here (a directory's or identity provider's sign-in has its own). */
  available: z.boolean(),
});
export type TTwoFactorStatus = z.infer<typeof ZTwoFactorStatus>;

/** An enrolment started: the secret (base32) to type in, the otpauth:// URI and the same as a QR image (data: URL). */
export const ZTwoFactorEnrolment = z.object({
  secret: z.string(),
  uri: z.string(),
  qr: z.string(),
  issuer: z.string(),
  account: z.string(),
});
export type TTwoFactorEnrolment = z.infer<typeof ZTwoFactorEnrolment>;

export const ZTwoFactorCodeBody = z.object({ code: ZTwoFactorCode }).strict();

/** Recovery codes, shown once (on confirmation and on regeneration). */
export const ZRecoveryCodes = z.object({ recovery_codes: z.array(z.string()) });
export type TRecoveryCodes = z.infer<typeof ZRecoveryCodes>;
