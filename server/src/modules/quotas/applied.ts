import { eq, inArray, type AnyColumn, type SQL } from 'drizzle-orm';
import { QUOTA_FIELDS, type QuotaField, type TAppliedQuota, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';

/** The applied quota is the first set of user, group, category (reference §6.1). */
export async function appliedQuota(db: Db, user: UserRow): Promise<TAppliedQuota> {
  if (user.quota) return { quota: user.quota, restriction_applied: 'user_quota' };
  const [group] = await db.select({ quota: schema.groups.quota }).from(schema.groups).where(eq(schema.groups.id, user.groupId));
  if (group?.quota) return { quota: group.quota, restriction_applied: 'group_quota' };
  const [cat] = await db
    .select({ quota: schema.categories.quota })
    .from(schema.categories)
    .where(eq(schema.categories.id, user.categoryId));
  if (cat?.quota) return { quota: cat.quota, restriction_applied: 'category_quota' };
  return { quota: false, restriction_applied: 'user_quota' };
}

export const emptyUsage = (): TQuota => Object.fromEntries(QUOTA_FIELDS.map((f) => [f, 0])) as TQuota;

/** Whose consumption: one user, or every member of a group or of a category together. */
export type UsageScope = { userId: string } | { groupId: string } | { categoryId: string };

/**
 * "Owned by someone in the scope" on an owner column: the user, or a sub-select of the members,
 * so that a group's or a category's usage is one aggregate query per area, not one per member.
 */
export function ownedIn(db: Db, owner: AnyColumn, scope: UsageScope): SQL {
  if ('userId' in scope) return eq(owner, scope.userId);
  const members = db
    .select({ id: schema.users.id })
    .from(schema.users)
    .where('groupId' in scope ? eq(schema.users.groupId, scope.groupId) : eq(schema.users.categoryId, scope.categoryId));
  return inArray(owner, members);
}

/**
 * What a user (or a group's or category's members together) consume. Each area that owns
 * consumable things (desktops, templates, media, storage, deployments) registers a contributor
 * that answers with aggregate queries; the sum is the `used` of the profile.
 */
export type UsageContributor = (db: Db, scope: UsageScope) => Promise<Partial<TQuota>>;
const contributors: { count: UsageContributor; fields: readonly QuotaField[] }[] = [];
/** An area's contributor and the fields it counts (a check of some fields asks only the areas that count them). */
export const registerUsageContributor = (count: UsageContributor, fields: readonly QuotaField[]) => void contributors.push({ count, fields });

/** The usage of a scope; with `fields`, only those are counted (the others stay 0). */
export async function usageIn(db: Db, scope: UsageScope, fields?: readonly QuotaField[]): Promise<TQuota> {
  const used = emptyUsage();
  const asked = fields ? contributors.filter((c) => c.fields.some((f) => fields.includes(f))) : contributors;
  for (const part of await Promise.all(asked.map((c) => c.count(db, scope)))) {
    for (const [k, v] of Object.entries(part)) used[k as keyof TQuota] += v ?? 0;
  }
  return used;
}

export const usageOf = (db: Db, userId: string, fields?: readonly QuotaField[]): Promise<TQuota> => usageIn(db, { userId }, fields);
