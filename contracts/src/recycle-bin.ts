import { z } from 'zod';

/** What an entry holds (spec 001 §3; `bulk` has a special label). */
export const RECYCLE_BIN_ITEM_TYPES = ['desktop', 'template', 'deployment', 'user', 'group', 'category', 'bulk'] as const;
export const RECYCLE_BIN_STATUSES = ['recycled', 'restored', 'deleting', 'deleted'] as const;
export type TRecycleBinStatus = (typeof RECYCLE_BIN_STATUSES)[number];
/** A live update with one of these statuses removes the entry from the list (spec 001 §4). */
export const RECYCLE_BIN_GONE_STATUSES: readonly string[] = ['restored', 'deleting', 'deleted'];

export const ZRecycleBinLog = z.object({
  time: z.number(),
  action: z.string(),
  agent_type: z.enum(['user', 'system']),
  agent_id: z.string().nullable(),
  agent_name: z.string(),
});
export type TRecycleBinLog = z.infer<typeof ZRecycleBinLog>;

const entryFields = {
  id: z.string(),
  status: z.string(),
  /** epoch seconds when it went to the bin */
  accessed: z.number(),
  item_type: z.string(),
  item_name: z.string(),
  /** bytes of its disks */
  size: z.number(),
  agent_type: z.enum(['user', 'system']),
  agent_id: z.string().nullable(),
  agent_name: z.string(),
  agent_role: z.string().nullable(),
  agent_category_id: z.string().nullable(),
  agent_category_name: z.string().nullable(),
  agent_group_id: z.string().nullable(),
  agent_group_name: z.string().nullable(),
  owner_id: z.string(),
  owner_name: z.string(),
  owner_role: z.string().nullable(),
  owner_category_id: z.string(),
  owner_category_name: z.string(),
  owner_group_id: z.string(),
  owner_group_name: z.string(),
  /** epoch seconds when the retention ends and the purge deletes it (null: kept until deleted by hand) */
  expires: z.number().nullable(),
};

/** An entry of GET /recycle_bin/item_count/user: the arrays replaced by counts, and the last log (reference §2.12). */
export const ZRecycleBinItem = z.object({
  ...entryFields,
  desktops: z.number(),
  templates: z.number(),
  deployments: z.number(),
  storages: z.number(),
  users: z.number(),
  groups: z.number(),
  categories: z.number(),
  last: ZRecycleBinLog,
});
export type TRecycleBinItem = z.infer<typeof ZRecycleBinItem>;

const ZNamed = z.object({ id: z.string(), name: z.string() });

/** A desktop or template kept in an entry. */
export const ZRecycleBinDomain = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: z.string(),
  status: z.string(),
  accessed: z.number().nullable(),
  category: ZNamed,
  group: ZNamed,
  user: z.string(),
  username: z.string(),
  template: z.string().nullable(),
  persistent: z.boolean(),
});
export type TRecycleBinDomain = z.infer<typeof ZRecycleBinDomain>;

/**
 * A disk kept in an entry, shaped as the original answers it (reference §2.12): `user` is the owner's
 * name, `domains` the names of the desktops and templates on it, and the sizes (bytes) are under
 * `qemu-img-info`, read from the file when it is there.
 */
export const ZRecycleBinStorage = z.object({
  id: z.string(),
  directory_path: z.string(),
  status: z.string(),
  type: z.string(),
  format: z.string(),
  parent: z.string().nullable(),
  user: z.string(),
  user_id: z.string(),
  category: ZNamed,
  domains: z.array(z.string()),
  'qemu-img-info': z.object({ 'virtual-size': z.number(), 'actual-size': z.number() }),
});
export type TRecycleBinStorage = z.infer<typeof ZRecycleBinStorage>;

/** GET /recycle_bin/{id}: the whole entry. */
export const ZRecycleBinDetail = z.object({
  ...entryFields,
  desktops: z.array(ZRecycleBinDomain),
  templates: z.array(ZRecycleBinDomain),
  deployments: z.array(z.record(z.string(), z.unknown())),
  storages: z.array(ZRecycleBinStorage),
  logs: z.array(ZRecycleBinLog),
});
export type TRecycleBinDetail = z.infer<typeof ZRecycleBinDetail>;

/** update_recycle_bin and delete_recycle_bin carry only this. */
export const ZRecycleBinStatusEvent = z.object({ id: z.string(), status: z.string() });
export type TRecycleBinStatusEvent = z.infer<typeof ZRecycleBinStatusEvent>;

/** GET /recycle-bin/user/cutoff-time (the key's typo is the original system's). */
export const ZRecycleBinCutoff = z.object({ recycle_bin_cuttoff_time: z.number() });
export const ZRecycleBinRestoreAnswer = z.object({ recycle_bin_ids: z.array(z.string()) });
