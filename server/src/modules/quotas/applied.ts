import { eq } from 'drizzle-orm';
import { QUOTA_FIELDS, type TAppliedQuota, type TQuota } from '@vdi/contracts';
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

/**
 * What a user consumes. Each area that owns consumable things (desktops, templates, media,
 * storage, deployments) registers a contributor; the sum is the `used` of the profile.
 */
export type UsageContributor = (db: Db, userId: string) => Promise<Partial<TQuota>>;
const contributors: UsageContributor[] = [];
export const registerUsageContributor = (c: UsageContributor) => void contributors.push(c);

export async function usageOf(db: Db, userId: string): Promise<TQuota> {
  const used = emptyUsage();
  for (const part of await Promise.all(contributors.map((c) => c(db, userId)))) {
    for (const [k, v] of Object.entries(part)) used[k as keyof TQuota] += v ?? 0;
  }
  return used;
}
