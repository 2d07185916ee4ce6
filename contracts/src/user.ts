import { ZLoginProvider } from './identity';
import { z } from 'zod';
import { ZAppliedQuota, ZQuota, ZRestrictionApplied } from './quota';
import { ZRole } from './roles';

export const ZUser = z.object({
  id: z.string(),
  uid: z.string(),
  username: z.string(),
  name: z.string(),
  provider: z.string(),
  category: z.string(),
  group: z.string(),
  role: ZRole,
  secondary_groups: z.array(z.string()),
  email: z.string(),
  email_verified: z.number().nullable(),
  /** An address asked for in the profile and not verified yet (`email` stays until its link is followed). */
  email_pending: z.string().nullable(),
  photo: z.string(),
  lang: z.string().nullable(),
  active: z.boolean(),
  accessed: z.number().nullable(),
  disclaimer_acknowledged: z.boolean(),
  password_last_updated: z.number(),
  role_name: z.string(),
  category_name: z.string(),
  group_name: z.string(),
  user_name: z.string(),
  secondary_groups_names: z.array(z.string()),
  quota: z.union([ZQuota, z.literal(false)]),
  restriction_applied: ZRestrictionApplied,
  used: ZQuota,
  /** The quota at each level (`false`: none set there); `restriction_applied` names the one that applies. */
  quotas: z.object({
    user: z.union([ZQuota, z.literal(false)]),
    group: z.union([ZQuota, z.literal(false)]),
    category: z.union([ZQuota, z.literal(false)]),
  }),
  /** Size of the user's disks in GB (the profile's `total_disk_size`). */
  total_disk_size: z.number(),
  /** Nextcloud storage (`{token_web, provider_quota}`); null: no user storage is configured. */
  user_storage: z.object({ token_web: z.string(), provider_quota: z.unknown() }).nullable(),
});
export type TUser = z.infer<typeof ZUser>;

export const ZUserConfig = z.object({
  show_bookings_button: z.boolean(),
  documentation_url: z.string(),
  viewers_documentation_url: z.string(),
  show_change_email_button: z.boolean(),
  show_temporal_tab: z.boolean(),
  http_port: z.string(),
  https_port: z.string(),
  bastion_domain: z.string().nullable(),
  bastion_ssh_port: z.string().nullable(),
  can_use_bastion: z.boolean(),
  can_use_bastion_individual_domains: z.boolean(),
  migrations_block: z.boolean(),
  /** The installation runs desktops on more than one hypervisor: the cards say where each one runs. */
  multiple_hypervisors: z.boolean(),
  session: z.object({ id: z.string(), max_renew_time: z.number(), max_time: z.number() }),
});
export type TUserConfig = z.infer<typeof ZUserConfig>;

export const ZPasswordPolicy = z.object({
  id: z.string(),
  type: z.literal('local'),
  category: z.string(),
  role: z.string(),
  subtype: z.literal('password'),
  length: z.number().int(),
  digits: z.number().int(),
  uppercase: z.number().int(),
  lowercase: z.number().int(),
  special_characters: z.number().int(),
  not_username: z.boolean(),
  expire: z.number().int(),
  old_passwords: z.number().int(),
});
export type TPasswordPolicy = z.infer<typeof ZPasswordPolicy>;

export const ZCategoryPublic = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  custom_url_name: z.string(),
  photo: z.string(),
  frontend: z.boolean(),
});
export type TCategoryPublic = z.infer<typeof ZCategoryPublic>;

/**
 * The sign-in page's configuration. `providers` as the original answers it: `all.display_providers` the
 * sign-in choices offered (`form` the user/password form), `form.hide_forgot_password` true when no
 * password-reset mail can be sent (no mail server, or no public address for its link).
 */
export const ZLoginConfig = z.object({
  providers: z.object({
    all: z.object({ display_providers: z.array(z.string()) }),
    form: z.object({ hide_forgot_password: z.boolean() }),
  }),
  categories_select: z.boolean(),
  signup: z.boolean(),
  notification_cover: z.object({ enabled: z.boolean(), title: z.string(), description: z.string() }),
  /** The enabled OpenID and SAML providers, as sign-in buttons (each for its category, or for all when category_id is null). */
  identity_providers: z.array(ZLoginProvider),
});
export type TLoginConfig = z.infer<typeof ZLoginConfig>;

export const ZMaintenanceText = z.object({ title: z.string(), body: z.string(), enabled: z.boolean() });
export type TMaintenanceText = z.infer<typeof ZMaintenanceText>;

export const ZDisclaimer = z.object({ title: z.string(), body: z.string() });
/**
 * GET /notifications/status_bar: the notification for the caller's provider with its migration
 * settings, or null when there is nothing to show (clients take any object as a notification).
 */
