import { z } from 'zod';
import { ZDesktop, ZDesktopImage, ZListPaging, zFieldList } from './desktops';
import { ZDomainDescription, ZDomainName, ZGuestChoice, ZGuestProperties, ZHardwareChoice, ZVgpusChoice } from './domains';
import { ZTemplateAllowed } from './templates';
import { ZAllowed } from './allowed';

/**
 * Deployments (spec core §3 "Deployment", §5 creation rules, §6 co-owners, §7 calls; reference §2.8):
 * one desktop per selected user, made from a template, managed together by the owner and co-owners.
 */

export const DEPLOYMENT_NAME_MAX = 50;
/** Deployment names follow the desktop name rules (4–50 letters, numbers, space , . - _). */
export const ZDeploymentName = ZDomainName;

/** Rights the owner may give the students on their desktop of the deployment. */
export const DEPLOYMENT_USER_PERMISSIONS = ['recreate'] as const;
export const ZDeploymentUserPermission = z.enum(DEPLOYMENT_USER_PERMISSIONS);

/** Who gets a desktop: groups and users ids (roles and categories are not used; false = criterion unused). */
export const ZDeploymentAllowed = ZAllowed.extend({
  roles: z.literal(false).default(false),
  categories: z.literal(false).default(false),
});
export type TDeploymentAllowed = z.input<typeof ZDeploymentAllowed>;

/** Hardware the deployment's desktops get: what a new desktop may choose, plus a GPU profile. */
export const ZDeploymentHardware = ZHardwareChoice.omit({ install: true, disk_size: true })
  .partial()
  .extend({ reservables: z.object({ vgpus: ZVgpusChoice }).optional() });
export type TDeploymentHardware = z.input<typeof ZDeploymentHardware>;

/** POST /deployments */
export const ZNewDeployment = z.object({
  id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/).optional(),
  name: ZDeploymentName,
  description: ZDomainDescription.default(''),
  template_id: z.string().min(1).max(64),
  visible: z.boolean().default(false),
  desktop_name: ZDomainName,
  allowed: ZDeploymentAllowed,
  hardware: ZDeploymentHardware.optional(),
  guest_properties: ZGuestChoice.optional(),
  image: z.object({ type: z.literal('stock'), id: z.string().max(64) }).optional(),
  user_permissions: z.array(ZDeploymentUserPermission).max(DEPLOYMENT_USER_PERMISSIONS.length).default([]),
});
export type TNewDeployment = z.input<typeof ZNewDeployment>;
export const ZDeploymentIdAnswer = z.object({ id: z.string() });

/** PUT /deployment/{id}: what changes for the deployment and its desktops (template and users stay). */
export const ZDeploymentUpdate = z.object({
  name: ZDeploymentName.optional(),
  description: ZDomainDescription.optional(),
  desktop_name: ZDomainName.optional(),
  hardware: ZDeploymentHardware.optional(),
  guest_properties: ZGuestChoice.optional(),
  image: z.object({ type: z.literal('stock'), id: z.string().max(64) }).optional(),
  user_permissions: z.array(ZDeploymentUserPermission).max(DEPLOYMENT_USER_PERMISSIONS.length).optional(),
});
export type TDeploymentUpdate = z.input<typeof ZDeploymentUpdate>;

/** PUT /deployment/users/{id}: the new users and groups (new users get desktops, removed ones lose theirs). */
export const ZDeploymentUsersUpdate = z.object({ allowed: ZDeploymentAllowed });
export type TDeploymentUsersUpdate = z.input<typeof ZDeploymentUsersUpdate>;

/** Progress of the creation job (creation or recreate), null when none runs. */
export const ZDeploymentCreation = z.object({ created: z.number(), failed: z.number(), total: z.number() });
export type TDeploymentCreation = z.infer<typeof ZDeploymentCreation>;

