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

// ------------------------------------------------------------------ one desktop's page
/**
 * What the desktop lifecycle records of a desktop (its history's own facts; server/src/modules/desktops/events.ts):
 * a start asked, its machine up, a start that failed (`reason`: a description code), a stop or force stop asked
 * (by a person, or the system with its `reason`), a reset, the machine gone (`seconds` it ran), a viewer opened (`protocol`).
 */
export const DESKTOP_EVENT_KINDS = ['start', 'started', 'start_failed', 'stop', 'force_stop', 'stopped', 'reset', 'viewer'] as const;
export type TDesktopEventKind = (typeof DESKTOP_EVENT_KINDS)[number];
/** Why the system (no person) started or stopped a desktop, or why its machine went. */
export const DESKTOP_EVENT_REASONS = ['auto_shutdown', 'booking_end', 'plan_end', 'shutdown_timeout', 'hypervisor_down', 'server_restart', 'machine_gone', 'guest_shutdown', 'crashed', 'direct_link', 'pool_prepare'] as const;

/** How many lines of a desktop's history one page holds. */
export const DESKTOP_HISTORY_PAGE = 200;

/** One line of a desktop's history: a recorded event, its creation, or an audit entry about it (`action`). */
export const ZDesktopHistoryItem = z.object({
  at: z.string(),
  kind: z.union([z.enum(DESKTOP_EVENT_KINDS), z.literal('created'), z.literal('audit')]),
  /** The audit action (kind `audit`). */
  action: z.string().nullable(),
  /** Who did it (null: the system). */
  actor: z.string().nullable(),
  hypervisor: z.string().nullable(),
  /** A failure's or a system stop's reason: a description code or one of DESKTOP_EVENT_REASONS. */
  reason: z.string().nullable(),
  /** How long it ran (kind `stopped`). */
  seconds: z.number().nullable(),
  /** The viewer's protocol (kind `viewer`). */
  protocol: z.string().nullable(),
});
export type TDesktopHistoryItem = z.infer<typeof ZDesktopHistoryItem>;
/** A page of a desktop's history: the newest, or with `cursor` (a page's `next_cursor`) the ones older than that page. */
export const ZDesktopHistoryQuery = z.object({ cursor: z.string().min(1).max(200).optional() }).strict();
export type TDesktopHistoryQuery = z.infer<typeof ZDesktopHistoryQuery>;
export const ZDesktopHistory = z.object({
  /** Newest first, at most DESKTOP_HISTORY_PAGE a page. */
  items: z.array(ZDesktopHistoryItem),
  /** The cursor of the next (older) page; null: this page ends the history (its last item is the creation). */
  next_cursor: z.string().nullable(),
  /** Summed over the whole history (every page): how many starts, failures, the time it ran, viewers by protocol. */
  summary: z.object({ starts: z.number().int(), failures: z.number().int(), seconds: z.number(), viewers: z.record(z.string(), z.number().int()) }),
});
export type TDesktopHistory = z.infer<typeof ZDesktopHistory>;

export const ZAdminDesktopDetail = ZAdminDesktop.extend({
  current_action: z.string().nullable(),
  hardware: z.object({
    boot_order: z.array(z.string()),
    disk_bus: z.string(),
    videos: z.array(z.string()),
    interfaces: z.array(z.string()),
    isos: z.number().int(),
    floppies: z.number().int(),
    vgpus: z.array(z.string()),
  }),
  disks: z.array(z.object({ id: z.string(), format: z.string(), status: z.string(), size: z.number(), used: z.number(), hypervisor: z.string().nullable() })),
  bookings: z.array(z.object({ id: z.string(), title: z.string(), start: z.string(), end: z.string(), units: z.number().int() })),
  /** The booking in progress (its end stops the desktop). */
  scheduled_shutdown: z.string().nullable(),
  /** The deployment's owner (when it belongs to one). */
  deployment_owner: z.string().nullable(),
});
export type TAdminDesktopDetail = z.infer<typeof ZAdminDesktopDetail>;
/** A stopped desktop given to another person (its disk goes with it); not a deployment's. */
export const ZAdminDesktopUpdate = z.object({ owner_id: id }).strict();
export type TAdminDesktopUpdate = z.infer<typeof ZAdminDesktopUpdate>;

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
