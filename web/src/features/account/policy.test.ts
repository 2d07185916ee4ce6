import { describe, expect, it } from 'vitest';
import { policyChecks } from './policy';

const policy = { id: 'p', type: 'local', category: 'all', role: 'all', subtype: 'password', length: 8, digits: 1, uppercase: 1, lowercase: 1, special_characters: 1, not_username: true, expire: 0, old_passwords: 3 } as const;

describe('policy checklist', () => {
  it('marks each rule as the password is typed', () => {
    const met = (pw: string) => Object.fromEntries(policyChecks(policy, pw, 'sara').map((c) => [c.key, c.met]));
    expect(met('abc')).toEqual({ length: false, digits: false, uppercase: false, lowercase: true, special: false, not_username: true, old: null });
    expect(met('Abcdef1!')).toEqual({ length: true, digits: true, uppercase: true, lowercase: true, special: true, not_username: true, old: null });
    expect(met('Sara-1234')).toMatchObject({ not_username: false });
  });
});
