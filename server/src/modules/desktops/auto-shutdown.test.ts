import { describe, expect, it } from 'vitest';
import { ruleOf, type PolicyOwner } from './auto-shutdown';

type Row = Parameters<typeof ruleOf>[1][number];
const policy = (id: string, kind: Row['kind'], targetId: string, over: Partial<Row> = {}): Row => ({
  id, name: id, kind, targetId, categoryId: kind === 'role' ? null : 'default', maxTime: null, idleTime: null, warnings: [5, 1], enabled: true, createdAt: new Date(), ...over,
});
const owner: PolicyOwner = { id: 'u1', roleId: 'user', categoryId: 'default', groupIds: ['g1', 'g2'] };

describe('the auto-shutdown policy of an owner', () => {
  it('is the most specific level that names them: user, then groups, then category, then role', () => {
    const all = [
      policy('role', 'role', 'user', { maxTime: 600 }),
      policy('cat', 'category', 'default', { maxTime: 300 }),
      policy('g1', 'group', 'g1', { idleTime: 30, warnings: [10] }),
      policy('g2', 'group', 'g2', { idleTime: 20, maxTime: 240 }),
      policy('me', 'user', 'u1', { maxTime: 900 }),
    ];
    expect(ruleOf(owner, all)).toEqual({ maxTime: 900, idleTime: null, warnings: [5, 1], policyIds: ['me'] });
    // Without the user's own: both groups, the shortest times and every warning.
    expect(ruleOf(owner, all.filter((p) => p.id !== 'me'))).toEqual({ maxTime: 240, idleTime: 20, warnings: [10, 5, 1], policyIds: ['g1', 'g2'] });
    expect(ruleOf(owner, all.filter((p) => p.kind === 'category' || p.kind === 'role'))?.policyIds).toEqual(['cat']);
    expect(ruleOf(owner, all.filter((p) => p.kind === 'role'))?.maxTime).toBe(600);
  });
  it('skips disabled policies and those of others', () => {
    expect(ruleOf(owner, [policy('off', 'user', 'u1', { maxTime: 5, enabled: false }), policy('other', 'group', 'g9', { maxTime: 5 })])).toBeNull();
  });
});
