import { describe, expect, it } from 'vitest';
import { policyViolations } from '../../../auth/passwords';
import { csvCell } from '../../../http/csv';
import { DIGITS, LOWER, oneTimePassword, SIGNS, UPPER } from './one-time-password';

const AMBIGUOUS = /[0Oo1lIi5S2Z8Buvqg]/;
const policy = (p: Partial<{ length: number; digits: number; uppercase: number; lowercase: number; special_characters: number; not_username: boolean }> = {}) => ({
  id: 'p', type: 'local' as const, category: 'all', role: 'all', subtype: 'password' as const, expire: 0, old_passwords: 0,
  length: 8, digits: 0, uppercase: 0, lowercase: 0, special_characters: 0, not_username: false, ...p,
});

describe('one-time passwords', () => {
  it('are readable groups of four without look-alike characters', () => {
    for (let i = 0; i < 500; i++) {
      const p = oneTimePassword(null);
      expect(p).toMatch(/^[^-]{4}-[^-]{4}-[^-]{4}$/);
      expect(p).not.toMatch(AMBIGUOUS);
      expect(p.replaceAll('-', '')).toMatch(new RegExp(`^[${LOWER}${UPPER}${DIGITS}]+$`));
      // A spreadsheet never reads it as a formula: the CSV cell is the password itself.
      expect(csvCell(p)).toBe(p);
    }
    expect(`${LOWER}${UPPER}${DIGITS}${SIGNS}`).not.toMatch(AMBIGUOUS);
  });

  it('are all different (at least 64 bits each)', () => {
    const seen = new Set(Array.from({ length: 5000 }, () => oneTimePassword(null)));
    expect(seen.size).toBe(5000);
    expect(12 * Math.log2(LOWER.length + UPPER.length + DIGITS.length)).toBeGreaterThan(64);
  });

  it('meet any password policy', async () => {
    const strict = [
      policy(),
      policy({ length: 20, digits: 4, uppercase: 4, lowercase: 4, special_characters: 6 }),
      policy({ length: 32 }),
      policy({ special_characters: 1 }),
      policy({ digits: 15 }),
    ];
    for (const p of strict) {
      for (let i = 0; i < 50; i++) {
        const password = oneTimePassword(p, 'ana');
        expect(await policyViolations(p, password, 'ana', []), `${password} for ${JSON.stringify(p)}`).toEqual([]);
        expect(csvCell(password)).toBe(password);
      }
    }
  });

  it('never hold the user name when the policy forbids it', () => {
    for (let i = 0; i < 200; i++) expect(oneTimePassword(policy({ not_username: true }), 'ab').toLowerCase()).not.toContain('ab');
  });
});
