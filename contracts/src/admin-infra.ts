import { z } from 'zod';
import { ZAdminListQuery, adminList } from './admin-people';
import { STORAGE_STATUSES } from './storage';
import { ZAuditEntry } from './audit';

/**
 * The administration console's infrastructure calls (/api/v3/admin): storage (disks, the check of
 * files against records, pools), jobs, hypervisors and the dashboard. Admins see everything;
 * managers their category's disks, jobs and numbers, and no hypervisor.
 */
const id = z.string().min(1).max(64);

// ------------------------------------------------------------------ storage
export const ADMIN_STORAGE_SORTS = ['path', 'kind', 'status', 'owner', 'category', 'size', 'virtual_size', 'created', 'last_used'] as const;
export const ADMIN_STORAGE_KINDS = ['desktop', 'volatile', 'template'] as const;
export const ZAdminStorageQuery = ZAdminListQuery.extend({
  sort: z.enum(ADMIN_STORAGE_SORTS).optional(),
  status: z.enum(STORAGE_STATUSES).optional(),
  kind: z.enum(ADMIN_STORAGE_KINDS).optional(),
  category: id.optional(),
  owner: id.optional(),
});
export type TAdminStorageQuery = z.input<typeof ZAdminStorageQuery>;

/** One link of a disk's chain: the disk itself first, then each base it is built on. */
export const ZAdminStorageLink = z.object({ id: z.string(), path: z.string(), kind: z.string(), status: z.string() });
export const ZAdminStorageItem = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.string(),
  format: z.string(),
  /** Relative to the storage folder. */
  path: z.string(),
  parent: z.string().nullable(),
  /** The bases below this disk, nearest first (the disk itself not included). */
  chain: z.array(ZAdminStorageLink),
  /** How many disks are built on this one. */
  derivatives: z.number().int(),
  user_id: z.string(),
  user_name: z.string(),
  category: z.string(),
  category_name: z.string(),
  domains: z.array(z.object({ id: z.string(), name: z.string(), kind: z.string(), status: z.string() })),
  actual_size: z.number(),
  virtual_size: z.number(),
  created: z.string(),
  last_used: z.string().nullable(),
});
export type TAdminStorageItem = z.infer<typeof ZAdminStorageItem>;
export const ZAdminStorageList = adminList(ZAdminStorageItem);
export type TAdminStorageList = z.infer<typeof ZAdminStorageList>;

/** A file under the storage folder that no record owns (path relative to the storage folder). */
export const ZStorageOrphanFile = z.object({ path: z.string(), size: z.number(), modified: z.string() });
/** A record whose file is gone: a disk (storage) or a media. */
export const ZStorageMissingFile = z.object({
  type: z.enum(['storage', 'media']),
  id: z.string(),
  name: z.string(),
  status: z.string(),
  path: z.string(),
  user_name: z.string(),
  category: z.string(),
});
export const ZAdminStorageCheck = z.object({
  checked_at: z.string(),
  /** Files without a record (admins only: a file has no category; managers get none). */
  files_without_rows: z.array(ZStorageOrphanFile),
  rows_without_files: z.array(ZStorageMissingFile),
});
export type TAdminStorageCheck = z.infer<typeof ZAdminStorageCheck>;

/** Removes files the check reported as owned by no record (paths as the check gave them). */
export const ZAdminStorageRemove = z.object({ paths: z.array(z.string().min(1).max(1024)).min(1).max(1000) }).strict();
export type TAdminStorageRemove = z.infer<typeof ZAdminStorageRemove>;
export const ZAdminStorageRemoved = z.object({
  removed: z.array(z.string()),
  /** Paths that are no longer orphans (a record owns them now, or they are gone): left alone. */
  skipped: z.array(z.string()),
});

/** A storage pool: a folder disks live in, with its file system's space (bytes). */
export const ZAdminStoragePool = z.object({
  id: z.string(),
  /** Relative to the data folder. */
  path: z.string(),
  /** What it holds: templates, desktops, volatile disks, media. */
  kind: z.string(),
  available: z.boolean(),
  total: z.number(),
  free: z.number(),
  used: z.number(),
  /** Disks (or media) recorded under it, and their bytes on the host. */
  items: z.number().int(),
  items_size: z.number(),
});
export const ZAdminStoragePools = z.object({ items: z.array(ZAdminStoragePool) });
export type TAdminStoragePool = z.infer<typeof ZAdminStoragePool>;

