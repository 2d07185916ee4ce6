import { randomUUID } from 'node:crypto';
import { compactVerify, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { ZTokenClaims, type TTokenClaims, type TTokenType } from '@vdi/contracts';
import { unauthorized } from '../http/errors';

export const TOKEN_ISSUER = 'isard-authentication';
export const TOKEN_KID = 'isardvdi';

/** Lifetimes of the special tokens in seconds (reference §7). */
export const TOKEN_LIFETIME: Record<Exclude<TTokenType, 'login'>, number> = {
  register: 60 * 60,
  'category-select': 10 * 60,
  'disclaimer-acknowledgement-required': 10 * 60,
  'email-verification-required': 10 * 60,
  'email-verification': 60 * 60,
  'password-reset-required': 60 * 60,
  'password-reset': 60 * 60,
  viewer: 30 * 60,
  'user-migration': 60 * 60,
  'two-factor-required': 10 * 60,
  'two-factor-enrolment-required': 15 * 60,
};

export type TokenService = ReturnType<typeof createTokenService>;

/** Verified tokens kept by their text (a page's calls all carry the same token): at most this many. */
const VERIFIED_KEPT = 10_000;

export function createTokenService(secret: string) {
  const key = new TextEncoder().encode(secret);
  // The claims a token's text carries never change, so a signature checked once need not be checked
  // again on the token's next call; its expiry is. Whether its session still lives is the guard's
  // query, on every call.
  const verified = new Map<string, TTokenClaims & { jti?: string }>();

  async function sign(claims: Record<string, unknown>, expiresAt: number, now = Math.floor(Date.now() / 1000)) {
    return new SignJWT({ ...claims } as JWTPayload)
      .setProtectedHeader({ alg: 'HS256', kid: TOKEN_KID })
      .setIssuer(TOKEN_ISSUER)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(expiresAt)
      .sign(key);
  }

  const parse = (payload: unknown): TTokenClaims => {
    const claims = ZTokenClaims.safeParse(payload);
    if (!claims.success) throw unauthorized('invalid_token', 'Malformed token');
    return claims.data;
  };

  return {
    sign,
    /** A token of a special type, with its own lifetime and a jti so one-time use can be enforced. */
    async signSpecial(type: Exclude<TTokenType, 'login'>, claims: Record<string, unknown>) {
      const now = Math.floor(Date.now() / 1000);
      return sign({ ...claims, type, jti: randomUUID() }, now + TOKEN_LIFETIME[type], now);
    },
    /** Signature, issuer and expiry checked. */
    async verify(token: string): Promise<TTokenClaims & { jti?: string }> {
      const known = verified.get(token);
      if (known && known.exp > Math.floor(Date.now() / 1000)) return { ...known };
      verified.delete(token);
      try {
        const { payload } = await jwtVerify(token, key, { issuer: TOKEN_ISSUER, algorithms: ['HS256'] });
        const claims = { ...parse(payload), jti: typeof payload.jti === 'string' ? payload.jti : undefined };
        if (verified.size >= VERIFIED_KEPT) verified.delete(verified.keys().next().value!);
        verified.set(token, claims);
        return { ...claims };
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') throw unauthorized('token_expired', 'Token expired');
        if ((err as { status?: number }).status === 401) throw err;
        throw unauthorized('invalid_token', 'Invalid token');
      }
    },
    /** Signature only: renewal accepts an expired token whose session is still alive. */
    async verifySignatureOnly(token: string): Promise<TTokenClaims> {
      try {
        const { payload } = await compactVerify(token, key, { algorithms: ['HS256'] });
        return parse(JSON.parse(new TextDecoder().decode(payload)));
      } catch (err) {
        if ((err as { status?: number }).status === 401) throw err;
        throw unauthorized('invalid_token', 'Invalid token');
      }
    },
  };
}

/** `Authorization: Bearer x` → x. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m?.[1];
}

/** The type of a token; a login token carries none (or "login"). */
export const tokenType = (claims: TTokenClaims): TTokenType =>
  (claims.type && claims.type !== '' ? claims.type : 'login') as TTokenType;
