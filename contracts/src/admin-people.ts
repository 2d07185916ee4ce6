import { z } from 'zod';
import { ZLimits, ZQuota } from './quota';
import { ZRole } from './roles';

/**
 * The administration console's people calls (/api/v3/admin): users, groups, categories and
 * registration codes. Lists answer `{items, total}` and take page, per_page, sort, order, search.
 */
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');
const id = z.string().min(1).max(64);

export const ZAdminListQuery = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  per_page: z.coerce.number().int().min(1).max(500).default(25),
  sort: z.string().max(32).optional(),
  order: z.enum(['asc', 'desc']).default('asc'),
  search: z.string().max(100).optional(),
});
export type TAdminListQuery = z.infer<typeof ZAdminListQuery>;

export const adminList = <T extends z.ZodTypeAny>(item: T) => z.object({ items: z.array(item), total: z.number().int() });

// ------------------------------------------------------------------ users
export const ADMIN_USER_SORTS = ['username', 'name', 'email', 'role', 'category', 'group', 'active', 'accessed', 'created'] as const;
export const ZAdminUsersQuery = ZAdminListQuery.extend({
  sort: z.enum(ADMIN_USER_SORTS).optional(),
  category: id.optional(),
  group: id.optional(),
  role: ZRole.optional(),
  active: flag.optional(),
  provider: z.string().max(32).optional(),
});

export const ZAdminUser = z.object({
  id: z.string(),
  username: z.string(),
  name: z.string(),
  email: z.string(),
  role: ZRole,
  category: z.string(),
  category_name: z.string(),
  group: z.string(),
  group_name: z.string(),
  secondary_groups: z.array(z.string()),
  active: z.boolean(),
  provider: z.string(),
  quota: ZQuota.nullable(),
  accessed: z.string().nullable(),
  created: z.string(),
  /** Whether the person signs in with a second factor (TOTP). */
  two_factor: z.boolean(),
});
export type TAdminUser = z.infer<typeof ZAdminUser>;
export const ZAdminUserList = adminList(ZAdminUser);
export type TAdminUserList = z.infer<typeof ZAdminUserList>;

/** User names as the sign-in accepts them: no spaces, no slashes. */
export const ZUsername = z.string().trim().min(1).max(64).regex(/^[^\s/\\]+$/, 'invalid_characters');
const email = z.union([z.literal(''), z.string().trim().max(254).email()]);

export const ZAdminUserCreate = z
  .object({
    username: ZUsername,
    name: z.string().trim().min(1).max(128),
    email: email.default(''),
    role: ZRole,
    /** Managers: their own category (may be left out). */
    category: id.optional(),
    group: id,
    secondary_groups: z.array(id).max(100).default([]),
    active: z.boolean().default(true),
    /** Left out: the user sets one through a reset link (`POST /admin/users/{id}/reset-mail`). */
    password: z.string().min(1).max(256).optional(),
    quota: ZQuota.nullable().default(null),
  })
  .strict();
export type TAdminUserCreate = z.input<typeof ZAdminUserCreate>;

export const ZAdminUserUpdate = z
  .object({
    name: z.string().trim().min(1).max(128),
    email,
    role: ZRole,
    /** Admins only: moving to another category needs a group of it. */
    category: id,
    group: id,
    secondary_groups: z.array(id).max(100),
    active: z.boolean(),
    password: z.string().min(1).max(256),
    quota: ZQuota.nullable(),
  })
  .partial()
  .strict();
export type TAdminUserUpdate = z.infer<typeof ZAdminUserUpdate>;

export const ZAdminUsersBulk = z
  .object({
    ids: z.array(id).min(1).max(1000),
    action: z.enum(['enable', 'disable', 'change_group', 'delete']),
    /** With change_group. */
    group: id.optional(),
  })
  .strict();
export type TAdminUsersBulk = z.infer<typeof ZAdminUsersBulk>;
export const ZRowError = z.object({ code: z.string(), params: z.record(z.string(), z.unknown()).nullable() });
export const ZAdminUsersBulkAnswer = z.object({
  done: z.number().int(),
  failed: z.array(z.object({ id: z.string(), description_code: z.string() })),
});
export type TAdminUsersBulkAnswer = z.infer<typeof ZAdminUsersBulkAnswer>;

/**
 * Classroom accounts: one-time passwords for many local users at once (`POST /admin/users/password-reset`).
 * Each reset user must change it at the next sign-in; each user that cannot be reset is refused with its
 * reason (directory accounts, out of reach, the caller themself), never the whole batch.
 */
