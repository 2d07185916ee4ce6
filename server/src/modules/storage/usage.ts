import { and, eq, inArray } from 'drizzle-orm';
import { GB, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';

/**
 * Disks that take room on the host and count against the storage quota: every disk of the user
 * (desktop, temporary, template) that is ready, under an operation, or waiting in the recycle bin
 * (reference §2.11 and §6.3: recycled storage still counts).
 */
const COUNTED = ['ready', 'maintenance', 'creating', 'recycled'] as const;

/** The storage part of a user's `used`: storage_size and its share of total_size, in GB (six decimals: a fresh overlay is a few KB). */
export async function storageUsage(db: Db, userId: string): Promise<Partial<TQuota>> {
  const rows = await db
    .select({ actual: schema.storage.actualSize })
    .from(schema.storage)
    .where(and(eq(schema.storage.userId, userId), inArray(schema.storage.status, [...COUNTED])));
  const gb = Math.round((rows.reduce((s, r) => s + r.actual, 0) / GB) * 1e6) / 1e6;
  return { storage_size: gb, total_size: gb };
}
