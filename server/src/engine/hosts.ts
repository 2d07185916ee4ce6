import { cpus, totalmem } from 'node:os';
import { availableMemoryBytes } from '../host/memory';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import type { HypervisorDriver } from './driver';
import type { StartQueue } from './start-queue';
import type { DiskStore } from './storage';

/**
 * The engine's hosts as the console and placement read them. One seam: the local host answers from
 * this machine today (`LocalHostDirectory`); the libvirt engine answers the same shape for every
 * host it holds a connection to (one connection per host), so nothing above changes.
 */

/** A storage pool as a host sees it: a directory it reaches (a libvirt `dir` pool there). */
export type HostPool = { name: string; path: string; capacityBytes: number; freeBytes: number };

/** What is known of a host now. `online` false: the numbers are the last known ones (or zero) and `lastError` says why. */
export type HostStatus = {
  online: boolean;
  cpuModel: string;
  cpus: number;
  memoryMb: number;
  freeMemoryMb: number;
  /** machines the host runs now */
  running: number;
  /** the CPU's busy share (percent) between the host's last two readings (a remote host's; this machine's
   *  the console reads from the OS); absent when the host cannot tell */
  cpuUsedPercent?: number;
  /** starts asked of this host and not yet answered (placement counts them against it) */
  startsInFlight: number;
  pools: HostPool[];
  /** whether the guest network reaches the host (this machine: it is up; a remote host: it has the
   *  `vdi-guests` bridge, or cannot tell, and the server's tunnel floods to it) */
  guestNetwork: boolean;
  /** the last connection or sampling error, in words an admin may read (never a URI's credentials) */
  lastError: string | null;
  checkedAt: string;
};

/** A host's CPU time since it booted, all CPUs (any one unit): idle (with I/O wait) and total. */
export type CpuTimes = { idle: number; total: number };

/**
 * The CPU's busy share in percent (one decimal, 0–100) between two readings of a host's CPU times;
 * without an earlier reading (or when the counters went back: the host rebooted), since it booted.
 */
export function cpuBusyPercent(prev: CpuTimes | null | undefined, next: CpuTimes): number {
  const base = prev && next.total >= prev.total && next.idle >= prev.idle ? prev : { idle: 0, total: 0 };
  const total = next.total - base.total;
  if (total <= 0) return 0;
  const busy = 1 - (next.idle - base.idle) / total;
  return Math.round(Math.max(0, Math.min(100, busy * 100)) * 10) / 10;
}

/** How a host is reached the first time: the host key it must present (confirmed by an admin). */
export type HostConnectOptions = {
  /** `SHA256:…` as `ssh-keygen -lf` prints it; the connection is refused when the host presents another */
  hostKeyFingerprint?: string;
};

/** A host's SSH host key, read before anything is stored, for the admin to confirm. */
export type HostKey = { algorithm: string; fingerprint: string };

export class HostError extends Error {
  constructor(
    /** `uri_invalid` | `unreachable` | `host_key_changed` | `unsupported`: the module maps it to a catalogue code */
    readonly code: 'uri_invalid' | 'unreachable' | 'host_key_changed' | 'unsupported',
    message: string,
  ) {
    super(message);
  }
}

export interface HostDirectory {
  /** The host's status, or null when the directory holds no host of that id. */
  status(id: string): Promise<HostStatus | null>;
  /** Opens (and keeps) the connection to `uri` as host `id`; rejects with a HostError, holding nothing. */
  connect(id: string, uri: string, opts: HostConnectOptions): Promise<HostStatus>;
  /** The host key `uri`'s host presents now (first-connection confirmation); rejects with a HostError. */
  hostKey(uri: string): Promise<HostKey>;
  /** Closes the connection to host `id` (removal); its status is null afterwards. */
  disconnect(id: string): Promise<void>;
  /**
   * The installation's public SSH key (one line for a host's `authorized_keys`), or null when it has
   * none. The local directory has none: the SSH identity (`host/ssh-identity.ts`) fills it.
   */
  installationPublicKey(): Promise<string | null>;
  /** A stored host at server start: connected in the background (offline with the reason until
   *  then, retried with a back-off). Directories that connect to no other host have none. */
  resume?(id: string, uri: string, opts: HostConnectOptions): void;
  /** Called each time a remote host comes online (its first connection, a reconnection). */
  onOnline?(cb: (id: string) => void): () => void;
  /** Called once each time a remote host goes offline: its connection lost, or (a stored host at
   *  server start) its first attempt failed. What ran there is unknown until it is back. */
  onOffline?(cb: (id: string, reason: string) => void): () => void;
}

/**
 * This machine as the only host: CPUs and memory from the OS, the running machines from the driver,
 * the starts in flight from the start queue, the storage folder as its one pool (`default`). It
 * connects to no other host: `connect`/`hostKey` answer `unsupported` until the libvirt engine exists.
 */
export class LocalHostDirectory implements HostDirectory {
  constructor(
    private readonly parts: {
      driver: Pick<HypervisorDriver, 'list'>;
      queue: Pick<StartQueue, 'inFlight'>;
      disks: Pick<DiskStore, 'space'>;
      storageDir: string;
      /** whether this machine's guest network is up */
      guestNetwork?: boolean;
      now?: () => Date;
      /** this process runs no local hypervisor (LOCAL_HYPERVISOR=off): the host is offline, with this reason */
      off?: string;
    },
  ) {}

  async status(id: string): Promise<HostStatus | null> {
    if (id !== LOCAL_HYPERVISOR) return null;
    const checkedAt = (this.parts.now?.() ?? new Date()).toISOString();
    const cores = cpus();
    const base = { cpuModel: cores[0]?.model.trim() ?? '', cpus: cores.length, memoryMb: Math.floor(totalmem() / 1048576), freeMemoryMb: Math.floor(availableMemoryBytes() / 1048576) };
    if (this.parts.off) return { online: false, ...base, running: 0, startsInFlight: 0, pools: [], guestNetwork: false, lastError: this.parts.off, checkedAt };
    try {
      const [machines, space, startsInFlight] = await Promise.all([this.parts.driver.list(), this.parts.disks.space(), this.parts.queue.inFlight(LOCAL_HYPERVISOR).catch(() => 0)]);
      return {
        online: true,
        ...base,
        running: machines.length,
        startsInFlight,
        pools: [{ name: 'default', path: this.parts.storageDir, capacityBytes: space.total, freeBytes: space.free }],
        guestNetwork: this.parts.guestNetwork ?? false,
        lastError: null,
        checkedAt,
      };
    } catch (err) {
      return { online: false, ...base, running: 0, startsInFlight: 0, pools: [], guestNetwork: false, lastError: err instanceof Error ? err.message : String(err), checkedAt };
    }
  }

  async connect(): Promise<HostStatus> {
    throw new HostError('unsupported', 'This engine runs desktops on this machine only: other hosts need the libvirt engine');
  }

  async hostKey(): Promise<HostKey> {
    throw new HostError('unsupported', 'This engine runs desktops on this machine only: other hosts need the libvirt engine');
  }

  async disconnect(): Promise<void> {}

  // The fleet's directory (libvirt/hosts.ts) answers with the installation's SSH key.
  async installationPublicKey(): Promise<string | null> {
    return null;
  }
}