/** One item of GET /deployments, and the deployment_* / deployments_* events (reference §2.8). */
export const ZDeployment = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  /** owner id */
  user: z.string(),
  user_name: z.string().nullable(),
  co_owners: z.array(z.string()),
  allowed: ZTemplateAllowed,
  tag: z.string(),
  tag_name: z.string(),
  tag_visible: z.boolean(),
  user_permissions: z.array(z.string()),
  visible: z.boolean(),
  /** template NAME (as the reference sends it), template_id its id */
  template: z.string().nullable(),
  template_id: z.string(),
  desktop_name: z.string(),
  totalDesktops: z.number(),
  visibleDesktops: z.number(),
  startedDesktops: z.number(),
  creatingDesktops: z.number(),
  needs_booking: z.boolean(),
  next_booking_start: z.string().nullable(),
  next_booking_end: z.string().nullable(),
  booking_id: z.union([z.string(), z.literal(false)]),
  /** the caller's rights on it */
  is_owner: z.boolean(),
  can_delete: z.boolean(),
  can_change_owners: z.boolean(),
  creation: ZDeploymentCreation.nullable(),
  created: z.number(),
});
export type TDeployment = z.infer<typeof ZDeployment>;

/**
 * The videowall's handle on a started desktop's screen. Unlike the reference (which puts a whole
 * browser viewer here), it holds no secret: tickets are one-time and short-lived, and making one
 * resets the machine's VNC password, so each tile asks `ticket_url` (GET, the caller's session)
 * for a fresh ticket when it connects.
 */
export const ZDeploymentDesktopViewer = z.object({
  kind: z.literal('browser'),
  protocol: z.literal('vnc'),
  viewer: z.literal('/viewer/vnc'),
  /** API path (under /api/v3) that answers a ZViewerBrowser for this desktop */
  ticket_url: z.string(),
});
export type TDeploymentDesktopViewer = z.infer<typeof ZDeploymentDesktopViewer>;

/** A desktop of a deployment (GET /deployment/{id} desktops[], deploymentdesktop_* events). */
export const ZDeploymentDesktop = ZDesktop.extend({
  /** present when Started or WaitingIP with the browser-vnc viewer (the videowall shows it), else false */
  viewer: z.union([ZDeploymentDesktopViewer, z.literal(false)]),
  user_photo: z.string(),
  /** the deployment it belongs to */
  deployment_id: z.string(),
});
export type TDeploymentDesktop = z.infer<typeof ZDeploymentDesktop>;

/** GET /deployment/{id} */
export const ZDeploymentDetail = ZDeployment.extend({ desktops: z.array(ZDeploymentDesktop) });
export type TDeploymentDetail = z.infer<typeof ZDeploymentDetail>;
/** A deployment desktop's top-level fields: the choices of GET /deployment/{id}?fields=. */
export const DEPLOYMENT_DESKTOP_FIELDS = Object.keys(ZDeploymentDesktop.shape) as [keyof TDeploymentDesktop, ...(keyof TDeploymentDesktop)[]];
/**
 * GET /deployment/{id}: the deployment whole; its `desktops` (by name) optionally paged
 * (`page`/`per_page`, the reachable desktops' count in `x-total-count`) and with only the `fields` asked.
 */
export const ZDeploymentDetailQuery = ZListPaging.extend({ fields: zFieldList(DEPLOYMENT_DESKTOP_FIELDS).optional() });
export type TDeploymentDetailQuery = z.input<typeof ZDeploymentDetailQuery>;
export const ZDeploymentDetailAnswer = ZDeployment.extend({ desktops: z.array(ZDeploymentDesktop.partial()) });

export const ZNamedId = z.object({ id: z.string(), name: z.string() });
export type TNamedId = z.infer<typeof ZNamedId>;

/** GET /deployment/info/{id}: the create_dict merged with the template's hardware, for the edit form. */
export const ZDeploymentInfo = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  desktop_name: z.string(),
  template_id: z.string(),
  template: z.string().nullable(),
  visible: z.boolean(),
  allowed: z.object({
    roles: z.literal(false),
    categories: z.literal(false),
    groups: z.union([z.array(ZNamedId), z.literal(false)]),
    users: z.union([z.array(ZNamedId), z.literal(false)]),
  }),
  hardware: z.object({
    vcpus: z.number(),
    /** GB */
    memory: z.number(),
    boot_order: z.array(z.string()),
    disk_bus: z.string(),
    interfaces: z.array(z.object({ id: z.string(), mac: z.string() })),
    videos: z.array(z.string()),
    graphics: z.array(z.string()),
  }),
  reservables: z.object({ vgpus: z.array(z.string()).nullable() }),
  guest_properties: ZGuestProperties,
  image: ZDesktopImage,
  user_permissions: z.array(z.string()),
});
export type TDeploymentInfo = z.infer<typeof ZDeploymentInfo>;

