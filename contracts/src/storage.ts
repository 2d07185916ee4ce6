import { z } from 'zod';

/** Bytes in a GB as the spec counts them (bytes / 1024³). */
export const GB = 1024 ** 3;

/** Sizes are shown in GB, rounded (spec 001 §9): whole GB from 10 GB up, two decimals below (a fresh overlay is a few MB). */
export function bytesToGb(bytes: number): number {
  const gb = bytes / GB;
  return gb >= 10 ? Math.round(gb) : Math.round(gb * 100) / 100;
}

/** Disk operation priorities (reference §2.14: the spec's "medium" is `default`); non-admins always get `low`. */
export const STORAGE_PRIORITIES = ['low', 'default', 'high'] as const;
export const ZStoragePriority = z.enum(STORAGE_PRIORITIES);
export type TStoragePriority = z.infer<typeof ZStoragePriority>;

/** Storage statuses as stored: `creating` until its file is made, `maintenance` while an operation
 *  (disk increase) runs on it, `failed` when the startup sweep found its file gone. */
export const STORAGE_STATUSES = ['ready', 'creating', 'maintenance', 'recycled', 'deleted', 'failed'] as const;
export const STORAGE_OPERATIONS = ['increase'] as const;

/** An operation running on a disk: who started it (only they may cancel it) and how far it is. */
export const ZStorageOperation = z.object({
  job_id: z.string(),
  kind: z.enum(STORAGE_OPERATIONS),
  user_id: z.string(),
  progress: z.number(),
  priority: ZStoragePriority,
});
export type TStorageOperation = z.infer<typeof ZStorageOperation>;

/** A disk as GET /storage/ready lists it (reference §2.14, plus the spec's parent, format, status). */
export const ZStorageDisk = z.object({
  id: z.string(),
  user_id: z.string(),
  user_name: z.string().nullable(),
  category: z.string().nullable(),
  /** desktop or template */
  type: z.string(),
  domains: z.array(z.object({ id: z.string(), name: z.string(), kind: z.string(), status: z.string() })),
  /** bytes used on the host (qemu-img actual-size) */
  actual_size: z.number(),
  /** bytes the guest sees (qemu-img virtual-size) */
  virtual_size: z.number(),
  /** epoch seconds of the last use (a desktop on it started, or the disk changed) */
  last: z.number().nullable(),
  status: z.string(),
  parent: z.string().nullable(),
  format: z.string(),
  /** relative to the storage folder */
  path: z.string(),
  operation: ZStorageOperation.nullable(),
});
export type TStorageDisk = z.infer<typeof ZStorageDisk>;

export const ZStorageIncreaseParams = z.object({
  id: z.string().min(1).max(64),
  priority: ZStoragePriority,
  /** GB to add to the current size (reference: `increase/<int:increment>`) */
  increment: z.coerce.number().int(),
});
export const ZStorageTaskAnswer = z.object({ task_id: z.string() });

/** The `storage` live event (reference §3: {id, status}), with the operation's progress and outcome. */
export const ZStorageEvent = z.object({
  id: z.string(),
  status: z.string(),
  operation: z.enum(STORAGE_OPERATIONS),
  job_id: z.string(),
  user_id: z.string(),
  progress: z.number(),
  outcome: z.enum(['running', 'done', 'failed', 'aborted']),
  actual_size: z.number(),
  virtual_size: z.number(),
  /** why it failed (a description code), when it did */
  error: z.string().nullable(),
});
export type TStorageEvent = z.infer<typeof ZStorageEvent>;

/** GET /admin/storage_pool/availability: the storage folder's file system, in bytes. */
export const ZStoragePoolAvailability = z.object({
  id: z.string(),
  available: z.boolean(),
  free: z.number(),
  total: z.number(),
  used: z.number(),
});
export type TStoragePoolAvailability = z.infer<typeof ZStoragePoolAvailability>;

/** GET /{itemType}/new/check_quota: {} when one more fits, else the 428 quota error. */
export const CHECK_QUOTA_ITEM_TYPES = ['desktops', 'templates', 'media', 'deployments'] as const;
export type TCheckQuotaItemType = (typeof CHECK_QUOTA_ITEM_TYPES)[number];
