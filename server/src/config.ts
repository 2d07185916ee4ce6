import { isIP } from 'node:net';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { LINK_PREFIX_RE, MAX_PREFIX, NAMESPACE_RE, parseCidr } from './network/plan';
import { DEFAULT_VNI } from './network/tunnel';

const guestCidrOk = (v: string) => {
  const n = parseCidr(v);
  return n !== null && n.prefix >= 8 && n.prefix <= MAX_PREFIX;
};

const bool = z
  .enum(['0', '1', 'true', 'false', 'yes', 'no', 'on', 'off', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes' || v === 'on');

/** Fastify's names for address ranges (proxy-addr), besides addresses and CIDRs. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];
const proxyEntry = (entry: string) => {
  if (PROXY_RANGES.includes(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || !address || !isIP(address)) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max;
};
/** Off by default ('', 0, false, no); otherwise a comma-separated list of the proxies whose forwarded headers are believed. */
const trustProxy = z
  .string()
  .default('')
  .transform((v) => (['', '0', 'false', 'no'].includes(v.trim()) ? [] : v.split(',').map((x) => x.trim()).filter(Boolean)))
  .refine((list) => list.every(proxyEntry), 'a comma-separated list of proxy addresses or CIDRs (or loopback, linklocal, uniquelocal)');

/** A port number, `0` for any free one (tests), or `off`. */
const portOrOff = z
  .string()
  .regex(/^(off|\d{1,5})$/, 'a port number or off')
  .transform((v) => (v === 'off' ? null : Number(v)))
  .refine((v) => v === null || v <= 65535, 'a port number or off');

const ZEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).optional(),
  DEMO_PASSWORD: z.string().min(1).optional(),
  SECRET: z.string().min(16).optional(),
  PUBLIC_URL: z.string().url().optional(),
  SEED_DEMO: bool.default(true),
  SESSION_TOKEN_SECONDS: z.coerce.number().int().min(10).default(300),
  SESSION_MAX_RENEW_SECONDS: z.coerce.number().int().min(10).default(1800),
  SESSION_MAX_SECONDS: z.coerce.number().int().min(60).default(8 * 3600),
  SMTP_HOST: z.string().optional(),
  SMTP_PORT: z.coerce.number().int().optional(),
  SMTP_USER: z.string().optional(),
  SMTP_PASSWORD: z.string().optional(),
  SMTP_SECURE: bool.default(false),
  MAIL_FROM: z.string().default('VDI portal <no-reply@localhost>'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WEB_DIST: z.string().optional(),
  IMAGES_DIR: z.string().optional(),
  ACCEL: z.enum(['kvm', 'tcg', 'auto']).default('auto'),
  START_CONCURRENCY: z.coerce.number().int().min(1).optional(),
  VCPU_OVERCOMMIT: z.coerce.number().int().min(1).max(64).default(8),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(5).default(120),
  HYPERVISOR_DOWN_AFTER_SECONDS: z.coerce.number().int().min(0).default(0),
  DIRECT_VIEWER_DELAY_MS: z.coerce.number().int().min(0).default(3000),
  /** Files to and from a desktop (its guest agent): the folder in the guest, the largest upload in MB. */
  GUEST_FILES_FOLDER: z.string().regex(/^\/[^\0\n]*$/, 'an absolute path').default('/srv/Transfer'),
  GUEST_FILES_MAX_MB: z.coerce.number().positive().max(10_240).default(100),
  MEDIA_ALLOW_PRIVATE_URLS: bool.default(false),
  RECYCLE_BIN_PURGE_SECONDS: z.coerce.number().int().min(1).default(300),
  DISK_OPERATION_DELAY_MS: z.coerce.number().int().min(0).default(0),
  TRUST_PROXY: trustProxy,
  LOGIN_ADDRESS_FAILURES: z.coerce.number().int().min(1).default(30),
  EMBEDDED_EAGER_COMPILE: bool.default(true),
  RDP_GATEWAY_PORT: z
    .string()
    .default('8443')
    .refine((v) => v === 'off' || (/^\d{1,5}$/.test(v) && Number(v) <= 65535), 'a port number (0: any free port) or off'),
  RDP_GATEWAY_PUBLIC: z.string().regex(/^[A-Za-z0-9.\-[\]:]+$/, 'host[:port]').optional(),
  TLS_CERT: z.string().optional(),
  TLS_KEY: z.string().optional(),
  VPN_PORT: portOrOff.default(443),
  VPN_HOST: z.string().max(253).regex(/^[A-Za-z0-9.:[\]-]+$/).optional(),
  VPN_USERS_NETWORK: z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/(1[6-9]|2[0-4])$/, 'an IPv4 range from /16 to /24 like 10.0.0.0/16').default('10.0.0.0/16'),
  BASTION_DOMAIN: z.string().max(200).regex(/^[A-Za-z0-9.-]+$/).optional(),
  BASTION_SSH_PORT: portOrOff.default(null),
  BASTION_HTTP_PORT: portOrOff.default(null),
  BASTION_HTTPS_PORT: portOrOff.default(null),
  BASTION_HOST: z.string().default('0.0.0.0'),
  HTTP_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  HTTPS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  GUEST_NETWORK: z.string().default('10.2.0.0/16').refine((v) => v === 'off' || guestCidrOk(v), 'an IPv4 range from /8 to /28 like 10.2.0.0/16, or off'),
  GUEST_NETWORK_NAMESPACE: z.string().regex(NAMESPACE_RE).optional(),
  GUEST_NETWORK_LINK_PREFIX: z.string().regex(LINK_PREFIX_RE).optional(),
  GUEST_NETWORK_VNI: z.coerce.number().int().min(1).max(0xffffff).default(DEFAULT_VNI),
  GUEST_NETWORK_TUNNEL_ADDRESS: z.string().refine((v) => isIP(v) === 4, 'an IPv4 address of this machine').optional(),
  GUEST_IP_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(300),
  POOL_BOOT_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  SERVER_ID: z.string().max(64).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : -').optional(),
  LOCAL_HYPERVISOR: bool.default(true),
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().min(0).max(60).default(0),
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  BACKUP_KEEP: z.coerce.number().int().min(0).default(7),
  METRICS_ALLOW: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean))
    .refine((list) => list.every((e) => !PROXY_RANGES.includes(e) && proxyEntry(e)), 'a comma-separated list of addresses or CIDRs'),
});