/** PUT /deployments/visible/{id}: toggles visibility; when hiding, optionally force-stops the running desktops. */
export const ZDeploymentVisible = z.object({ stop_started_domains: z.boolean().default(false) });
export const ZDeploymentVisibleAnswer = z.object({ id: z.string(), visible: z.boolean() });

/** PUT /deployments/domain/visible/{desktop_id}: one desktop shown to (or hidden from) its user. */
export const ZDeploymentDesktopVisible = z.object({ visible: z.boolean() });

/** GET /deployments/directviewer_csv/{id}?reset=true */
export const ZDirectViewerCsvQuery = z.object({
  reset: z.union([z.boolean(), z.enum(['true', 'false', '1', '0', ''])]).optional()
    .transform((v) => v === true || v === 'true' || v === '1' || v === ''),
});
/** Columns of the CSV, in order. */
export const DIRECT_VIEWER_CSV_COLUMNS = ['username', 'name', 'email', 'group', 'category', 'desktop', 'url'] as const;

/**
 * PUT /groups_users/count: how many users the groups (and users) give, each counted once (empty
 * lists: none). With `allowed` instead, exactly the desktops a deployment for it would get
 * (an empty list there = everyone of the caller's scope, as creation reads it).
 */
export const ZGroupsUsersCount = z.object({
  groups: z.array(z.string().min(1).max(64)).max(5000).default([]),
  users: z.array(z.string().min(1).max(64)).max(5000).default([]),
  allowed: ZDeploymentAllowed.optional(),
});
export const ZGroupsUsersCountAnswer = z.object({ quantity: z.number() });

/** POST /deployments/new/check_quota: {} when a deployment for these users fits (else 428 with a quota code). */
export const ZDeploymentCheckQuota = z.object({ allowed: ZDeploymentAllowed });

/** GET /deployment/co-owners/{id} */
export const ZDeploymentCoOwners = z.object({ owner: ZNamedId, co_owners: z.array(ZNamedId) });
export type TDeploymentCoOwners = z.infer<typeof ZDeploymentCoOwners>;
/** PUT /deployment/co-owners/{id} (the owner, an admin or the category's manager only) */
export const ZDeploymentCoOwnersUpdate = z.object({ co_owners: z.array(z.string().min(1).max(64)).max(100) });

/**
 * GET /deployment/permissions/{id}: the rights the students have on their desktops, as the
 * original answers them (`["recreate"]`). The caller's own rights come with the deployment.
 */
export const ZDeploymentPermissions = z.array(z.string());

/** Live events `creating_desktops` (progress) and `end_creating_desktops` (done) to the owner and co-owners. */
export const ZCreatingDesktopsEvent = z.object({ deployment_id: z.string(), created: z.number(), failed: z.number(), total: z.number() });
export type TCreatingDesktopsEvent = z.infer<typeof ZCreatingDesktopsEvent>;
export type TDeploymentDeleteEvent = { id: string };
export type TDeploymentDesktopDeleteEvent = { id: string; deployment_id: string };

/* ----------------------------------------------------------------------------------------------- */

/** Rules the form and the server share (spec core §5). */
/** At least one group or user must be chosen (an empty list = everyone of the owner's scope). */
export function deploymentHasUsers(allowed: { groups?: string[] | false; users?: string[] | false }) {
  return Array.isArray(allowed.groups) || Array.isArray(allowed.users);
}

/** The videowall shows browser-vnc screens; it does not work when the desktops have only RDP viewers. */
export const VIDEOWALL_VIEWER = 'browser_vnc';
export const videowallAvailable = (viewers: readonly string[]) => viewers.includes(VIDEOWALL_VIEWER);
