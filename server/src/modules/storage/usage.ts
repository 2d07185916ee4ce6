import { sql } from 'drizzle-orm';
import { GB } from '@vdi/contracts';
import { schema } from '../../db';
import { constantList, usagePart } from '../quotas/applied';

/**
 * Disks that take room on the host and count against the storage quota: every disk of the user
 * (desktop, temporary, template) that is ready, under an operation, or waiting in the recycle bin
 * (reference §2.11 and §6.3: recycled storage still counts).
 */
const COUNTED = ['ready', 'maintenance', 'creating', 'recycled'] as const;

/** The storage part of `used`: storage_size and its share of total_size, in GB (six decimals: a fresh overlay is a few KB). */
export const storageUsage = usagePart<{ bytes: number }>({
  counts: ['storage_size', 'total_size'],
  sql: (owned) => sql`select coalesce(sum(${schema.storage.actualSize}), 0) as bytes from ${schema.storage}
    where ${owned(schema.storage.userId)} and ${schema.storage.status} in (${constantList(COUNTED)})`,
  read: (r) => {
    const gb = Math.round((Number(r.bytes ?? 0) / GB) * 1e6) / 1e6;
    return { storage_size: gb, total_size: gb };
  },
});
