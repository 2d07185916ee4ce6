import { describe, expect, it } from 'vitest';
import type { TPasswordPolicy } from '@vdi/contracts';
import { hashPassword, passwordExpired, policyViolations } from './passwords';

const policy = (p: Partial<TPasswordPolicy>): TPasswordPolicy => ({
  id: 'p', type: 'local', category: 'all', role: 'all', subtype: 'password', length: 8, digits: 0, uppercase: 0,
  lowercase: 0, special_characters: 0, not_username: false, expire: 0, old_passwords: 0, ...p,
});

describe('password policy', () => {
  it('reports each broken rule with its bound', async () => {
    const codes = async (p: Partial<TPasswordPolicy>, pw: string, user = 'ann', history: string[] = []) =>
      (await policyViolations(policy(p), pw, user, history)).map((v) => v.code);
    expect(await codes({}, 'short')).toEqual(['password_policy_length']);
    expect(await codes({}, 'long-enough')).toEqual([]);
    expect(await codes({ digits: 2, uppercase: 1 }, 'abcdefgh1')).toEqual(['password_policy_digits', 'password_policy_uppercase']);
    expect(await codes({ lowercase: 2, special_characters: 1 }, 'ABCDEFGH1')).toEqual(['password_policy_lowercase', 'password_policy_special_characters']);
    expect(await codes({ not_username: true }, 'xxANNxxxx', 'ann')).toEqual(['password_policy_not_username']);
    const old = await hashPassword('previous-one');
    expect(await codes({ old_passwords: 1 }, 'previous-one', 'ann', [old])).toEqual(['password_policy_old_password']);
    expect(await codes({ old_passwords: 0 }, 'previous-one', 'ann', [old])).toEqual([]);
    expect(await policyViolations(null, 'x', 'ann', [])).toEqual([]);
  });

  it('expires passwords only when the policy sets days', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    expect(passwordExpired(policy({ expire: 0 }), new Date('2020-01-01'), now)).toBe(false);
    expect(passwordExpired(policy({ expire: 30 }), new Date('2026-05-10'), now)).toBe(false);
    expect(passwordExpired(policy({ expire: 30 }), new Date('2026-04-01'), now)).toBe(true);
    expect(passwordExpired(policy({ expire: 30 }), null, now)).toBe(true);
  });
});
