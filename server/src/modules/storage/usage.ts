import { and, inArray, sql } from 'drizzle-orm';
import { GB, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { ownedIn, type UsageScope } from '../quotas/applied';

/**
 * Disks that take room on the host and count against the storage quota: every disk of the user
 * (desktop, temporary, template) that is ready, under an operation, or waiting in the recycle bin
 * (reference §2.11 and §6.3: recycled storage still counts).
 */
const COUNTED = ['ready', 'maintenance', 'creating', 'recycled'] as const;

/** The storage part of a user's `used`: storage_size and its share of total_size, in GB (six decimals: a fresh overlay is a few KB). */
export async function storageUsage(db: Db, scope: UsageScope): Promise<Partial<TQuota>> {
  const [row] = await db
    .select({ actual: sql<string>`coalesce(sum(${schema.storage.actualSize}), 0)` })
    .from(schema.storage)
    .where(and(ownedIn(db, schema.storage.userId, scope), inArray(schema.storage.status, [...COUNTED])));
  const gb = Math.round((Number(row?.actual ?? 0) / GB) * 1e6) / 1e6;
  return { storage_size: gb, total_size: gb };
}
