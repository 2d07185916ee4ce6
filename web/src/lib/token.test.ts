import { describe, expect, it } from 'vitest';
import type { TTokenClaims } from '@vdi/contracts';
import { clockDrift, msUntilRenewal, needsRenewal, RENEW_MARGIN_SECONDS } from './token';

const claims = (iat: number, exp: number) => ({ iat, exp }) as TTokenClaims;

describe('token renewal timing', () => {
  it('renews within the 30 s margin before expiry', () => {
    const c = claims(1000, 1300);
    expect(RENEW_MARGIN_SECONDS).toBe(30);
    expect(needsRenewal(c, 0, 1269_000)).toBe(false);
    expect(needsRenewal(c, 0, 1271_000)).toBe(true);
    expect(msUntilRenewal(c, 0, 1000_000)).toBe(270_000);
    expect(msUntilRenewal(c, 0, 1290_000)).toBe(0);
  });

  it('adjusts for the difference between the server clock and ours', () => {
    const c = claims(1000, 1300);
    // Our clock is 100 s behind the server's: iat 1000 seen at our 900.
    const drift = clockDrift(c, 900_000);
    expect(drift).toBe(100);
    expect(needsRenewal(c, drift, 1169_000)).toBe(false);
    expect(needsRenewal(c, drift, 1171_000)).toBe(true);
  });
});
