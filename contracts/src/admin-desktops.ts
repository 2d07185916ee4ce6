import { z } from 'zod';
import { adminList, ZAdminListQuery } from './admin-people';
import { DOMAIN_STATUSES, ZViewer } from './desktops';

/**
 * The administration console's desktops, templates, media and deployments (issue 13), across
 * owners: lists answer `{items, total}` with page, per_page, sort, order, search and filters.
 */
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');
const id = z.string().min(1).max(64);

/** The one hypervisor of this build (the engine's local host); running desktops run there. */
export const LOCAL_HYPERVISOR = 'local';

// ------------------------------------------------------------------ desktops
export const ADMIN_DESKTOP_SORTS = ['name', 'owner', 'category', 'group', 'status', 'started', 'accessed', 'memory', 'vcpus', 'created'] as const;
export const ZAdminDesktopsQuery = ZAdminListQuery.extend({
  sort: z.enum(ADMIN_DESKTOP_SORTS).optional(),
  /** The stored status (Started, Stopped, Failed…). */
  state: z.enum(DOMAIN_STATUSES).optional(),
  category: id.optional(),
  group: id.optional(),
  /** The owner's user id. */
  owner: id.optional(),
  template: id.optional(),
  hypervisor: z.string().min(1).max(64).optional(),
  /** A deployment's id (its desktops). */
  deployment: id.optional(),
  persistent: flag.optional(),
});
export type TAdminDesktopsQuery = z.input<typeof ZAdminDesktopsQuery>;

export const ZAdminDesktop = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.string(),
  /** While shutting down: when the server force-stops it (ISO 8601); else null. */
  force_stop_at: z.string().nullable(),
  persistent: z.boolean(),
  user: z.string(),
  username: z.string(),
  user_name: z.string(),
  category: z.string(),
  category_name: z.string(),
  group: z.string(),
  group_name: z.string(),
  template: z.string().nullable(),
  template_name: z.string().nullable(),
  deployment: z.string().nullable(),
  deployment_name: z.string().nullable(),
  /** Where it runs now (null when it is not running). */
  hypervisor: z.string().nullable(),
  memory_mb: z.number(),
  vcpus: z.number(),
  /** Bytes: the disks' capacity and what their files take. */
  disk_size: z.number(),
  disk_used: z.number(),
  guest_ip: z.string().nullable(),
  viewers: z.array(ZViewer),
  /** When it was started (its uptime runs from there), null when stopped. */
  started: z.string().nullable(),
  accessed: z.string().nullable(),
  created: z.string(),
});
export type TAdminDesktop = z.infer<typeof ZAdminDesktop>;
export const ZAdminDesktopList = adminList(ZAdminDesktop);
export type TAdminDesktopList = z.infer<typeof ZAdminDesktopList>;

export const ADMIN_DESKTOP_ACTIONS = ['start', 'stop', 'force_stop', 'reset', 'delete', 'delete_permanent'] as const;
export const ZAdminDesktopAction = z.enum(ADMIN_DESKTOP_ACTIONS);
export type TAdminDesktopAction = z.infer<typeof ZAdminDesktopAction>;
export const ZAdminIds = z.object({ ids: z.array(id).min(1).max(1000) }).strict();
export type TAdminIds = z.infer<typeof ZAdminIds>;

/** One answer per id: ok with the new status, or the refusal's code. */
export const ZAdminActionResult = z.object({
  id: z.string(),
  ok: z.boolean(),
  status: z.string().optional(),
  description_code: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type TAdminActionResult = z.infer<typeof ZAdminActionResult>;
export const ZAdminActionAnswer = z.object({ done: z.number().int(), failed: z.number().int(), results: z.array(ZAdminActionResult) });
export type TAdminActionAnswer = z.infer<typeof ZAdminActionAnswer>;

/** Live to a desktop's owner: someone of support opened its screen. */
export const ZSupportViewerEvent = z.object({ desktop_id: z.string(), desktop_name: z.string(), by: z.string(), viewer: ZViewer });
export type TSupportViewerEvent = z.infer<typeof ZSupportViewerEvent>;

// ------------------------------------------------------------------ templates, media, deployments
const ownedItem = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  user: z.string(),
  username: z.string(),
  user_name: z.string(),
  category: z.string(),
  category_name: z.string(),
  group: z.string(),
  group_name: z.string(),
  created: z.string(),
};
const ownedQuery = {
  category: id.optional(),
  owner: id.optional(),
};

export const ZAdminTemplatesQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'owner', 'category', 'status', 'enabled', 'size', 'created']).optional(),
  ...ownedQuery,
  enabled: flag.optional(),
  /** Shared with anyone (any criterion of `allowed` in use). */
  shared: flag.optional(),
});
export type TAdminTemplatesQuery = z.input<typeof ZAdminTemplatesQuery>;
export const ZAdminTemplate = z.object({
  ...ownedItem,
  status: z.string(),
  enabled: z.boolean(),
  shared: z.boolean(),
  /** Bytes of its own disks' files. */
  size: z.number(),
  /** Desktops and templates made from it (direct). */
  derivatives: z.number().int(),
});
export type TAdminTemplate = z.infer<typeof ZAdminTemplate>;
export const ZAdminTemplateList = adminList(ZAdminTemplate);
export const ZAdminTemplateUpdate = z.object({ enabled: z.boolean(), owner_id: id }).partial().strict();
export type TAdminTemplateUpdate = z.infer<typeof ZAdminTemplateUpdate>;

export const ZAdminMediaQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'owner', 'category', 'status', 'kind', 'size', 'created']).optional(),
  ...ownedQuery,
  status: z.string().max(40).optional(),
  kind: z.enum(['iso', 'floppy']).optional(),
  shared: flag.optional(),
});
export type TAdminMediaQuery = z.input<typeof ZAdminMediaQuery>;
export const ZAdminMedia = z.object({
  ...ownedItem,
  kind: z.enum(['iso', 'floppy']),
  status: z.string(),
  shared: z.boolean(),
  size: z.number(),
  /** Desktops it is attached to. */
  desktops: z.number().int(),
});
export type TAdminMedia = z.infer<typeof ZAdminMedia>;
export const ZAdminMediaList = adminList(ZAdminMedia);
export const ZAdminMediaUpdate = z.object({ owner_id: id }).strict();
export type TAdminMediaUpdate = z.infer<typeof ZAdminMediaUpdate>;

export const ZAdminDeploymentsQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'owner', 'category', 'visible', 'desktops', 'created']).optional(),
  ...ownedQuery,
  visible: flag.optional(),
});
export type TAdminDeploymentsQuery = z.input<typeof ZAdminDeploymentsQuery>;
export const ZAdminDeployment = z.object({
  ...ownedItem,
  template: z.string(),
  template_name: z.string().nullable(),
  visible: z.boolean(),
  desktops: z.number().int(),
  started: z.number().int(),
  /** Bytes of its desktops' own disks. */
  size: z.number(),
});
export type TAdminDeployment = z.infer<typeof ZAdminDeployment>;
export const ZAdminDeploymentList = adminList(ZAdminDeployment);
/** `visible` shows or hides it to its students (hiding stops the started desktops). */
export const ZAdminDeploymentUpdate = z.object({ visible: z.boolean(), owner_id: id }).partial().strict();
export type TAdminDeploymentUpdate = z.infer<typeof ZAdminDeploymentUpdate>;