export const PASSWORD_RESET_BATCH_MAX = 100;
export const ZAdminPasswordReset = z.object({ ids: z.array(id).min(1).max(PASSWORD_RESET_BATCH_MAX) }).strict();
export type TAdminPasswordReset = z.infer<typeof ZAdminPasswordReset>;
export const ZCredentialRow = z
  .object({
    name: z.string().max(200),
    username: z.string().min(1).max(200),
    password: z.string().min(1).max(128),
    organisation: z.string().max(200),
  })
  .strict();
export type TCredentialRow = z.infer<typeof ZCredentialRow>;
export const ZAdminPasswordResetAnswer = z.object({
  /** Shown once: the server keeps only their hashes. */
  reset: z.array(ZCredentialRow.extend({ id: z.string() })),
  refused: z.array(z.object({ id: z.string(), username: z.string().nullable(), name: z.string().nullable(), description_code: z.string() })),
  /** The portal's configured public address (PUBLIC_URL), null when none is set. */
  sign_in_url: z.string().nullable(),
});
export type TAdminPasswordResetAnswer = z.infer<typeof ZAdminPasswordResetAnswer>;
/** The credentials sheet, rendered from the rows the browser holds (`POST /admin/users/credentials-sheet`); nothing is stored. */
export const CREDENTIAL_SHEET_MAX = 2000;
export const ZCredentialSheet = z
  .object({
    format: z.enum(['csv', 'pdf']),
    rows: z.array(ZCredentialRow).min(1).max(CREDENTIAL_SHEET_MAX),
    /** The column and card labels in the person's language. */
    labels: z
      .object({
        title: z.string().max(200),
        name: z.string().max(100),
        username: z.string().max(100),
        password: z.string().max(100),
        address: z.string().max(100),
        organisation: z.string().max(100),
        change_hint: z.string().max(300),
      })
      .strict(),
  })
  .strict();
export type TCredentialSheet = z.infer<typeof ZCredentialSheet>;

/** The CSV the import reads and the export writes. */
export const USER_CSV_HEADER = ['username', 'name', 'email', 'role', 'group', 'password'] as const;
export const ZAdminImportQuery = z.object({ dry_run: z.enum(['true', 'false']).default('true').transform((v) => v === 'true') });
export const ZAdminImportRow = z.object({
  /** Line of the file, the header being line 1. */
  line: z.number().int(),
  username: z.string(),
  status: z.enum(['valid', 'created', 'error']),
  errors: z.array(ZRowError),
});
export type TAdminImportRow = z.infer<typeof ZAdminImportRow>;
export const ZAdminImportAnswer = z.object({
  dry_run: z.boolean(),
  total: z.number().int(),
  valid: z.number().int(),
  invalid: z.number().int(),
  created: z.number().int(),
  rows: z.array(ZAdminImportRow),
});
export type TAdminImportAnswer = z.infer<typeof ZAdminImportAnswer>;
/** The job kind of a real import (a dry run answers at once). */
export const USER_IMPORT_JOB = 'user_import';
/**
 * A real import runs as a job (POST /admin/users/import?dry_run=false answers 202 with it at once):
 * its counts while it runs, and at the end the rows that were not created, with their reasons.
 * GET /admin/users/import/{id} reads it; DELETE /admin/jobs/{id} cancels it (rows created stay).
 */
export const ZAdminImportJob = z.object({
  id: z.string(),
  status: z.enum(['queued', 'running', 'done', 'failed', 'aborted']),
  progress: z.number(),
  error: z.string().nullable(),
  /** Rows of the file (without the header). */
  total: z.number().int(),
  /** Rows checked so far, then rows handled (created or failed). */
  done: z.number().int(),
  created: z.number().int(),
  failed: z.number().int(),
  /** The rows not created, with their reasons (filled in as the job ends). */
  rows: z.array(ZAdminImportRow),
});
export type TAdminImportJob = z.infer<typeof ZAdminImportJob>;

// ------------------------------------------------------------------ groups
export const ZAdminGroupsQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'category', 'users']).optional(),
  category: id.optional(),
});
export const ZAdminGroup = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  category_name: z.string(),
  users: z.number().int(),
  quota: ZQuota.nullable(),
  limits: ZLimits.nullable(),
  /** Members with one desktop land in it at sign-in (unless they chose otherwise in their profile). */
  open_desktop_at_sign_in: z.boolean(),
});
export type TAdminGroup = z.infer<typeof ZAdminGroup>;
export const ZAdminGroupList = adminList(ZAdminGroup);
export type TAdminGroupList = z.infer<typeof ZAdminGroupList>;
export const ZAdminGroupCreate = z
  .object({
    name: z.string().trim().min(1).max(128),
    description: z.string().max(1000).default(''),
    /** Managers: their own category (may be left out). */
    category: id.optional(),
    quota: ZQuota.nullable().default(null),
    limits: ZLimits.nullable().default(null),
    open_desktop_at_sign_in: z.boolean().default(false),
  })
  .strict();
