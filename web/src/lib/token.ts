import { decodeJwt } from 'jose';
import { ZTokenClaims, type TTokenClaims, type TTokenType } from '@vdi/contracts';

/** Reads a token's claims without verifying them (the server verifies). */
export function readToken(token: string | undefined | null): TTokenClaims | null {
  if (!token) return null;
  try {
    const parsed = ZTokenClaims.safeParse(decodeJwt(token));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export const typeOf = (claims: TTokenClaims): TTokenType =>
  (claims.type && claims.type !== '' ? claims.type : 'login') as TTokenType;

/** Server minus client clock, in seconds, measured from a token just issued. */
export const clockDrift = (claims: TTokenClaims, clientNowMs = Date.now()) => claims.iat - Math.floor(clientNowMs / 1000);

export const RENEW_MARGIN_SECONDS = 30;

/** True when the token expires within the renewal margin, on the server's clock. */
export function needsRenewal(claims: TTokenClaims, drift: number, clientNowMs = Date.now()): boolean {
  const serverNow = clientNowMs / 1000 + drift;
  return claims.exp - serverNow < RENEW_MARGIN_SECONDS;
}

/** Milliseconds until the renewal margin begins (0 when it already has). */
export function msUntilRenewal(claims: TTokenClaims, drift: number, clientNowMs = Date.now()): number {
  const serverNow = clientNowMs / 1000 + drift;
  return Math.max(0, (claims.exp - RENEW_MARGIN_SECONDS - serverNow) * 1000);
}