// ------------------------------------------------------------------ jobs
export const ADMIN_JOB_KINDS = ['media_download', 'disk_resize', 'template_create', 'deployment_create', 'user_import', 'base_copy', 'backup'] as const;
export const ADMIN_JOB_STATES = ['active', 'finished'] as const;
export const ZAdminJobsQuery = ZAdminListQuery.extend({
  sort: z.enum(['created', 'updated', 'kind', 'status', 'progress']).optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
  kind: z.string().max(64).optional(),
  /** active: queued or running; finished: done, failed or aborted. */
  state: z.enum(ADMIN_JOB_STATES).optional(),
  category: id.optional(),
});
export type TAdminJobsQuery = z.input<typeof ZAdminJobsQuery>;
export const ZAdminJob = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.enum(['queued', 'running', 'done', 'failed', 'aborted']),
  progress: z.number(),
  target_id: z.string(),
  /** The desktop, template, media, deployment or disk it works on, when it still exists. */
  target_name: z.string().nullable(),
  user_id: z.string(),
  user_name: z.string(),
  category: z.string().nullable(),
  error: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
  /** Work counted in bytes (a template's base copied to a hypervisor): done of total; null for the others. */
  bytes: z.object({ done: z.number(), total: z.number() }).nullable(),
});
export type TAdminJob = z.infer<typeof ZAdminJob>;
export const ZAdminJobList = adminList(ZAdminJob);
export type TAdminJobList = z.infer<typeof ZAdminJobList>;

// ------------------------------------------------------------------ hypervisors
export const ZAdminHypervisor = z.object({
  id: z.string(),
  name: z.string(),
  /** Online: its engine answers; Offline: it does not (or it is not this server's). */
  state: z.enum(['Online', 'Offline']),
  enabled: z.boolean(),
  /** Takes only desktops forced onto it: no new ordinary starts. */
  only_forced: z.boolean(),
  /** Whether new desktops start here (enabled and not only forced). */
  accepts_starts: z.boolean(),
  accel: z.enum(['kvm', 'tcg']).nullable(),
  gpus: z.array(z.object({ address: z.string(), vendor: z.string(), device: z.string() })),
  cpus: z.number().int(),
  /** Share of the host's CPU time busy since the previous sample, 0–100. */
  cpu_used_percent: z.number(),
  /** 1, 5 and 15 minute load averages. */
  load: z.array(z.number()),
  memory_total_mb: z.number(),
  memory_used_mb: z.number(),
  /** Memory and vCPUs given to the running desktops. */
  desktops_memory_mb: z.number(),
  desktops_vcpus: z.number(),
  desktops_running: z.number().int(),
  /** Desktops whose state is not known while the host is offline (`Unknown`): marking the host down stops them. */
  desktops_unknown: z.number().int(),
  /** Being emptied: no new starts; removable once `desktops_running` is 0. */
  draining: z.boolean(),
  /** How the engine reaches it (normalised, no credentials); null for this server's own host. */
  uri: z.string().nullable(),
  cpu_model: z.string(),
  memory_free_mb: z.number(),
  starts_in_flight: z.number().int(),
  pools: z.array(z.object({ name: z.string(), path: z.string(), capacity_bytes: z.number(), free_bytes: z.number() })),
  /** Why it is offline (the engine's words, never a credential), or null. */
  last_error: z.string().nullable(),
  /** Not used on purpose: this server's own host while the answering process runs none (LOCAL_HYPERVISOR=off); not an error. */
  off_by_configuration: z.boolean(),
  /** The server process (its SERVER_ID) that watches the host's events now, one at a time; null: none (or unnamed). */
  watched_by: z.string().nullable(),
  updated: z.string(),
});
export type TAdminHypervisor = z.infer<typeof ZAdminHypervisor>;
export const ZAdminHypervisorList = z.object({ items: z.array(ZAdminHypervisor), total: z.number().int() });
export type TAdminHypervisorList = z.infer<typeof ZAdminHypervisorList>;
/** Drain: no new starts there (true), or take starts again (false). */
export const ZAdminHypervisorDrain = z.object({ draining: z.boolean() }).strict();
export type TAdminHypervisorDrain = z.infer<typeof ZAdminHypervisorDrain>;
/**
 * The drained host and the desktops still running there: "ask them all to shut down" is the
 * console's bulk stop (`POST /admin/desktops/stop` with these ids), with its usual warnings.
 */
export const ZAdminHypervisorDrained = z.object({ hypervisor: ZAdminHypervisor, running_desktop_ids: z.array(z.string()) });
/**
 * An offline host marked down: the desktops that ran there are stopped (temporary ones deleted) and
 * may start on another host; what still runs there is destroyed when it comes back.
 */
export const ZAdminHypervisorMarkedDown = z.object({ hypervisor: ZAdminHypervisor, released_desktop_ids: z.array(z.string()) });
export type TAdminHypervisorMarkedDown = z.infer<typeof ZAdminHypervisorMarkedDown>;
export type TAdminHypervisorDrained = z.infer<typeof ZAdminHypervisorDrained>;
export const ZAdminHypervisorUpdate = z
  .object({ enabled: z.boolean().optional(), only_forced: z.boolean().optional() })
  .strict()
  .refine((b) => b.enabled !== undefined || b.only_forced !== undefined, { message: 'enabled or only_forced' });