export type TAdminGroupCreate = z.input<typeof ZAdminGroupCreate>;
export const ZAdminGroupUpdate = z
  .object({
    name: z.string().trim().min(1).max(128),
    description: z.string().max(1000),
    quota: ZQuota.nullable(),
    limits: ZLimits.nullable(),
    open_desktop_at_sign_in: z.boolean(),
  })
  .partial()
  .strict();
export type TAdminGroupUpdate = z.infer<typeof ZAdminGroupUpdate>;

// ------------------------------------------------------------------ categories
export const ZAdminCategoriesQuery = ZAdminListQuery.extend({ sort: z.enum(['name', 'users', 'groups']).optional() });
export const ZAdminCategory = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  /** The login address: /login/{provider}/{custom_url_name}. */
  custom_url_name: z.string(),
  frontend: z.boolean(),
  allowed_email_domains: z.array(z.string()),
  maintenance: z.boolean(),
  /** Hours in the recycle bin; null = the system setting. */
  recycle_bin_cutoff_hours: z.number().int().nullable(),
  quota: ZQuota.nullable(),
  limits: ZLimits.nullable(),
  /** The storage pool its desktops' disks go to (a pool name the hypervisors declare); null = the shared storage folder. */
  storage_pool: z.string().nullable(),
  users: z.number().int(),
  groups: z.number().int(),
});
export type TAdminCategory = z.infer<typeof ZAdminCategory>;
export const ZAdminCategoryList = adminList(ZAdminCategory);
export type TAdminCategoryList = z.infer<typeof ZAdminCategoryList>;
const customUrl = z.string().trim().min(1).max(64).regex(/^[a-z0-9][a-z0-9_-]*$/, 'invalid_characters');
/** The shared pool's name: the installation's storage folder, where a category mapped to no pool keeps its disks. */
export const SHARED_STORAGE_POOL = 'default';
/** A libvirt storage pool's name as hosts declare it (`default` is the shared storage folder, stored as null). */
export const ZStoragePoolName = z.string().trim().min(1).max(32).regex(/^[A-Za-z0-9_-]+$/, 'invalid_pool_name');
const domain = z.string().trim().toLowerCase().min(1).max(253).regex(/^@?[a-z0-9.-]+\.[a-z]{2,}$/, 'invalid_characters');
export const ZAdminCategoryCreate = z
  .object({
    name: z.string().trim().min(1).max(128),
    description: z.string().max(1000).default(''),
    custom_url_name: customUrl,
    frontend: z.boolean().default(true),
    allowed_email_domains: z.array(domain).max(100).default([]),
    maintenance: z.boolean().default(false),
    recycle_bin_cutoff_hours: z.number().int().min(0).max(100_000).nullable().default(null),
    quota: ZQuota.nullable().default(null),
    limits: ZLimits.nullable().default(null),
    storage_pool: ZStoragePoolName.nullable().default(null),
  })
  .strict();
export type TAdminCategoryCreate = z.input<typeof ZAdminCategoryCreate>;
export const ZAdminCategoryUpdate = z
  .object({
    name: z.string().trim().min(1).max(128),
    description: z.string().max(1000),
    custom_url_name: customUrl,
    frontend: z.boolean(),
    allowed_email_domains: z.array(domain).max(100),
    maintenance: z.boolean(),
    recycle_bin_cutoff_hours: z.number().int().min(0).max(100_000).nullable(),
    quota: ZQuota.nullable(),
    limits: ZLimits.nullable(),
    storage_pool: ZStoragePoolName.nullable(),
  })
  .partial()
  .strict();
export type TAdminCategoryUpdate = z.infer<typeof ZAdminCategoryUpdate>;

// ------------------------------------------------------------------ registration codes
export const ZAdminCodesQuery = ZAdminListQuery.extend({ sort: z.enum(['group', 'role', 'created']).optional(), group: id.optional() });
export const ZAdminRegistrationCode = z.object({
  code: z.string(),
  category: z.string(),
  category_name: z.string(),
  group: z.string(),
  group_name: z.string(),
  role: ZRole,
  description: z.string(),
  created: z.string(),
});
export type TAdminRegistrationCode = z.infer<typeof ZAdminRegistrationCode>;
export const ZAdminCodeList = adminList(ZAdminRegistrationCode);
export type TAdminCodeList = z.infer<typeof ZAdminCodeList>;
export const ZAdminCodeCreate = z
  .object({ group: id, role: ZRole, description: z.string().max(500).default('') })
  .strict();
export type TAdminCodeCreate = z.input<typeof ZAdminCodeCreate>;
