import type { TAdminHypervisor } from './admin-infra';
import type { TAdminImportJob } from './admin-people';
import { z } from 'zod';
import { LIST_PER_PAGE_MAX } from './desktops';
import type { TSettingKey } from './settings';
import { ZAuditEntry, type TAuditEntry } from './audit';

const dateParam = z.iso.datetime({ offset: true }).or(z.iso.date());

/**
 * Filters of the audit log: `actor` (user name or id), `action` (exact, or a prefix ending in `.`,
 * e.g. `auth.`), `object` (object id, or a part of its name), `from`/`to` (ISO date or date-time;
 * a date alone covers its whole day for `to`), paging from 1, newest first unless `sort=at`.
 */
export const ZAuditQuery = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    per_page: z.coerce.number().int().min(1).max(LIST_PER_PAGE_MAX).default(50),
    sort: z.enum(['at', '-at']).default('-at'),
    search: z.string().max(200).optional(),
    actor: z.string().max(200).optional(),
    action: z.string().max(100).optional(),
    object: z.string().max(200).optional(),
    from: dateParam.optional(),
    to: dateParam.optional(),
  })
  .strict();
export type TAuditQuery = z.input<typeof ZAuditQuery>;
export const ZAuditList = z.object({ items: z.array(ZAuditEntry), total: z.number().int() });
export type TAuditList = z.infer<typeof ZAuditList>;
/** The CSV export (`GET /admin/audit/export`, same filters without paging): at most this many rows. */
export const AUDIT_EXPORT_MAX = 100_000;
export const ZAuditExportQuery = ZAuditQuery.omit({ page: true, per_page: true });

/** The live namespace of the administration console (admins: one room; managers: their category's). */
export const ADMIN_SOCKET_NAMESPACE = '/administrators';

/** Events of /administrators (payloads travel as JSON strings, like /userspace's). */
export type AdminServerEvents = {
  /** A system setting changed (its key; the console reads it again). */
  settings_update: { key: TSettingKey };
  /** A new audit log entry. */
  audit_add: TAuditEntry;
  /** The people part's changes (users, groups, categories, codes): kind and id, the console reads again. */
  user_update: { id: string };
  user_delete: { id: string };
  group_update: { id: string };
  group_delete: { id: string };
  category_update: { id: string };
  category_delete: { id: string };
  registration_code_update: { code: string };
  /** A CSV import's progress and end (its counts; the rows not created are read with GET /admin/users/import/{id}). */
  user_import: Omit<TAdminImportJob, 'rows'>;
  /** A hypervisor's numbers and state (admins only; every few seconds while an admin is connected, and at each change). */
  hypervisor_update: TAdminHypervisor;
};
export type AdminEventName = keyof AdminServerEvents;

/** One backup of the installation kept under DATA_DIR/backups (`GET /api/v3/admin/backups`). */
export const ZAdminBackup = z.object({ name: z.string(), size: z.number(), created: z.string() });
export type TAdminBackup = z.infer<typeof ZAdminBackup>;
/** A backup job: queued or running now, or the last one that ended. */
export const ZAdminBackupJob = z.object({
  id: z.string(),
  status: z.enum(['queued', 'running', 'done', 'failed', 'aborted']),
  progress: z.number(),
  error: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
  /** The archive it made (done). */
  name: z.string().nullable(),
});
export type TAdminBackupJob = z.infer<typeof ZAdminBackupJob>;
export const ZAdminBackups = z.object({
  items: z.array(ZAdminBackup),
  /** The newest backup kept, null when none. */
  last: ZAdminBackup.nullable(),
  /** The newest backup job (running, or the last one). */
  job: ZAdminBackupJob.nullable(),
});
export type TAdminBackups = z.infer<typeof ZAdminBackups>;
/** `POST /api/v3/admin/backups`: `disks` adds the desktops' and templates' disks (DATA_DIR/storage). */
export const ZAdminBackupStart = z.object({ disks: z.boolean().default(false) }).strict();
/** A backup's file name as the server makes them (`backup-<time>.tar.gz`). */
export const ZBackupName = z.string().regex(/^backup-[\w-]+\.tar\.gz$/).max(100);
