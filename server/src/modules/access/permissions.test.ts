import { describe, expect, it } from 'vitest';
import type { Actor } from '../../auth/caller';
import { canManage, isAllowed, NOT_SHARED, reachesCategory } from './permissions';

const actor = (over: Partial<Actor> = {}): Actor => ({ id: 'u1', role: 'user', categoryId: 'c1', groupIds: ['g1'], ...over });
const item = (over: Partial<{ userId: string; categoryId: string; allowed: typeof NOT_SHARED }> = {}) => ({
  userId: 'owner', categoryId: 'c1', allowed: NOT_SHARED, ...over,
});

describe('permissions', () => {
  it('lets the owner, admins and managers of the same category manage, nobody else', () => {
    expect(canManage(actor({ id: 'owner' }), item())).toBe(true);
    expect(canManage(actor({ role: 'admin', categoryId: 'other' }), item())).toBe(true);
    expect(canManage(actor({ role: 'manager' }), item())).toBe(true);
    expect(canManage(actor({ role: 'manager', categoryId: 'c2' }), item())).toBe(false);
    expect(canManage(actor({ role: 'advanced' }), item())).toBe(false);
    expect(canManage(actor(), item())).toBe(false);
  });

  it('reaches a category beyond its own items: admins every one, managers their own, nobody else', () => {
    expect(reachesCategory(actor({ role: 'admin', categoryId: 'c2' }), 'c1')).toBe(true);
    expect(reachesCategory(actor({ role: 'manager' }), 'c1')).toBe(true);
    expect(reachesCategory(actor({ role: 'manager' }), 'c2')).toBe(false);
    expect(reachesCategory(actor({ role: 'advanced' }), 'c1')).toBe(false);
    expect(reachesCategory(actor(), 'c1')).toBe(false);
  });

  it('denies by default and reads each allowed criterion: false unused, [] everyone, list of ids', () => {
    expect(isAllowed(actor(), item())).toBe(false);
    expect(isAllowed(actor({ categoryId: 'c9' }), item({ allowed: { ...NOT_SHARED, roles: [] } }))).toBe(true);
    expect(isAllowed(actor(), item({ allowed: { ...NOT_SHARED, roles: ['advanced'] } }))).toBe(false);
    expect(isAllowed(actor({ role: 'advanced' }), item({ allowed: { ...NOT_SHARED, roles: ['advanced'] } }))).toBe(true);
    expect(isAllowed(actor(), item({ allowed: { ...NOT_SHARED, groups: ['g2', 'g1'] } }))).toBe(true);
    expect(isAllowed(actor({ groupIds: ['g3'] }), item({ allowed: { ...NOT_SHARED, groups: ['g2'] } }))).toBe(false);
    // [] for groups and users means everyone of the owner's category.
    expect(isAllowed(actor(), item({ allowed: { ...NOT_SHARED, users: [] } }))).toBe(true);
    expect(isAllowed(actor({ categoryId: 'c2' }), item({ allowed: { ...NOT_SHARED, users: [] } }))).toBe(false);
    expect(isAllowed(actor(), item({ allowed: { ...NOT_SHARED, users: ['u1'] } }))).toBe(true);
    expect(isAllowed(actor(), item({ allowed: { ...NOT_SHARED, categories: ['c1'] } }))).toBe(true);
  });
});
