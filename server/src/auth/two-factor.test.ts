import { describe, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import { matchingStep, newRecoveryCode, newTotpSecret, normalRecoveryCode, recoveryCodeHash, totpOf } from './two-factor';

// The library's own generator, configured as an authenticator app reading our otpauth:// URI would be.
const appFor = (secret: string) => OTPAuth.URI.parse(totpOf(secret, 'someone', 'VDI').toString()) as OTPAuth.TOTP;
const STEP = 30_000;

describe('TOTP codes (RFC 6238)', () => {
  const secret = newTotpSecret();
  const now = Date.UTC(2026, 10, 29, 12, 0, 10);
  const stepAt = (t: number) => Math.floor(t / STEP);

  it('a new secret is 160 random bits in base32, different each time', () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
  });

  it('the URI is an authenticator app’s: SHA1, 6 digits, 30 s, issuer and account', () => {
    const uri = totpOf(secret, 'ana', 'portal.example.org').toString();
    expect(uri).toMatch(/^otpauth:\/\/totp\/portal\.example\.org:ana\?/);
    expect(uri).toContain(`secret=${secret}`);
    expect(uri).toContain('algorithm=SHA1');
    expect(uri).toContain('digits=6');
    expect(uri).toContain('period=30');
  });

  it('accepts the code of now and of one step either side (clock allowance), and answers its step', () => {
    const app = appFor(secret);
    expect(matchingStep(secret, app.generate({ timestamp: now }), now)).toBe(stepAt(now));
    expect(matchingStep(secret, app.generate({ timestamp: now - STEP }), now)).toBe(stepAt(now) - 1);
    expect(matchingStep(secret, app.generate({ timestamp: now + STEP }), now)).toBe(stepAt(now) + 1);
  });

  it('refuses a code two steps away, another secret’s code, and what is not six digits', () => {
    const app = appFor(secret);
    expect(matchingStep(secret, app.generate({ timestamp: now - 2 * STEP }), now)).toBeNull();
    expect(matchingStep(secret, app.generate({ timestamp: now + 2 * STEP }), now)).toBeNull();
    expect(matchingStep(secret, appFor(newTotpSecret()).generate({ timestamp: now }), now)).toBeNull();
    for (const bad of ['', '12345', '1234567', 'abcdef', '12 34 5x']) expect(matchingStep(secret, bad, now)).toBeNull();
  });

  it('spaces inside a typed code are ignored', () => {
    const code = appFor(secret).generate({ timestamp: now });
    expect(matchingStep(secret, `${code.slice(0, 3)} ${code.slice(3)}`, now)).toBe(stepAt(now));
  });
});

describe('recovery codes', () => {
  it('are ten characters without look-alikes, shown as xxxxx-xxxxx, and all different', () => {
    const codes = Array.from({ length: 200 }, newRecoveryCode);
    for (const c of codes) expect(c).toMatch(/^[2-9a-hjkmnp-z]{5}-[2-9a-hjkmnp-z]{5}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('are read in any case, with or without the dash or spaces; anything else is not one', () => {
    const c = newRecoveryCode();
    expect(normalRecoveryCode(c.toUpperCase())).toBe(c);
    expect(normalRecoveryCode(c.replace('-', ''))).toBe(c);
    expect(normalRecoveryCode(` ${c.slice(0, 5)} ${c.slice(6)} `)).toBe(c);
    for (const bad of ['', '123456', 'abcde-fghi', 'abcde-fghi1l', 'abcde-fghi0']) expect(normalRecoveryCode(bad)).toBeNull();
  });

  it('are kept as a digest bound to their owner: never the code itself', () => {
    const c = newRecoveryCode();
    const h = recoveryCodeHash('user-1', c);
    expect(h).not.toContain(c);
    expect(h).not.toContain(c.replace('-', ''));
    expect(recoveryCodeHash('user-1', c)).toBe(h);
    expect(recoveryCodeHash('user-2', c)).not.toBe(h);
  });
});