export const ZStatusBarNotification = z.object({
  text: z.string(),
  level: z.enum(['info', 'warning', 'danger']),
  migration_config: z.object({ import: z.boolean(), export: z.boolean() }),
});
export type TStatusBarNotification = z.infer<typeof ZStatusBarNotification>;
export const ZStatusBarAnswer = ZStatusBarNotification.nullable();

/** GET /authentication/{export|import}/{provider}: whether user migration is on for that provider. */
export const ZMigrationProviderParams = z.object({ provider: z.string().regex(/^[a-z0-9_-]{1,32}$/) });
export const ZMigrationEnabled = z.object({ enabled: z.boolean() });

/**
 * GET /notification/user/{trigger}/{display}: the caller's pending notifications by order, then by
 * item type, each group with its template (in the user's language) and its items, as the original.
 */
const ZNotificationSlug = z.string().regex(/^[a-z0-9_]{1,32}$/);
export const ZUserNotificationParams = z.object({ trigger: ZNotificationSlug, display: ZNotificationSlug });
export const ZUserNotificationDisplaysParams = z.object({ trigger: ZNotificationSlug });
export const ZUserNotificationGroup = z.object({
  display: z.array(z.string()),
  action_id: z.string(),
  template_id: z.string(),
  template: z.object({ title: z.string(), body: z.string(), footer: z.string() }),
  force_accept: z.boolean(),
  notifications: z.array(
    z.object({ id: z.string(), text: z.string().optional(), vars: z.record(z.string(), z.string()).optional() }),
  ),
});
export const ZUserNotifications = z.object({
  notifications: z.record(z.string(), z.record(z.string(), ZUserNotificationGroup)),
});
export type TUserNotifications = z.infer<typeof ZUserNotifications>;
/** GET /notification/user/displays/{trigger}: where the caller has notifications waiting. */
export const ZUserNotificationDisplays = z.object({ displays: z.array(z.string()) });

export { ZAppliedQuota };

/** `PUT /user`: the password (with the current one) or the name and e-mail, as the original takes them. */
export const ZUserUpdate = z.union([
  z.strictObject({ current_password: z.string().min(1).max(512), password: z.string().min(1).max(512) }),
  z.strictObject({ name: z.string().trim().min(1).max(100).optional(), email: z.email().max(254).optional() }),
]);
export type TUserUpdate = z.infer<typeof ZUserUpdate>;

/**
 * What signing in opens (ours; Ravada's "start my only desktop right away"): `group` = as the person's group says
 * (a group may open its members' only desktop), `list` = the desktops screen, or one of their desktops by id.
 */
export const ZSignInChoice = z.union([
  z.literal('group'),
  z.literal('list'),
  z.strictObject({ desktop_id: z.string().min(1).max(64) }),
  /** a desktop pool the person may use: signing in takes a desktop from it (issue 30) */
  z.strictObject({ pool_id: z.string().min(1).max(64) }),
]);
export type TSignInChoice = z.infer<typeof ZSignInChoice>;
export const ZSignInDesktopUpdate = z.strictObject({ open: ZSignInChoice });
/**
 * GET /user/sign-in-desktop: the choice, the group's default, and what signing in opens now (null: the list): one of
 * the person's desktops, or a pool's (taken at sign-in: `pool_id` set, `desktop_id` the one they hold already or null).
 */
export const ZSignInDesktop = z.object({
  open: ZSignInChoice,
  group_default: z.boolean(),
  opens: z
    .object({ desktop_id: z.string().nullable(), pool_id: z.string().nullable(), name: z.string(), viewer: z.enum(['browser-vnc', 'browser-rdp']) })
    .nullable(),
});
export type TSignInDesktop = z.infer<typeof ZSignInDesktop>;

/** `POST /user_migration/export` answers the code; `/import` takes it. */
export const ZMigrationExport = z.object({ token: z.string() });
export const ZMigrationImportBody = z.object({ token: z.string().min(1).max(4096) });
/**
 * GET /user_migration/result (ours): the migration the signed-in account received — from which
 * account, when (epoch seconds) and how many items moved — or null when it received none.
 */
export const ZMigrationResult = z.object({
  migration: z
    .object({
      origin_username: z.string(),
      migrated_at: z.number(),
      desktops: z.number().int(),
      templates: z.number().int(),
      media: z.number().int(),
      deployments: z.number().int(),
    })
    .nullable(),
});
export type TMigrationResult = z.infer<typeof ZMigrationResult>;

/** `GET /message-template/{name}`: the message dialog's texts; `{{param}}` is filled from the live message's params. */
export const ZMessageTemplateParams = z.object({ name: z.string().min(1).max(64) });
export const ZMessageTemplate = z.object({ name: z.string(), lang: z.string(), title: z.string(), body: z.string() });
export type TMessageTemplate = z.infer<typeof ZMessageTemplate>;
