import { describe, expect, it } from 'vitest';
import { matchingRule, patternMatches, roleAbove, type ExternalIdentity } from './mapping';

const person = (groups: string[], attributes: Record<string, string[]> = {}): ExternalIdentity => ({ uid: 'u1', username: 'u1', name: '', email: '', photo: '', groups, attributes });

describe('mapping rules', () => {
  it('matches without case, with * for any run of characters, and nothing else as a pattern', () => {
    expect(patternMatches('cn=teachers,*', 'CN=Teachers,ou=groups,dc=school,dc=test')).toBe(true);
    expect(patternMatches('cn=teachers', 'cn=teachers,ou=groups')).toBe(false);
    expect(patternMatches('a.b', 'axb')).toBe(false);
    expect(patternMatches('(x)', '(X)')).toBe(true);
  });
  it('takes the first matching rule, from groups or any attribute', () => {
    const rules = [
      { attribute: 'groups', value: 'cn=teachers,*', group_id: 'g-t', role: 'advanced' as const },
      { attribute: 'eduPersonAffiliation', value: 'student', group_id: 'g-s', role: 'user' as const },
    ];
    expect(matchingRule(rules, person(['cn=teachers,ou=g']))).toBe(0);
    expect(matchingRule(rules, person([], { edupersonaffiliation: ['staff', 'Student'] }))).toBe(1);
    expect(matchingRule(rules, person(['cn=other']))).toBeNull();
  });
  it('orders roles', () => {
    expect(roleAbove('admin', 'advanced')).toBe(true);
    expect(roleAbove('user', 'advanced')).toBe(false);
    expect(roleAbove('advanced', 'advanced')).toBe(false);
  });
});
