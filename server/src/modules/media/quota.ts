import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { precondition } from '../../http/errors';
import { appliedQuota, constantList, usageIn, usageOf, usagePart } from '../quotas/applied';
import { quotaLevels } from '../../auth/caller';

export const GB = 1024 ** 3;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** Media that do not hold a place: failed, being deleted or deleted. */
const NOT_COUNTED = ['deleted', 'Deleting', 'DownloadFailed', 'DownloadFailedInvalidFormat', 'FailedDeleted'];

/**
 * The media part of a user's `used`: `isos` counts media downloaded or on their way, and
 * their size (the announced size while downloading) is `media_size` and part of `total_size`, in GB.
 */
export const mediaUsage = usagePart<{ isos: number; bytes: number }>({
  counts: ['isos', 'media_size', 'total_size'],
  sql: (owned) => sql`select count(*) as isos, coalesce(sum(${schema.media.size}), 0) as bytes from ${schema.media}
    where ${owned(schema.media.userId)} and ${schema.media.status} not in (${constantList(NOT_COUNTED)})`,
  read: (r) => {
    const gb = round3(Number(r.bytes ?? 0) / GB);
    return { isos: Number(r.isos ?? 0), media_size: gb, total_size: gb };
  },
});

/** What a new medium is checked against. */
const MEDIA_FIELDS = ['isos', 'total_size'] as const;

/**
 * One more media of `sizeBytes` (0 when unknown) must fit the applied quota (isos, total_size)
 * and the limits of the owner's group and category (reference §6.1); 428 otherwise.
 */
export async function checkNewMediaQuota(db: Db, user: UserRow, sizeBytes: number) {
  const sizeGb = sizeBytes / GB;
  const { quota } = await appliedQuota(db, user);
  if (quota) {
    const used = await usageOf(db, user.id, MEDIA_FIELDS);
    if (used.isos + 1 > quota.isos) {
      throw precondition('media_new_user_quota_exceeded', `${user.username} quota exceeded for new media`, { isos: quota.isos });
    }
    if (used.total_size + sizeGb > quota.total_size) {
      throw precondition('total_size_quota_exceeded', `${user.username} quota exceeded for storage size`, { total_size: quota.total_size });
    }
  }
  const { group, category: cat } = await quotaLevels(db, user);
  if (group?.limits) {
    const used = await usageIn(db, { groupId: user.groupId }, MEDIA_FIELDS);
    if (used.isos + 1 > group.limits.isos) throw precondition('media_new_group_limit_exceeded', 'Group limit exceeded for new media', { isos: group.limits.isos });
    if (used.total_size + sizeGb > group.limits.total_size) {
      throw precondition('group_total_size_limit_exceeded', 'Group limit exceeded for storage size', { total_size: group.limits.total_size });
    }
  }
  if (cat?.limits) {
    const used = await usageIn(db, { categoryId: user.categoryId }, MEDIA_FIELDS);
    if (used.isos + 1 > cat.limits.isos) throw precondition('media_new_category_limit_exceeded', 'Category limit exceeded for new media', { isos: cat.limits.isos });
    if (used.total_size + sizeGb > cat.limits.total_size) {
      throw precondition('category_total_size_limit_exceeded', 'Category limit exceeded for storage size', { total_size: cat.limits.total_size });
    }
  }
}

/**
 * Bytes a download may still write before the owner's total_size quota is full (the media's own
 * announced size excluded); null when no quota applies.
 */
export async function downloadAllowance(db: Db, ownerId: string, announcedBytes: number): Promise<number | null> {
  const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, ownerId));
  if (!owner) return null;
  const { quota } = await appliedQuota(db, owner);
  if (!quota) return null;
  const used = await usageOf(db, ownerId);
  const usedWithoutThis = used.total_size * GB - announcedBytes;
  return Math.max(0, quota.total_size * GB - usedWithoutThis);
}
