import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { STORAGE_STATUSES, TLimits, TMappingRule, TPoolGiveBack, TPoolPermissions, TPoolScheduleRow, TQuota } from '@vdi/contracts';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const roles = pgTable('roles', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  sortOrder: integer('sort_order').notNull(),
});

export const categories = pgTable('categories', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  customUrlName: text('custom_url_name').notNull(),
  photo: text('photo').notNull().default(''),
  /** Shown in the login category select. */
  frontend: boolean('frontend').notNull().default(true),
  quota: jsonb('quota').$type<TQuota | null>(),
  limits: jsonb('limits').$type<TLimits | null>(),
  maintenance: boolean('maintenance').notNull().default(false),
  /** E-mail domains allowed to register in this category; empty = any. */
  allowedEmailDomains: jsonb('allowed_email_domains').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  emailVerificationRequired: boolean('email_verification_required').notNull().default(false),
  /** Hours an item stays in the recycle bin; null = the system setting. */
  recycleBinCutoffHours: integer('recycle_bin_cutoff_hours'),
  /** The storage pool its desktops' disks go to (a libvirt pool name hosts declare, e.g. `local`); null = the shared storage folder. */
  storagePool: text('storage_pool'),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('categories_custom_url_idx').on(t.customUrlName)]);

export const groups = pgTable('groups', {
  id: text('id').primaryKey(),
  uid: text('uid').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  categoryId: text('category_id').notNull().references(() => categories.id),
  quota: jsonb('quota').$type<TQuota | null>(),
  limits: jsonb('limits').$type<TLimits | null>(),
  /** Members with one desktop (who chose nothing else) land in it at sign-in, in the browser viewer. */
  openDesktopAtSignIn: boolean('open_desktop_at_sign_in').notNull().default(false),
  createdAt: createdAt(),
}, (t) => [index('groups_category_idx').on(t.categoryId)]);

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  uid: text('uid').notNull(),
  username: text('username').notNull(),
  provider: text('provider').notNull(),
  categoryId: text('category_id').notNull().references(() => categories.id),
  groupId: text('group_id').notNull().references(() => groups.id),
  roleId: text('role_id').notNull().references(() => roles.id),
  name: text('name').notNull(),
  email: text('email').notNull().default(''),
  emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
  /** An address asked for in the profile, waiting for its verification link; `email` stays until then. */
  emailPending: text('email_pending'),
  photo: text('photo').notNull().default(''),
  lang: text('lang'),
  /** What signing in opens: null = as the group says, `list` = the desktops screen, else the id of one of their desktops. */
  signInOpens: text('sign_in_opens'),
  active: boolean('active').notNull().default(true),
  passwordHash: text('password_hash'),
  /** Hashes of earlier passwords, newest first, for the "not among the last N" policy. */
  passwordHistory: jsonb('password_history').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  passwordLastUpdated: timestamp('password_last_updated', { withTimezone: true }),
  passwordResetRequired: boolean('password_reset_required').notNull().default(false),
  disclaimerAcknowledged: boolean('disclaimer_acknowledged').notNull().default(false),
  quota: jsonb('quota').$type<TQuota | null>(),
  accessedAt: timestamp('accessed_at', { withTimezone: true }),
  /** Set while the user waits in the recycle bin (item type `user`): hidden, cannot sign in, restorable. */
  deletedAt: timestamp('deleted_at', { withTimezone: true }),
  /** The directory or identity provider that made this account (provider: its kind), or null. */
  identityProviderId: text('identity_provider_id'),
  /** The TOTP secret (RFC 6238) of a person with two-factor on, sealed under the server's key (auth/secret-box.ts). */
  totpSecret: text('totp_secret'),
  /** A secret being enrolled, sealed: it becomes `totpSecret` once a code from it is confirmed. */
  totpPendingSecret: text('totp_pending_secret'),
  /** When two-factor was turned on (null: off). */
  totpEnabledAt: timestamp('totp_enabled_at', { withTimezone: true }),
  /** The time step of the last code accepted: a code is good once (no replay within its window). */
  totpLastStep: bigint('totp_last_step', { mode: 'number' }).notNull().default(0),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex('users_identity_idx').on(t.categoryId, t.provider, t.uid),
  index('users_username_idx').on(t.username),
  index('users_group_idx').on(t.groupId),
  // The admin list: a category's users by name, and searches without case.
  index('users_category_username_idx').on(t.categoryId, t.username),
  index('users_lower_username_idx').on(sql`lower(${t.username})`),
]);

/** One-time recovery codes of a person with two-factor on: only their hashes; a used one is deleted. */
export const twoFactorRecoveryCodes = pgTable('two_factor_recovery_codes', {
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  codeHash: text('code_hash').notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.userId, t.codeHash] })]);

export const userSecondaryGroups = pgTable('user_secondary_groups', {
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  groupId: text('group_id').notNull().references(() => groups.id, { onDelete: 'cascade' }),
}, (t) => [primaryKey({ columns: [t.userId, t.groupId] })]);

export const registrationCodes = pgTable('registration_codes', {
  code: text('code').primaryKey(),
  categoryId: text('category_id').notNull().references(() => categories.id),
  groupId: text('group_id').notNull().references(() => groups.id),
  roleId: text('role_id').notNull().references(() => roles.id),
  description: text('description').notNull().default(''),
  createdAt: createdAt(),
});