export type TAdminHypervisorUpdate = z.infer<typeof ZAdminHypervisorUpdate>;

/** libvirt transports a remote hypervisor is reached by (an SSH key, or TLS certificates). */
export const HYPERVISOR_URI_SCHEMES = ['qemu+ssh', 'qemu+tls'] as const;
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;
const SSH_USER = /^[a-z_][a-z0-9_.-]{0,31}$/i;

/**
 * A libvirt URI a hypervisor is added by, normalised (`qemu+ssh://user@host[:port]/system`,
 * `qemu+tls://host[:port]/system`: lower-case scheme and host, no default port, no password, no
 * query), or null when it is not one. One rule for the console's form and the server.
 */
export function normaliseHypervisorUri(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  const scheme = u.protocol.replace(/:$/, '').toLowerCase();
  if (!(HYPERVISOR_URI_SCHEMES as readonly string[]).includes(scheme)) return null;
  // Passwords, query options (keyfile, no_verify, socket…) and fragments are refused, not dropped:
  // the engine decides how it connects (the installation's key), and a URI is shown to admins.
  if (u.password || u.search || u.hash || u.pathname !== '/system') return null;
  const host = u.hostname.toLowerCase();
  if (!HOST_NAME.test(host) && !IPV6.test(host) && !/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return null;
  const user = decodeURIComponent(u.username);
  if (scheme === 'qemu+tls' ? user !== '' : user !== '' && !SSH_USER.test(user)) return null;
  const defaultPort = scheme === 'qemu+ssh' ? '22' : '16514';
  const port = u.port && u.port !== defaultPort ? `:${u.port}` : '';
  return `${scheme}://${user ? `${user}@` : ''}${host}${port}/system`;
}

/**
 * Add a hypervisor: the first call (no fingerprint) answers the host key to confirm; the second,
 * with that fingerprint, connects and stores it. Nothing is stored before the second call succeeds.
 */
export const ZAdminHypervisorAdd = z
  .object({
    uri: z.string().trim().min(1).max(512),
    name: z.string().trim().min(1).max(64).optional(),
    /** `SHA256:…` as the first call answered it */
    host_key_fingerprint: z.string().trim().min(1).max(128).optional(),
  })
  .strict();
export type TAdminHypervisorAdd = z.infer<typeof ZAdminHypervisorAdd>;
/** The first call's answer: the host key the host presents, to compare with `ssh-keygen -lf` on the host. */
export const ZAdminHypervisorHostKey = z.object({ uri: z.string(), algorithm: z.string(), fingerprint: z.string() });
export type TAdminHypervisorHostKey = z.infer<typeof ZAdminHypervisorHostKey>;
/**
 * A `qemu+tls` host's certificates, issued by the installation's CA: the host's libvirtd takes the CA
 * certificate (`ca_file`), its own certificate and key (`cert_file`, `key_file`), and then trusts the
 * installation's client certificate. `host`: the name or address the hypervisor's URI will use.
 */
export const ZAdminHypervisorTlsRequest = z.object({ host: z.string().trim().min(1).max(253) }).strict();
export const ZAdminHypervisorTlsBundle = z.object({ host: z.string(), ca_certificate: z.string(), server_certificate: z.string(), server_key: z.string() });
export type TAdminHypervisorTlsBundle = z.infer<typeof ZAdminHypervisorTlsBundle>;
/** The installation's public SSH key, for the hosts' `authorized_keys`; null until one exists. */
export const ZAdminHypervisorSshKey = z.object({ public_key: z.string().nullable() });
export type TAdminHypervisorSshKey = z.infer<typeof ZAdminHypervisorSshKey>;
/** Preferred hypervisors of a template or deployment (the original's `forced_hyp` / `favourite_hyp`). */
export const ZPreferredHypervisors = z
  .object({ forced_hyp: z.array(z.string().min(1).max(64)).max(64), favourite_hyp: z.array(z.string().min(1).max(64)).max(64) })
  .strict();
export type TPreferredHypervisors = z.infer<typeof ZPreferredHypervisors>;

// ------------------------------------------------------------------ dashboard
export const ZAdminDashboard = z.object({
  /** The category the numbers are of (a manager's), or null for the whole system. */
  category: z.string().nullable(),
  users_online: z.number().int(),
  users_total: z.number().int(),
  desktops_running: z.number().int(),
  desktops_total: z.number().int(),
  /** Admins only (managers see no hypervisor). */
  hypervisors: z
    .object({ online: z.number().int(), accepting: z.number().int(), total: z.number().int(), cpu_used_percent: z.number(), load: z.number(), memory_used_mb: z.number(), memory_total_mb: z.number() })
    .nullable(),
  bookings_today: z.number().int(),
  jobs_busy: z.number().int(),
  audit: z.array(ZAuditEntry),
  at: z.string(),
});
export type TAdminDashboard = z.infer<typeof ZAdminDashboard>;