export type Config = {
  /** How many backups DATA_DIR/backups keeps (the newest; older ones are deleted after each new one); 0: all. */
  backupKeep: number;
  /** GET /metrics: a scraper presents the token (Authorization: Bearer) or comes from an allowed address; neither set: off. */
  metrics: { token: string | null; allow: string[] };
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /** Connections to PostgreSQL this process holds at most (DATABASE_URL only); unset: the database adapter's default. */
  databasePoolSize?: number;
  demoPassword?: string;
  secret: string;
  publicUrl?: string;
  seedDemo: boolean;
  session: { tokenSeconds: number; maxRenewSeconds: number; maxSeconds: number };
  smtp?: { host: string; port: number; user?: string; password?: string; secure: boolean };
  mailFrom: string;
  logLevel: z.infer<typeof ZEnv>['LOG_LEVEL'];
  webDist?: string;
  /** Where the demo guest image is built (default DATA_DIR/images); tests share one. */
  imagesDir: string;
  accel: 'kvm' | 'tcg' | 'auto';
  startConcurrency?: number;
  /** A graceful shutdown that takes longer becomes a hard stop. */
  shutdownTimeoutSeconds: number;
  /** A remote hypervisor offline this long is marked down on its own (its desktops stopped, to start
   *  elsewhere); 0: only an admin marks it down. */
  hypervisorDownAfterSeconds: number;
  /** Floor delay of a failed direct-viewer lookup, so codes cannot be probed quickly. */
  directViewerDelayMs: number;
  /** The viewer's files panel: the transfer folder in the guest and the largest upload. */
  guestFiles: { folder: string; maxBytes: number };
  /** Media downloads may use http:// and private, loopback or link-local addresses (labs, tests). */
  mediaAllowPrivateUrls: boolean;
  /** How often recycle-bin entries past their retention are deleted for good. */
  recycleBinPurgeSeconds: number;
  /** A pause before a disk growth starts (demos, tests), during which it can be cancelled. */
  diskOperationDelayMs: number;
  /** Proxies whose X-Forwarded-For / -Proto / -Host are believed; empty: none, the client address is the peer's. */
  trustProxy: string[];
  /** Failed sign-ins one client address may make in an hour, across user names, before it backs off. */
  loginAddressFailuresPerHour: number;
  /** The embedded database's WebAssembly compiled fully at start rather than while serving. */
  embeddedEagerCompile: boolean;
  /** The RD Gateway (MS-TSGU over TLS) for the .rdp files: its port (null: off), the host[:port]
   *  the files name when it is reached through something else (a reverse proxy), its certificate. */
  rdpGateway: { port: number | null; publicAddress?: string; certFile?: string; keyFile?: string };
  /** The users' WireGuard endpoint: UDP port (null: off), the address put in the files, the users' range. */
  vpn: { port: number | null; host?: string; usersNetwork: string };
  /** The bastion's listeners (null: off), its domain, and the ports shown to users (a proxy in front may differ). */
  bastion: {
    domain?: string;
    host: string;
    sshPort: number | null;
    httpPort: number | null;
    httpsPort: number | null;
    publicHttpPort?: number;
    publicHttpsPort?: number;
  };
  /** The guests' private network (the `wireguard` interface): range or `off`, namespace and link-name prefix (derived from DATA_DIR when not set). */
  guestNetwork: { cidr: string; namespace?: string; linkPrefix?: string; tunnel: { vni: number; localAddress?: string } };
  /** A desktop on the guest network that has no address after this long leaves WaitingIP without one. */
  guestIpTimeoutSeconds: number;
  /** A pool's desktop counts as prepared (booted) this long after its machine started (desktop pools). */
  poolBootSeconds: number;
  /** vCPUs a host may hand out per physical CPU (placement). */
  vcpuOvercommit: number;
  /** This process among the installation's (several on one PostgreSQL): in logs and the X-Server-Id header. Default host:port. */
  serverId: string;
  /** This machine's QEMU as the `local` host; off in the processes of a cluster that do not own this machine (README, cluster mode). */
  localHypervisor: boolean;
  /** On SIGTERM the health route answers 503 this long before the listener closes, so a balancer stops sending here first. */
  shutdownDrainSeconds: number;
};