/** Sign-ups waiting for a registration code; referenced by the `register` token. */
export const pendingRegistrations = pgTable('pending_registrations', {
  id: text('id').primaryKey(),
  provider: text('provider').notNull(),
  categoryId: text('category_id').notNull().references(() => categories.id),
  username: text('username').notNull(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  /** null for a person of a directory or identity provider (no password here) */
  passwordHash: text('password_hash'),
  /** the provider's id for the person (null: a local sign-up, whose uid is the user name) */
  uid: text('uid'),
  photo: text('photo').notNull().default(''),
  identityProviderId: text('identity_provider_id'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: createdAt(),
});

/** One active session per user; a new sign-in revokes the previous one. */
export const sessions = pgTable('sessions', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
  lastRenewAt: timestamp('last_renew_at', { withTimezone: true }).notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  maxTimeAt: timestamp('max_time_at', { withTimezone: true }).notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  /** The admin app's session opened from this one (/isard-admin/login): hash of its cookie's secret. */
  adminSecretHash: text('admin_secret_hash'),
  /** A session opened through an identity provider: what its logout needs (provider id, ID token, SAML name id and session index). */
  external: jsonb('external').$type<ExternalSession>(),
}, (t) => [index('sessions_user_idx').on(t.userId)]);

/** What an identity provider's logout needs of a session it opened. */
export type ExternalSession = { providerId: string; idToken?: string; nameId?: string; nameIdFormat?: string; sessionIndex?: string };

/**
 * Directories and identity providers (contracts/identity.ts). `secret` (LDAP bind password, OIDC client secret,
 * SAML signing key) is sealed with the server's key (auth/secret-box.ts) and never answered.
 */
export const identityProviders = pgTable('identity_providers', {
  id: text('id').primaryKey(),
  kind: text('kind').notNull(),
  name: text('name').notNull(),
  logo: text('logo').notNull().default(''),
  categoryId: text('category_id').references(() => categories.id, { onDelete: 'cascade' }),
  enabled: boolean('enabled').notNull().default(true),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull(),
  rules: jsonb('rules').$type<TMappingRule[]>().notNull().default(sql`'[]'::jsonb`),
  unmatched: text('unmatched').notNull().default('refuse'),
  updateOnSignin: boolean('update_on_signin').notNull().default(false),
  maxRole: text('max_role').notNull().default('advanced'),
  secret: text('secret'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Short-lived state of redirect sign-ins, shared by every server process: an OIDC state (nonce, PKCE verifier),
 * a SAML request id (InResponseTo), and seen assertion ids (replays are refused while their row lives).
 */
export const identityFlows = pgTable('identity_flows', {
  id: text('id').primaryKey(),
  providerId: text('provider_id').notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: createdAt(),
}, (t) => [index('identity_flows_expires_idx').on(t.expiresAt)]);

/**
 * Personal API tokens (`Authorization: Bearer vdi_<id>_<secret>` on /api/v3): only the secret's SHA-256 is kept; the
 * token acts as its owner at each call (never more), read-only ones on GET/HEAD only. Revoked rows stay for the list.
 */
export const apiTokens = pgTable('api_tokens', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  secretHash: text('secret_hash').notNull(),
  readOnly: boolean('read_only').notNull(),
  createdAt: createdAt(),
  expiresAt: timestamp('expires_at', { withTimezone: true }),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
}, (t) => [index('api_tokens_user_idx').on(t.userId)]);

/** Leaky buckets of the sign-in and forgotten-password limits, one row per key (see auth/throttle.ts); quiet rows are swept. */
export const loginThrottle = pgTable('login_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull().default(0),
  blocks: integer('blocks').notNull().default(0),
  blockedUntil: timestamp('blocked_until', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One-time tokens (e-mail verification, password reset) that must not be replayed. */
export const usedTokens = pgTable('used_tokens', {
  jti: text('jti').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

export const passwordPolicies = pgTable('password_policies', {
  id: text('id').primaryKey(),
  categoryId: text('category_id').notNull().default('all'),
  roleId: text('role_id').notNull().default('all'),
  length: integer('length').notNull().default(8),
  digits: integer('digits').notNull().default(0),
  uppercase: integer('uppercase').notNull().default(0),
  lowercase: integer('lowercase').notNull().default(0),
  specialCharacters: integer('special_characters').notNull().default(0),
  notUsername: boolean('not_username').notNull().default(false),
  expireDays: integer('expire_days').notNull().default(0),
  oldPasswords: integer('old_passwords').notNull().default(0),
});

/** System settings as key → JSON value (maintenance, disclaimer, recycle bin, …). */
export const config = pgTable('config', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Hardware of a desktop or template (memory in MB here; the API speaks GB). */
export type DomainHardware = {
  vcpus: number;
  memoryMb: number;
  bootOrder: ('disk' | 'iso' | 'network')[];
  diskBus: 'default' | 'virtio' | 'ide' | 'sata';
  interfaces: { id: string; mac: string }[];
  videos: string[];
  graphics: string[];
  isos: string[];
  floppies: string[];
  reservables: { vgpus: string[] | null };
};
export type GuestProperties = {
  credentials: { username: string; password: string };
  fullscreen: boolean;
  viewers: Partial<Record<'browser_vnc' | 'file_spice' | 'browser_rdp' | 'file_rdpgw' | 'file_rdpvpn', { options: null }>>;
};
export type DomainImage = { id: string; type: 'stock' | 'user'; url: string };
/** Sharing: for each key, false = criterion unused, [] = everyone, a list = those ids. */
export type Allowed = { roles: string[] | false; categories: string[] | false; groups: string[] | false; users: string[] | false };

/** Desktops and templates (the original system keeps both as "domains"). */
export const domains = pgTable('domains', {
  id: text('id').primaryKey(),
  kind: text('kind').$type<'desktop' | 'template'>().notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  userId: text('user_id').notNull().references(() => users.id),
  categoryId: text('category_id').notNull().references(() => categories.id),
  groupId: text('group_id').notNull().references(() => groups.id),
  status: text('status').notNull(),
  persistent: boolean('persistent').notNull().default(true),
  templateId: text('template_id'),
  /** For a duplicated template: the template whose disk it shares. */
  duplicateOfId: text('duplicate_of_id'),
  hardware: jsonb('hardware').$type<DomainHardware>().notNull(),
  guestProperties: jsonb('guest_properties').$type<GuestProperties>().notNull(),
  image: jsonb('image').$type<DomainImage>().notNull(),
  icon: text('icon').notNull().default('fa-desktop'),
  allowed: jsonb('allowed').$type<Allowed>().notNull().default(sql`'{"roles":false,"categories":false,"groups":false,"users":false}'::jsonb`),
  enabled: boolean('enabled').notNull().default(true),
  server: boolean('server').notNull().default(false),
  /** Deployment the desktop belongs to, and whether it shows to its user. */
  tag: text('tag'),
  tagVisible: boolean('tag_visible').notNull().default(true),
  /** Direct-viewer token (public link), or null when disabled. */
  jumperUrl: text('jumper_url'),
  /** What the engine last reported: guest address, when it started. */
  guestIp: text('guest_ip'),
  /** The host it runs on (placement's choice at its start); null while it is stopped. */
  hypervisorId: text('hypervisor_id'),
  /** Templates: the hosts their desktops start on (forced: only those; favourite: those first). */
  preferredHypervisors: jsonb('preferred_hypervisors').$type<PreferredHypervisors>().notNull().default(sql`'{"forced":[],"favourite":[]}'::jsonb`),
  startedAt: timestamp('started_at', { withTimezone: true }),
  /** When its current (or last) run's start was claimed: the run's VNC password derives from it, so a viewer ticket
   *  asked while it starts holds the password its machine is launched with (modules/viewers/service.ts). */
  runClaimedAt: timestamp('run_claimed_at', { withTimezone: true }),
  currentAction: text('current_action'),
  /** Booking in progress for this desktop (set at its start, cleared at its end by the scheduler). */
  bookingId: text('booking_id'),
  /** When the scheduler will stop the desktop (booking end), shown as an automatic-shutdown notice. */
  scheduledShutdownAt: timestamp('scheduled_shutdown_at', { withTimezone: true }),
  /** While `Shutting-down`: when the server force-stops it (the ACPI stop plus the shutdown timeout); null otherwise. */
  forceStopAt: timestamp('force_stop_at', { withTimezone: true }),
  /** Last use; a new desktop or template starts at its creation time, as in the original. */
  accessedAt: timestamp('accessed_at', { withTimezone: true }).defaultNow(),
  /** The desktop pool it belongs to (modules/desktop-pools), and when it was given to its person (null: not given yet). */
  poolId: text('pool_id'),
  poolAssignedAt: timestamp('pool_assigned_at', { withTimezone: true }),
  /** When its guest was found booted (a pool desktop is prepared once this is at or after its start). */
  poolReadyAt: timestamp('pool_ready_at', { withTimezone: true }),
  createdAt: createdAt(),
}, (t) => [
  index('domains_pool_idx').on(t.poolId),
  // A person's desktops (or templates) by name: their list, in its order; names compared without case.
  index('domains_user_kind_name_idx').on(t.userId, t.kind, t.name),
  index('domains_user_kind_lower_name_idx').on(t.userId, t.kind, sql`lower(${t.name})`),
  index('domains_kind_idx').on(t.kind),
  // The running desktops (a start's quota and placement sums, the hosts' load): a few among thousands at rest.
  index('domains_status_idx').on(t.status),
  // Everyone's desktops by name (the administration console's list, a page at a time).
  index('domains_kind_name_idx').on(t.kind, t.name, t.id),
  // A deployment's desktops.
  index('domains_tag_idx').on(t.tag),
  index('domains_template_idx').on(t.templateId),
  uniqueIndex('domains_jumper_idx').on(t.jumperUrl),
]);

/** Disk images tracked by the portal (qcow2 files under DATA_DIR/storage). */
export const storage = pgTable('storage', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id),
  kind: text('kind').$type<'desktop' | 'volatile' | 'template'>().notNull(),
  path: text('path').notNull(),
  parentId: text('parent_id'),
  format: text('format').notNull().default('qcow2'),
  status: text('status').$type<(typeof STORAGE_STATUSES)[number]>().notNull().default('ready'),
  actualSize: bigint('actual_size', { mode: 'number' }).notNull().default(0),
  virtualSize: bigint('virtual_size', { mode: 'number' }).notNull().default(0),
  createdAt: createdAt(),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  /** The hypervisor whose own pool holds the file (`path` is its path there; the desktop runs only there);
   *  null: the installation's storage folder, which this machine and the shared-storage hosts reach. */
  hypervisorId: text('hypervisor_id'),
}, (t) => [index('storage_user_idx').on(t.userId), index('storage_parent_idx').on(t.parentId)]);

export const domainDisks = pgTable('domain_disks', {
  domainId: text('domain_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  storageId: text('storage_id').notNull().references(() => storage.id),
  position: integer('position').notNull().default(0),
}, (t) => [primaryKey({ columns: [t.domainId, t.storageId] })]);

/** Short-lived one-time tokens that open a browser viewer of one desktop for one user. */
export const viewerTokens = pgTable('viewer_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  desktopId: text('desktop_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  userId: text('user_id'),
  protocol: text('protocol').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  usedAt: timestamp('used_at', { withTimezone: true }),
});

/**
 * Viewers open now (browser VNC bridges, SPICE tunnels, RDP relays), one row per connection, held by
 * the server process whose `holder` refreshes `seen_at` while it is open: every process counts them,
 * and a dead process's stop counting once `seen_at` is older than the bound (modules/viewers/activity.ts).
 * A closed one keeps its `closed_at` (the last of a desktop's: what the inactivity limits count from).
 */
export const viewerConnections = pgTable('viewer_connections', {
  id: text('id').primaryKey(),
  desktopId: text('desktop_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  holder: text('holder').notNull(),
  openedAt: timestamp('opened_at', { withTimezone: true }).notNull(),
  seenAt: timestamp('seen_at', { withTimezone: true }).notNull(),
  closedAt: timestamp('closed_at', { withTimezone: true }),
}, (t) => [index('viewer_connections_desktop_idx').on(t.desktopId)]);

/**
 * What happened to a desktop, written where it happens (modules/desktops/events.ts): a start asked and
 * by whom, its machine up on a host, a start's failure and its reason, a stop asked (by a person or the
 * system and why), the machine gone and how long it ran, a viewer opened and its protocol. The console's
 * desktop page reads it as the desktop's history; it goes with the desktop.
 */
export const desktopEvents = pgTable('desktop_events', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  desktopId: text('desktop_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  kind: text('kind').notNull(),
  /** Who asked (null: the system). */
  actorId: text('actor_id'),
  actorName: text('actor_name'),
  detail: jsonb('detail').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
}, (t) => [index('desktop_events_desktop_idx').on(t.desktopId, t.at)]);

/**
 * The start queue of every server process of the installation (engine/start-queue.ts): one entry per
 * desktop whose start is asked, in a lane per host (`lane`: the hypervisor id). Waiting while
 * `started_at` is null; then run by the process `runner_pid`/`runner_since` names (its live
 * connection's backend: gone from pg_stat_activity when the process dies). `id` is the installation's
 * FIFO order.
 */
export const startQueue = pgTable('start_queue', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  desktopId: text('desktop_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  lane: text('lane').notNull(),
  enqueuedAt: timestamp('enqueued_at', { withTimezone: true }).notNull().defaultNow(),
  startedAt: timestamp('started_at', { withTimezone: true }),
  runnerPid: integer('runner_pid'),
  runnerSince: timestamp('runner_since', { withTimezone: true }),
}, (t) => [uniqueIndex('start_queue_desktop_idx').on(t.desktopId), index('start_queue_lane_idx').on(t.lane, t.id)]);

/** Installation media (ISO and floppy images) downloaded from a web address and shared. */
export type MediaProgress = {
  received_bytes: number;
  total_bytes: number;
  total_percent: number;
  speed_bytes_per_second: number;
  time_left_seconds: number | null;
};
export const media = pgTable('media', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  url: text('url').notNull(),
  kind: text('kind').$type<'iso' | 'floppy'>().notNull(),
  /** DownloadStarting, Downloading, Downloaded, DownloadFailed, DownloadFailedInvalidFormat, DownloadAborting, ResetDownloading, Deleting, deleted, Maintenance */
  status: text('status').notNull(),
  userId: text('user_id').notNull().references(() => users.id),
  categoryId: text('category_id').notNull().references(() => categories.id),
  groupId: text('group_id').notNull().references(() => groups.id),
  allowed: jsonb('allowed').$type<Allowed>().notNull().default(sql`'{"roles":false,"categories":false,"groups":false,"users":false}'::jsonb`),
  path: text('path'),
  size: bigint('size', { mode: 'number' }).notNull().default(0),
  progress: jsonb('progress').$type<MediaProgress | null>(),
  detail: text('detail').notNull().default(''),
  icon: text('icon').notNull().default('fa-circle-o'),
  accessedAt: timestamp('accessed_at', { withTimezone: true }),
  createdAt: createdAt(),
}, (t) => [index('media_user_idx').on(t.userId)]);

/** Media attached to a desktop as CD-ROM or floppy. */
export const domainMedia = pgTable('domain_media', {
  domainId: text('domain_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  mediaId: text('media_id').notNull().references(() => media.id),
  kind: text('kind').$type<'iso' | 'floppy'>().notNull(),
}, (t) => [primaryKey({ columns: [t.domainId, t.mediaId] })]);

/**
 * Long work (media downloads, template creation, disk growth, deployment creation) as persisted
 * jobs: their progress is published live, and a restart finds them and resumes or fails them.
 */
export const jobs = pgTable('jobs', {
  id: text('id').primaryKey(),
  kind: text('kind').notNull(),
  status: text('status').$type<'queued' | 'running' | 'done' | 'failed' | 'aborted'>().notNull(),
  userId: text('user_id').notNull(),
  targetId: text('target_id').notNull(),
  progress: integer('progress').notNull().default(0),
  params: jsonb('params').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  error: text('error'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [index('jobs_target_idx').on(t.targetId), index('jobs_status_idx').on(t.status)]);

/** What a deletion put aside: full copies of the records, their disks kept as recycled storage. */
export type RecycledItems = {
  desktops: (typeof domains.$inferSelect)[];
  templates: (typeof domains.$inferSelect)[];
  deployments: Record<string, unknown>[];
  storages: string[];
  domainDisks: { domainId: string; storageId: string; position: number }[];
};
export const recycleBin = pgTable('recycle_bin', {
  id: text('id').primaryKey(),
  itemType: text('item_type').$type<'desktop' | 'template' | 'deployment' | 'user' | 'bulk'>().notNull(),
  itemName: text('item_name').notNull(),
  status: text('status').$type<'recycled' | 'restored' | 'deleting' | 'deleted'>().notNull().default('recycled'),
  ownerId: text('owner_id').notNull(),
  ownerCategoryId: text('owner_category_id').notNull(),
  ownerGroupId: text('owner_group_id').notNull(),
  agentId: text('agent_id').notNull(),
  agentName: text('agent_name').notNull(),
  size: bigint('size', { mode: 'number' }).notNull().default(0),
  items: jsonb('items').$type<RecycledItems>().notNull(),
  createdAt: createdAt(),
  accessedAt: timestamp('accessed_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [index('recycle_bin_owner_idx').on(t.ownerId), index('recycle_bin_status_idx').on(t.status)]);

/**
 * Deployments: one desktop per selected user, created from a template (spec core §3 Deployment).
 * The desktops point back through `domains.tag`; `createDict` keeps what each desktop is made of so
 * that a recreate builds the missing ones the same way.
 */
export type DeploymentCreateDict = {
  templateId: string;
  hardware: DomainHardware;
  guestProperties: GuestProperties;
  image: DomainImage;
};
export const deployments = pgTable('deployments', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  desktopName: text('desktop_name').notNull(),
  userId: text('user_id').notNull().references(() => users.id),
  categoryId: text('category_id').notNull().references(() => categories.id),
  groupId: text('group_id').notNull().references(() => groups.id),
  templateId: text('template_id').notNull(),
  coOwners: jsonb('co_owners').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  /** Who gets a desktop: groups and users; false = criterion unused. */
  allowed: jsonb('allowed').$type<Allowed>().notNull(),
  visible: boolean('visible').notNull().default(false),
  /** Rights given to the students, e.g. ['recreate']. */
  userPermissions: jsonb('user_permissions').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  createDict: jsonb('create_dict').$type<DeploymentCreateDict>().notNull(),
  /** Booking that is in progress for the whole deployment, if any. */
  bookingId: text('booking_id'),
  status: text('status').$type<'ready' | 'recycled'>().notNull().default('ready'),
  /** The hosts its desktops start on; overrides the template's when it names any. */
  preferredHypervisors: jsonb('preferred_hypervisors').$type<PreferredHypervisors>().notNull().default(sql`'{"forced":[],"favourite":[]}'::jsonb`),
  createdAt: createdAt(),
}, (t) => [index('deployments_user_idx').on(t.userId)]);

/**
 * Desktop pools (issue 30; modules/desktop-pools): desktops of a template kept prepared for the people the pool is
 * shared with. Its desktops are `domains` rows with `pool_id`; one not given to anybody yet belongs to the pool's
 * owner and shows in nobody's list.
 */
export const desktopPools = pgTable('desktop_pools', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  /** Its owner (who made it): the prepared desktops are theirs until given. */
  userId: text('user_id').notNull().references(() => users.id),
  categoryId: text('category_id').notNull().references(() => categories.id),
  templateId: text('template_id').notNull(),
  allowed: jsonb('allowed').$type<Allowed>().notNull(),
  maxDesktops: integer('max_desktops').notNull(),
  prepared: integer('prepared').notNull().default(0),
  schedule: jsonb('schedule').$type<TPoolScheduleRow[]>().notNull().default(sql`'[]'::jsonb`),
  persistent: boolean('persistent').notNull().default(false),
  giveBack: jsonb('give_back').$type<TPoolGiveBack>().notNull(),
  permissions: jsonb('permissions').$type<TPoolPermissions>().notNull(),
  enabled: boolean('enabled').notNull().default(true),
  /** Seconds the last preparations took (newest last, at most 20): the wait a person in the queue is told. */
  prepareSeconds: jsonb('prepare_seconds').$type<number[]>().notNull().default(sql`'[]'::jsonb`),
  createdAt: createdAt(),
}, (t) => [index('desktop_pools_category_idx').on(t.categoryId)]);

/** People waiting for a desktop of a pool (none was prepared when they asked): first come, first served. */
export const desktopPoolWaiters = pgTable('desktop_pool_waiters', {
  poolId: text('pool_id').notNull().references(() => desktopPools.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  since: timestamp('since', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.poolId, t.userId] })]);

/** Physical reservable items (GPU cards) that the planner makes available as profiles. */
export const reservableItems = pgTable('reservable_items', {
  id: text('id').primaryKey(),
  itemType: text('item_type').$type<'gpus'>().notNull().default('gpus'),
  name: text('name').notNull(),
  brand: text('brand').notNull().default(''),
  model: text('model').notNull().default(''),
  description: text('description').notNull().default(''),
  /** Subitems (profiles) this card can offer, one at a time. */
  subitemIds: jsonb('subitem_ids').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  enabled: boolean('enabled').notNull().default(true),
  /** The hypervisor the card is in: its profiles are offered there only (placement). */
  hypervisorId: text('hypervisor_id').notNull().default('local').references(() => hypervisors.id),
  createdAt: createdAt(),
});

/** Reservable subitems: GPU profiles (e.g. NVIDIA-A40-2Q), each with its units per card and booking rule. */
export const reservableSubitems = pgTable('reservable_subitems', {
  id: text('id').primaryKey(),
  itemType: text('item_type').$type<'vgpus'>().notNull().default('vgpus'),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  brand: text('brand').notNull().default(''),
  model: text('model').notNull().default(''),
  profile: text('profile').notNull(),
  /** How many desktops one card serves with this profile. */
  units: integer('units').notNull(),
  /** Booking priority rule; '' = the `default` rule. */
  priorityId: text('priority_id').notNull().default(''),
  enabled: boolean('enabled').notNull().default(true),
  allowed: jsonb('allowed').$type<Allowed>().notNull().default(sql`'{"roles":false,"categories":false,"groups":false,"users":false}'::jsonb`),
});

/** Planner: item `itemId` offers subitem `subitemId` with `units` between start and end. */
export const reservablePlans = pgTable('reservable_plans', {
  id: text('id').primaryKey(),
  itemType: text('item_type').notNull().default('gpus'),
  itemId: text('item_id').notNull().references(() => reservableItems.id, { onDelete: 'cascade' }),
  subitemId: text('subitem_id').notNull().references(() => reservableSubitems.id, { onDelete: 'cascade' }),
  start: timestamp('start', { withTimezone: true }).notNull(),
  end: timestamp('end', { withTimezone: true }).notNull(),
  units: integer('units').notNull(),
  userId: text('user_id').notNull(),
  createdAt: createdAt(),
}, (t) => [index('reservable_plans_range_idx').on(t.itemId, t.start, t.end)]);

/** Booking rules: matched by `allowed` (users, groups, categories, roles); the highest priority wins. */
export const bookingPriorities = pgTable('booking_priorities', {
  id: text('id').primaryKey(),
  ruleId: text('rule_id').notNull(),
  name: text('name').notNull(),
  allowed: jsonb('allowed').$type<Allowed>().notNull(),
  priority: integer('priority').notNull(),
  /** Minutes of notice a booking needs. */
  forbidTime: integer('forbid_time').notNull().default(0),
  /** Longest booking in minutes; null = no limit. */
  maxTime: integer('max_time'),
  /** Most future bookings a user may hold; null = no limit. */
  maxItems: integer('max_items'),
});

/**
 * Auto-shutdown policies of running desktops (the original's desktops_priority): for one role,
 * category, group or user, the longest time started and the longest idle time (minutes; null = no
 * limit), and the warnings before (minutes). `category_id` is the target's category (null for a
 * role), what a manager reaches.
 */
export const shutdownPolicies = pgTable('shutdown_policies', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  kind: text('kind').$type<'role' | 'category' | 'group' | 'user'>().notNull(),
  targetId: text('target_id').notNull(),
  categoryId: text('category_id'),
  maxTime: integer('max_time'),
  idleTime: integer('idle_time'),
  warnings: jsonb('warnings').$type<number[]>().notNull().default(sql`'[5,1]'::jsonb`),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('shutdown_policies_target_idx').on(t.kind, t.targetId), index('shutdown_policies_category_idx').on(t.categoryId)]);

/** A booking of reservable units for a desktop or a whole deployment (one unit per desktop). */
export type BookingPlanUse = { plan_id: string; item_id: string; subitem_id: string; priority: number; units_booked: number };
export const bookings = pgTable('bookings', {
  id: text('id').primaryKey(),
  itemType: text('item_type').$type<'desktop' | 'deployment' | 'pool'>().notNull(),
  itemId: text('item_id').notNull(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  title: text('title').notNull().default(''),
  units: integer('units').notNull().default(1),
  reservables: jsonb('reservables').$type<{ vgpus: string[] }>().notNull(),
  start: timestamp('start', { withTimezone: true }).notNull(),
  end: timestamp('end', { withTimezone: true }).notNull(),
  plans: jsonb('plans').$type<BookingPlanUse[]>().notNull().default(sql`'[]'::jsonb`),
  createdAt: createdAt(),
}, (t) => [index('bookings_item_idx').on(t.itemType, t.itemId), index('bookings_range_idx').on(t.start, t.end)]);

/**
 * Timed work (booking start and end, warnings before a booking ends, profile switches at plan
 * boundaries). Rows survive a restart; the scheduler runs whatever is due and not yet done.
 */
export const scheduledJobs = pgTable('scheduled_jobs', {
  id: text('id').primaryKey(),
  kind: text('kind').notNull(),
  runAt: timestamp('run_at', { withTimezone: true }).notNull(),
  params: jsonb('params').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  status: text('status').$type<'pending' | 'running' | 'done' | 'failed' | 'cancelled'>().notNull().default('pending'),
  error: text('error'),
  createdAt: createdAt(),
  doneAt: timestamp('done_at', { withTimezone: true }),
}, (t) => [index('scheduled_jobs_due_idx').on(t.status, t.runAt)]);

/**
 * The audit log: every administrative write and security event, append-only for everyone (a
 * trigger refuses updates; only the retention sweep deletes). Actor and object are copied as they
 * were (names survive the user's deletion); `category_id` is the category the entry concerns, for
 * managers' views.
 */
export const auditLog = pgTable('audit_log', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  actorId: text('actor_id'),
  actorName: text('actor_name').notNull().default(''),
  actorRole: text('actor_role'),
  action: text('action').notNull(),
  objectType: text('object_type').notNull().default(''),
  objectId: text('object_id').notNull().default(''),
  objectName: text('object_name').notNull().default(''),
  categoryId: text('category_id'),
  address: text('address'),
  detail: jsonb('detail').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
}, (t) => [
  index('audit_log_at_idx').on(t.at),
  index('audit_log_actor_idx').on(t.actorId, t.at),
  index('audit_log_category_idx').on(t.categoryId, t.at),
  index('audit_log_action_idx').on(t.action, t.at),
]);

/**
 * A counter per user, raised by triggers (migration 0007; per statement since 0015) on every write that changes what the
 * user's desktop list shows: their desktops, those desktops' disks, their name, the names of the
 * desktops' group and category, their deployments' rights and the bookings of their desktops. A
 * server keeps a list answer while the counter stands (`desktops/list-cache.ts`): writes by any
 * server process, or straight into the database, are seen by the next call.
 */
export const desktopListRevs = pgTable('desktop_list_revs', {
  userId: text('user_id').primaryKey(),
  rev: bigint('rev', { mode: 'number' }).notNull().default(0),
});

/** What an import moved (counts), and from whom: what the target's /migration page shows. */
export type MigrationMoved = { originUsername: string; desktops: number; templates: number; media: number; deployments: number };

/**
 * User migration codes (the original's `users_migrations`): one row per origin account; a new export
 * replaces the code (its hash), so the previous code stops working. An import marks it `migrated`,
 * with when and what it moved. An account takes one migration only (spec 001 §5): the import
 * checks for a `migrated` row of the target under a lock on the target's user row.
 */
export const userMigrations = pgTable('user_migrations', {
  originUserId: text('origin_user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
  codeHash: text('code_hash').notNull(),
  status: text('status').$type<'exported' | 'migrated'>().notNull().default('exported'),
  targetUserId: text('target_user_id'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  migratedAt: timestamp('migrated_at', { withTimezone: true }),
  moved: jsonb('moved').$type<MigrationMoved>(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('user_migrations_code_idx').on(t.codeHash), index('user_migrations_target_idx').on(t.targetUserId)]);

/**
 * The engine's hosts (the local one today; the model holds many): whether each takes new desktops.
 * `enabled` false or `only_forced` true: no new ordinary starts there (running desktops go on).
 * Read at every start, so every server process and a restart see a change at once.
 */
export const hypervisors = pgTable('hypervisors', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  onlyForced: boolean('only_forced').notNull().default(false),
  /** Being emptied before removal: no new starts, running desktops go on until they stop. */
  draining: boolean('draining').notNull().default(false),
  /** How the engine reaches it (`qemu+ssh://user@host/system`, normalised); null for this server's own host. */
  uri: text('uri'),
  /** The SSH host key an admin confirmed on first connection (`SHA256:…`); another key is refused. */
  hostKeyFingerprint: text('host_key_fingerprint'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [uniqueIndex('hypervisors_uri_idx').on(t.uri)]);

/**
 * A template base copied into a host's own pool (modules/pools, docs/decisions/0011): which base (its
 * storage row: no foreign key, the copy is removed on the host after that row goes), on which host,
 * at which path there. Deleted with its base (template deleted, recycle bin purged) and with its host.
 */
export const hostBaseCopies = pgTable('host_base_copies', {
  storageId: text('storage_id').notNull(),
  hypervisorId: text('hypervisor_id').notNull().references(() => hypervisors.id, { onDelete: 'cascade' }),
  path: text('path').notNull(),
  bytes: bigint('bytes', { mode: 'number' }).notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.storageId, t.hypervisorId] }), index('host_base_copies_hypervisor_idx').on(t.hypervisorId)]);

/** A template's or deployment's pinning to hosts (the original's `forced_hyp` / `favourite_hyp`): hypervisor ids. */
export type PreferredHypervisors = { forced: string[]; favourite: string[] };

/**
 * A user's WireGuard keys and address in the users' VPN range (`GET /user/vpn/config`). The private
 * key is kept for the file download; a reset replaces the row (the old peer leaves the endpoint at once).
 */
export const userVpn = pgTable('user_vpn', {
  userId: text('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
  address: text('address').notNull(),
  privateKey: text('private_key').notNull(),
  publicKey: text('public_key').notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('user_vpn_address_idx').on(t.address)]);

/** A desktop's bastion target (reference §4.7): its id is the SSH user name and gives the HTTP(S) host name. */
export const bastionTargets = pgTable('bastion_targets', {
  id: text('id').primaryKey(),
  desktopId: text('desktop_id').notNull().references(() => domains.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  httpEnabled: boolean('http_enabled').notNull().default(false),
  httpPort: integer('http_port').notNull().default(80),
  httpsPort: integer('https_port').notNull().default(443),
  sshEnabled: boolean('ssh_enabled').notNull().default(false),
  sshPort: integer('ssh_port').notNull().default(22),
  authorizedKeys: jsonb('authorized_keys').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('bastion_targets_desktop_idx').on(t.desktopId), index('bastion_targets_user_idx').on(t.userId)]);

/**
 * Usage as it happens (issue 29): one row per time a desktop's machine ran, opened when it is up on a
 * host and closed when it is gone (modules/usage/record.ts, at the lifecycle's events). It keeps the
 * names of what it ran for (no foreign keys): the history outlives deleted users, templates, desktops.
 */
export const usageIntervals = pgTable('usage_intervals', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  desktopId: text('desktop_id').notNull(),
  desktopName: text('desktop_name').notNull(),
  userId: text('user_id').notNull(),
  username: text('username').notNull(),
  groupId: text('group_id').notNull(),
  groupName: text('group_name').notNull(),
  categoryId: text('category_id').notNull(),
  categoryName: text('category_name').notNull(),
  templateId: text('template_id').notNull().default(''),
  templateName: text('template_name').notNull().default(''),
  deploymentId: text('deployment_id').notNull().default(''),
  deploymentName: text('deployment_name').notNull().default(''),
  /** The GPU profile it ran with, or null. */
  gpuProfile: text('gpu_profile'),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  endedAt: timestamp('ended_at', { withTimezone: true }),
}, (t) => [
  index('usage_intervals_open_idx').on(t.desktopId, t.endedAt),
  index('usage_intervals_ended_idx').on(t.endedAt),
  // One open interval per desktop at most: a start told twice, or adopted after a restart, never counts twice.
  uniqueIndex('usage_intervals_one_open_idx').on(t.desktopId).where(sql`ended_at IS NULL`),
]);

/**
 * Usage rolled up per hour (modules/usage/rollup.ts) and the dimensions of a report, with their names:
 * one row per hour and desktop (desktop seconds, GPU seconds used and booked), per hour and deployment
 * (a deployment's bookings: desktop ''), per hour and user (sign-ins: desktop and deployment '').
 */
export const usageHours = pgTable('usage_hours', {
  hour: timestamp('hour', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  categoryName: text('category_name').notNull(),
  groupId: text('group_id').notNull(),
  groupName: text('group_name').notNull(),
  userId: text('user_id').notNull(),
  username: text('username').notNull(),
  templateId: text('template_id').notNull().default(''),
  templateName: text('template_name').notNull().default(''),
  deploymentId: text('deployment_id').notNull().default(''),
  deploymentName: text('deployment_name').notNull().default(''),
  desktopId: text('desktop_id').notNull().default(''),
  desktopName: text('desktop_name').notNull().default(''),
  desktopSeconds: integer('desktop_seconds').notNull().default(0),
  gpuBookedSeconds: integer('gpu_booked_seconds').notNull().default(0),
  gpuUsedSeconds: integer('gpu_used_seconds').notNull().default(0),
  signIns: integer('sign_ins').notNull().default(0),
}, (t) => [
  primaryKey({ columns: [t.hour, t.userId, t.desktopId, t.deploymentId] }),
  index('usage_hours_category_idx').on(t.categoryId, t.hour),
  index('usage_hours_key_idx').on(t.userId, t.desktopId, t.deploymentId, t.hour),
]);

/**
 * usage_hours summed per month (same keys and names): a report over months reads these (a year of 5,000
 * people: 12 rows each, not thousands), and usage_hours only for the days before its first whole month
 * and after its last. Kept exact by the roll-up (modules/usage/rollup.ts): each key it touched is summed again.
 */
export const usageMonths = pgTable('usage_months', {
  month: timestamp('month', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  categoryName: text('category_name').notNull(),
  groupId: text('group_id').notNull(),
  groupName: text('group_name').notNull(),
  userId: text('user_id').notNull(),
  username: text('username').notNull(),
  templateId: text('template_id').notNull().default(''),
  templateName: text('template_name').notNull().default(''),
  deploymentId: text('deployment_id').notNull().default(''),
  deploymentName: text('deployment_name').notNull().default(''),
  desktopId: text('desktop_id').notNull().default(''),
  desktopName: text('desktop_name').notNull().default(''),
  desktopSeconds: bigint('desktop_seconds', { mode: 'number' }).notNull().default(0),
  gpuBookedSeconds: bigint('gpu_booked_seconds', { mode: 'number' }).notNull().default(0),
  gpuUsedSeconds: bigint('gpu_used_seconds', { mode: 'number' }).notNull().default(0),
  signIns: integer('sign_ins').notNull().default(0),
}, (t) => [
  primaryKey({ columns: [t.month, t.userId, t.desktopId, t.deploymentId] }),
  index('usage_months_category_idx').on(t.categoryId, t.month),
]);

/**
 * usage_hours summed per UTC day and key (the keys and names of usage_months): a report reads the whole days
 * before its first whole month and after its last from here, the hours only for a partial day. Kept by the roll-up.
 */
export const usageDays = pgTable('usage_days', {
  day: timestamp('day', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  categoryName: text('category_name').notNull(),
  groupId: text('group_id').notNull(),
  groupName: text('group_name').notNull(),
  userId: text('user_id').notNull(),
  username: text('username').notNull(),
  templateId: text('template_id').notNull().default(''),
  templateName: text('template_name').notNull().default(''),
  deploymentId: text('deployment_id').notNull().default(''),
  deploymentName: text('deployment_name').notNull().default(''),
  desktopId: text('desktop_id').notNull().default(''),
  desktopName: text('desktop_name').notNull().default(''),
  desktopSeconds: bigint('desktop_seconds', { mode: 'number' }).notNull().default(0),
  gpuBookedSeconds: bigint('gpu_booked_seconds', { mode: 'number' }).notNull().default(0),
  gpuUsedSeconds: bigint('gpu_used_seconds', { mode: 'number' }).notNull().default(0),
  signIns: integer('sign_ins').notNull().default(0),
}, (t) => [
  primaryKey({ columns: [t.day, t.userId, t.desktopId, t.deploymentId] }),
  index('usage_days_category_idx').on(t.categoryId, t.day),
]);

/**
 * usage_hours summed per hour and organisation, and for the whole installation ('*'): the reports' series over
 * time (hours, concurrency, sign-ins). Keyed organisation first: a year's series reads its 8,760 hours at most.
 */
export const usageCategoryHours = pgTable('usage_category_hours', {
  hour: timestamp('hour', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  desktopSeconds: bigint('desktop_seconds', { mode: 'number' }).notNull().default(0),
  gpuBookedSeconds: bigint('gpu_booked_seconds', { mode: 'number' }).notNull().default(0),
  gpuUsedSeconds: bigint('gpu_used_seconds', { mode: 'number' }).notNull().default(0),
  signIns: integer('sign_ins').notNull().default(0),
}, (t) => [primaryKey({ columns: [t.categoryId, t.hour] })]);

/**
 * The highest number of desktops running at once in each hour (to the minute: the instant it was reached,
 * cut to its minute), per organisation and for the whole installation (category '*'). Computed by the
 * roll-up from usage_intervals (a sweep over their starts and ends), so a report's peak reads one row per hour.
 */
export const usagePeakHours = pgTable('usage_peak_hours', {
  hour: timestamp('hour', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  desktops: integer('desktops').notNull(),
  at: timestamp('at', { withTimezone: true }).notNull(),
}, (t) => [primaryKey({ columns: [t.categoryId, t.hour] })]);

/**
 * Storage used (the disks' allocated bytes: desktops' and templates'), sampled by the roll-up: per day and
 * owner, template and deployment (the last reading of the day), with the names a report groups by.
 * A template's own disks count under itself (template_id its id); a desktop's under the template it came from.
 */
export const usageStorageDays = pgTable('usage_storage_days', {
  day: timestamp('day', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  categoryName: text('category_name').notNull(),
  groupId: text('group_id').notNull(),
  groupName: text('group_name').notNull(),
  userId: text('user_id').notNull(),
  username: text('username').notNull(),
  templateId: text('template_id').notNull().default(''),
  templateName: text('template_name').notNull().default(''),
  deploymentId: text('deployment_id').notNull().default(''),
  deploymentName: text('deployment_name').notNull().default(''),
  bytes: bigint('bytes', { mode: 'number' }).notNull(),
}, (t) => [
  primaryKey({ columns: [t.day, t.userId, t.templateId, t.deploymentId] }),
  index('usage_storage_days_category_idx').on(t.categoryId, t.day),
]);

/** Storage used per hour and organisation, and for all ('*') (the last reading of the hour): the report's series over time. */
export const usageStorageHours = pgTable('usage_storage_hours', {
  hour: timestamp('hour', { withTimezone: true }).notNull(),
  categoryId: text('category_id').notNull(),
  bytes: bigint('bytes', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.categoryId, t.hour] })]);

/** How far each roll-up got: every hour before `doneUntil` is final. */
export const usageRollups = pgTable('usage_rollups', {
  name: text('name').primaryKey(),
  doneUntil: timestamp('done_until', { withTimezone: true }).notNull(),
});

/**
 * The dashboard's history (modules/usage/sampler.ts): one row a minute, kept a few days. Running desktops
 * and starts in the minute per organisation, the start queue's length, each hypervisor's CPU and memory.
 */
export const metricSamples = pgTable('metric_samples', {
  at: timestamp('at', { withTimezone: true }).primaryKey(),
  running: jsonb('running').$type<Record<string, number>>().notNull(),
  starts: jsonb('starts').$type<Record<string, number>>().notNull(),
  queued: integer('queued').notNull(),
  hypervisors: jsonb('hypervisors').$type<{ id: string; name: string; cpu_percent: number; memory_percent: number }[]>().notNull(),
});