/**
 * The JWT key comes from SECRET, or is generated once and kept under DATA_DIR (never printed). Several
 * processes sharing DATA_DIR and starting at once all end with the one key: it is written whole to a file
 * of this process's and linked into place only if no other process's is there already.
 */
function loadOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const mine = `${file}.${process.pid}`;
  writeFileSync(mine, randomBytes(48).toString('base64url'), { mode: 0o600 });
  try {
    linkSync(mine, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(mine, { force: true });
  }
  return readFileSync(file, 'utf8').trim();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${issues}`);
  }
  const e = parsed.data;
  const dataDir = resolve(e.DATA_DIR);
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL || undefined,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    demoPassword: e.DEMO_PASSWORD,
    secret: e.SECRET ?? loadOrCreateSecret(dataDir),
    publicUrl: e.PUBLIC_URL,
    seedDemo: e.SEED_DEMO,
    session: {
      tokenSeconds: e.SESSION_TOKEN_SECONDS,
      maxRenewSeconds: e.SESSION_MAX_RENEW_SECONDS,
      maxSeconds: e.SESSION_MAX_SECONDS,
    },
    smtp: e.SMTP_HOST
      ? { host: e.SMTP_HOST, port: e.SMTP_PORT ?? 25, user: e.SMTP_USER, password: e.SMTP_PASSWORD, secure: e.SMTP_SECURE }
      : undefined,
    mailFrom: e.MAIL_FROM,
    logLevel: e.LOG_LEVEL,
    webDist: e.WEB_DIST,
    imagesDir: resolve(e.IMAGES_DIR ?? join(dataDir, 'images')),
    accel: e.ACCEL,
    startConcurrency: e.START_CONCURRENCY,
    vcpuOvercommit: e.VCPU_OVERCOMMIT,
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT_SECONDS,
    hypervisorDownAfterSeconds: e.HYPERVISOR_DOWN_AFTER_SECONDS,
    directViewerDelayMs: e.DIRECT_VIEWER_DELAY_MS,
    guestFiles: { folder: e.GUEST_FILES_FOLDER, maxBytes: Math.floor(e.GUEST_FILES_MAX_MB * 1024 * 1024) },
    mediaAllowPrivateUrls: e.MEDIA_ALLOW_PRIVATE_URLS,
    recycleBinPurgeSeconds: e.RECYCLE_BIN_PURGE_SECONDS,
    diskOperationDelayMs: e.DISK_OPERATION_DELAY_MS,
    trustProxy: e.TRUST_PROXY,
    metrics: { token: e.METRICS_TOKEN ?? null, allow: e.METRICS_ALLOW },
    backupKeep: e.BACKUP_KEEP,
    loginAddressFailuresPerHour: e.LOGIN_ADDRESS_FAILURES,
    embeddedEagerCompile: e.EMBEDDED_EAGER_COMPILE,
    rdpGateway: {
      port: e.RDP_GATEWAY_PORT === 'off' ? null : Number(e.RDP_GATEWAY_PORT),
      publicAddress: e.RDP_GATEWAY_PUBLIC,
      certFile: e.TLS_CERT,
      keyFile: e.TLS_KEY,
    },
    vpn: { port: e.VPN_PORT, host: e.VPN_HOST, usersNetwork: e.VPN_USERS_NETWORK },
    bastion: {
      domain: e.BASTION_DOMAIN,
      host: e.BASTION_HOST,
      sshPort: e.BASTION_SSH_PORT,
      httpPort: e.BASTION_HTTP_PORT,
      httpsPort: e.BASTION_HTTPS_PORT,
      publicHttpPort: e.HTTP_PORT,
      publicHttpsPort: e.HTTPS_PORT,
    },
    guestNetwork: {
      cidr: e.GUEST_NETWORK,
      namespace: e.GUEST_NETWORK_NAMESPACE,
      linkPrefix: e.GUEST_NETWORK_LINK_PREFIX,
      tunnel: { vni: e.GUEST_NETWORK_VNI, localAddress: e.GUEST_NETWORK_TUNNEL_ADDRESS },
    },
    guestIpTimeoutSeconds: e.GUEST_IP_TIMEOUT_SECONDS,
    poolBootSeconds: e.POOL_BOOT_SECONDS,
    serverId: e.SERVER_ID ?? `${hostname()}:${e.PORT}`,
    localHypervisor: e.LOCAL_HYPERVISOR,
    shutdownDrainSeconds: e.SHUTDOWN_DRAIN_SECONDS,
  };
}
