// The libvirt driver: machines on ONE hypervisor reached by a libvirt URI (qemu+ssh://…, qemu+tls://…,
// qemu+unix:///system?socket=…), through a helper process that holds the one connection with the
// official Python binding (libvirt-helper.py; why: docs/decisions/0012-libvirt-from-node.md).
// Domains are transient and carry our metadata element; libvirt keeps them across our restarts, so
// a new driver instance adopts them by listing.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startJsonLinesHelper, type JsonLinesHelper } from '../../host/programs';
import type { Accel } from '../accel';
import {
  EngineError,
  type EngineErrorCode,
  type HostCapabilities,
  type HypervisorDriver,
  type MachineEvent,
  type MachineRuntime,
  type MachineSpec,
  type MachineStatus,
} from '../driver';
import { MACHINE_ID_RE } from '../qemu/run-dir';
import { GUEST_BRIDGE } from '../../network/tunnel';
import type { CpuTimes } from '../hosts';
import { buildDomainXml, parseLiveXml, type LiveDomain } from './domain-xml';
import { GuestAgentError } from '../guest-agent';

export type LibvirtDriverOptions = {
  /** the libvirt URI; it may name a key file: never logged nor shown */
  uri: string;
  /** the host's address its VNC/SPICE servers listen on and viewers' proxies connect to;
   *  default: the URI's host name, else 127.0.0.1 */
  graphicsAddress?: string;
  /** `auto` (default): kvm when the host's domain capabilities offer it */
  accel?: 'auto' | Accel;
  /** libvirt keepalive: a probe every `intervalS`, the connection is lost after `count` unanswered
   *  ones: (count + 1) × interval at most (default 5 s × 2: noticed within ~15 s) */
  keepAlive?: { intervalS: number; count: number };
  /** bound of one request to the host (default 60 s) */
  requestTimeoutMs?: number;
};

/** The connection to the host: `lost` when libvirt's keepalive, the socket or the helper ended it;
 *  a lost driver answers `host-unreachable` to everything and a new instance must be made. */
export type ConnectionState = { state: 'connecting' | 'open' | 'lost' | 'closed'; reason?: string };

type Answer = { id: number; result?: unknown; error?: { code: string; message: string } };
type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void; timer?: NodeJS.Timeout; failCode: EngineErrorCode; onProgress?: (p: VolumeProgress) => void };
type CallOptions = { failCode?: EngineErrorCode; timeoutMs?: number; onProgress?: (p: VolumeProgress) => void; signal?: AbortSignal };

/** A storage volume on the host: its path there, virtual size (`capacity`), file size (`physical`) and blocks in use (`allocation`). */
export type HostVolume = { path: string; capacity: number; physical: number; allocation: number };
/** Bytes of an upload done so far, of `total`. */
export type VolumeProgress = { done: number; total: number };
type SerialWaiter = { id: string; re: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: unknown) => void; timer: NodeJS.Timeout };

const HELPER = join(import.meta.dirname, 'libvirt-helper.py');
/** kept of each machine's serial output (the READY marker is near the end) */
const SERIAL_KEEP = 256 * 1024;
/** libvirt's lifecycle events (virDomainEventType) and STOPPED details */
const EV = { STARTED: 2, SUSPENDED: 3, RESUMED: 4, STOPPED: 5, CRASHED: 8 } as const;
const STOP_REASON = ['guest-shutdown', 'destroyed', 'crashed', 'migrated', 'saved', 'failed', 'from-snapshot'];
const CLOSE_REASON = ['error', 'eof', 'keepalive', 'client'];
const SUSPENDED_IOERROR = 2;

// libvirtd hands a command to the guest agent with safewrite() on its non-blocking socket to QEMU's
// channel (libvirt 9.0, src/qemu/qemu_agent.c qemuAgentIOWrite, unchanged upstream): a command larger
// than the socket takes at once (its send buffer, net.core.wmem_default: 208 KiB) is written in part,
// EAGAIN loses the count, and on every wake the command is written again from its start. The agent
// reads that prefix over and over as garbage ("JSON parse error"), the command never counts as sent
// (its timeout: "Guest agent not available for now"), and the garbage still in the channel fails the
// next guest-syncs. Measured through libvirtd 9.0: a 128 KiB guest-file-write (175 KB of JSON) passes,
// 256 KiB (350 KB) never does. So through libvirt no command is larger than LIBVIRT_AGENT_MAX_COMMAND:
// a guest-file-write is cut into pieces here, any other command that large is refused.
/** The largest command (JSON bytes) sent through libvirt's agent: well under the socket's 208 KiB. */
export const LIBVIRT_AGENT_MAX_COMMAND = 128 * 1024;
/** File bytes per guest-file-write through libvirt (87 KB of base64; 2 MiB in about 1 s in the TCG demo guest, as 128 KiB). */
export const LIBVIRT_AGENT_WRITE_BYTES = 64 * 1024;
/** At most this much per guest-file-read: libvirtd drops the agent beyond a 10 MB answer (1 MiB is 1.4 MB of base64). */
export const LIBVIRT_AGENT_READ_BYTES = 1024 * 1024;

/** A libvirt message without the URI or a key file's path (they may carry credentials). */
export function redact(message: string, uri: string): string {
  const secrets = [uri];
  try {
    const u = new URL(uri);
    secrets.push(...[...u.searchParams.values()], u.username, u.password);
  } catch {
    // not a URL: the URI itself is hidden
  }
  let out = message;
  for (const s of secrets.filter((x) => x.length >= 3)) out = out.split(s).join('<hidden>');
  out = out.replace(/\b[a-z0-9+.-]+:\/\/[^\s'"]*/gi, '<hypervisor URI>');
  return out.replace(/\b(keyfile|known_hosts|pkipath|command)=[^\s&'"]*/gi, '$1=<hidden>');
}

export class LibvirtDriver implements HypervisorDriver {
  readonly name = 'libvirt';
  private readonly helper: JsonLinesHelper;
  private readonly opened: Promise<void>;
  private conn: ConnectionState = { state: 'connecting' };
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(e: MachineEvent) => void>();
  private readonly connListeners = new Set<(s: ConnectionState) => void>();
  /** machines of ours running now: `stopped` is emitted once for each, when it leaves the set */
  private readonly running = new Set<string>();
  private readonly starting = new Set<string>();
  private readonly serial = new Map<string, string>();
  private readonly waiters = new Set<SerialWaiter>();
  private readonly graphicsAddress: string;
  private kvm = false;
  private exited!: Promise<void>;

  constructor(private readonly opts: LibvirtDriverOptions) {
    let host = '';
    try {
      host = new URL(opts.uri).hostname;
    } catch {
      // unparsable: the helper's connect answers for it
    }
    this.graphicsAddress = opts.graphicsAddress ?? (host || '127.0.0.1');
    let onReady!: () => void;
    let onFail!: (e: unknown) => void;
    this.opened = new Promise<void>((res, rej) => {
      onReady = res;
      onFail = rej;
    });
    this.opened.catch(() => {});
    let exitedDone!: () => void;
    this.exited = new Promise((r) => (exitedDone = r));
    this.helper = startJsonLinesHelper(
      HELPER,
      (m) => this.onMessage(m as Record<string, unknown>, onReady, onFail),
      (reason) => {
        exitedDone();
        const err = this.lose(`the libvirt helper ended (${reason})`);
        onFail(err);
      },
    );
    const ka = opts.keepAlive ?? { intervalS: 5, count: 2 };
    this.helper.hold(true);
    this.helper.send({ uri: opts.uri, keepalive: [ka.intervalS, ka.count] });
  }

  /** Resolves once connected and the running machines of ours are adopted. */
  async ready(): Promise<void> {
    await this.opened;
  }

  get connection(): ConnectionState {
    return this.conn;
  }

  onConnection(cb: (s: ConnectionState) => void): () => void {
    this.connListeners.add(cb);
    return () => this.connListeners.delete(cb);
  }

  // ---- the helper's messages ----------------------------------------------------------------

  private onMessage(m: Record<string, unknown>, onReady: () => void, onFail: (e: unknown) => void) {
    if ('ready' in m) {
      void this.adopt().then(onReady, onFail);
      return;
    }
    if ('fatal' in m) {
      const f = m.fatal as { code: string; message: string };
      const code: EngineErrorCode = f.code === 'host-key' ? 'host-key-unknown' : 'host-unreachable';
      const err = new EngineError(code, code === 'host-key-unknown' ? 'the hypervisor\'s SSH host key is not known or has changed' : 'cannot connect to the hypervisor', redact(f.message, this.opts.uri));
      this.setConn({ state: 'lost', reason: err.message });
      onFail(err);
      this.helper.end();
      return;
    }
    if (typeof m.id === 'number') {
      const a = m as Answer;
      const p = this.pending.get(a.id);
      if (!p) return;
      if ('progress' in m) return p.onProgress?.(m.progress as VolumeProgress);
      this.pending.delete(a.id);
      clearTimeout(p.timer);
      if (this.pending.size === 0 && this.conn.state === 'open') this.helper.hold(false);
      if (a.error) p.reject(this.toEngineError(a.error, p.failCode));
      else p.resolve(a.result);
      return;
    }
    switch (m.ev) {
      case 'lifecycle':
        return this.onLifecycle(String(m.name), Number(m.event), Number(m.detail));
      case 'serial':
        return this.onSerial(String(m.name), String(m.data));
      case 'closed':
        this.lose(`connection to the hypervisor lost (${CLOSE_REASON[Number(m.reason)] ?? m.reason})`);
        this.helper.end();
        return;
    }
  }

  private toEngineError(e: { code: string; message: string }, failCode: EngineErrorCode): EngineError | GuestAgentError {
    const message = redact(e.message, this.opts.uri);
    switch (e.code) {
      case 'no-domain':
      case 'not-running':
        return new EngineError('not-running', message);
      case 'connection-lost':
        return new EngineError('host-unreachable', 'connection to the hypervisor lost', message);
      case 'cancelled':
        return new EngineError('cancelled', 'cancelled');
      case 'agent-unavailable':
        return new EngineError('agent-unavailable', message);
      case 'agent-error':
        return new GuestAgentError('GenericError', message, 'guest agent');
      default:
        return new EngineError(failCode, message, message);
    }
  }

  private setConn(s: ConnectionState) {
    this.conn = s;
    for (const cb of this.connListeners) cb(s);
  }

  /** The connection is gone: every request waiting fails, later ones too. */
  private lose(reason: string): EngineError {
    const err = new EngineError(this.conn.state === 'closed' ? 'closed' : 'host-unreachable', reason);
    if (this.conn.state === 'open' || this.conn.state === 'connecting') this.setConn({ state: 'lost', reason });
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiters.clear();
    this.helper.hold(false);
    return err;
  }

  private emit(e: MachineEvent) {
    for (const cb of this.listeners) cb(e);
  }

  private onLifecycle(id: string, event: number, detail: number) {
    if (!this.running.has(id) && !this.starting.has(id)) {
      // Started by another server process of the installation (on a connection of its own): ours too,
      // adopted by listing (only domains with our metadata are), so that its events are told here.
      if (event === EV.STARTED) this.adoptStarted(id);
      return;
    }
    if (event === EV.STARTED) {
      this.running.add(id);
      this.emit({ id, type: 'started' });
    } else if (event === EV.STOPPED) {
      this.stopped(id, STOP_REASON[detail] ?? `stopped-${detail}`);
    } else if (!this.running.has(id)) {
      // libvirt reports RESUMED before STARTED while a domain starts: nothing to tell yet
    } else if (event === EV.SUSPENDED) {
      this.emit(detail === SUSPENDED_IOERROR ? { id, type: 'crashed', reason: 'io-error' } : { id, type: 'paused' });
    } else if (event === EV.RESUMED) {
      this.emit({ id, type: 'resumed' });
    } else if (event === EV.CRASHED) {
      this.emit({ id, type: 'crashed', reason: 'guest-panic' });
    }
  }

  /** Domains another connection started, not listed yet: one listing at a time adopts them (`started` told for each). */
  private readonly startedElsewhere = new Set<string>();
  private adopting = false;
  private adoptStarted(id: string) {
    this.startedElsewhere.add(id);
    if (this.adopting || this.conn.state !== 'open') return;
    this.adopting = true;
    const batch = [...this.startedElsewhere];
    this.startedElsewhere.clear();
    void this.list()
      .then(() => {
        for (const x of batch) if (this.running.has(x)) this.emit({ id: x, type: 'started' });
      }, () => undefined)
      .finally(() => {
        this.adopting = false;
        const next = this.startedElsewhere.values().next();
        if (!next.done) {
          this.startedElsewhere.delete(next.value);
          this.adoptStarted(next.value);
        }
      });
  }

  private stopped(id: string, reason: string) {
    if (!this.running.delete(id)) return;
    this.serial.delete(id);
    for (const w of this.waiters) {
      if (w.id !== id) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.reject(new EngineError('not-running', `${id} stopped (${reason}) before its serial output matched`));
    }
    this.emit({ id, type: 'stopped', reason });
  }

  private onSerial(id: string, data: string) {
    const text = ((this.serial.get(id) ?? '') + data).slice(-SERIAL_KEEP);
    this.serial.set(id, text);
    for (const w of this.waiters) {
      if (w.id !== id) continue;
      const m = w.re.exec(text);
      if (!m) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.resolve(m);
    }
  }

  // ---- requests -----------------------------------------------------------------------------

  private async call<T>(op: string, args: Record<string, unknown> = {}, opts: EngineErrorCode | CallOptions = {}): Promise<T> {
    const { failCode = 'hypervisor-error', timeoutMs = this.opts.requestTimeoutMs ?? 60_000, onProgress, signal } = typeof opts === 'string' ? { failCode: opts } : opts;
    if (this.conn.state === 'closed') throw new EngineError('closed', 'the driver is closed');
    if (this.conn.state === 'connecting') await this.opened;
    if (this.conn.state !== 'open') {
      throw new EngineError(this.conn.state === 'lost' ? 'host-unreachable' : 'closed', this.conn.reason ?? 'not connected');
    }
    signal?.throwIfAborted();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      // 0: no bound (an upload, whose progress shows it is alive; a lost host ends it by keepalive)
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.pending.delete(id);
              reject(new EngineError('timeout', `the hypervisor did not answer ${op} within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, failCode, onProgress });
      signal?.addEventListener('abort', () => this.pending.has(id) && this.helper.send({ op: 'cancel', target: id }), { once: true });
      this.helper.hold(true);
      this.helper.send({ id, op, ...args });
    });
  }

  private checkId(id: string) {
    if (!MACHINE_ID_RE.test(id)) throw new EngineError('invalid-spec', `bad machine id ${JSON.stringify(id)}`);
  }

  /** Connected: the machines of ours already running are adopted (events, serial output). */
  private async adopt() {
    this.setConn({ state: 'open' });
    this.helper.hold(false);
    const info = await this.call<{ kvm: boolean }>('info');
    this.kvm = info.kvm;
    await this.list();
  }

  private runtimeOf(live: LiveDomain): MachineRuntime {
    const rt: MachineRuntime = { id: live.name, startedAt: live.startedAt ?? new Date() };
    if (live.vnc) rt.vnc = live.vnc;
    if (live.spice) rt.spice = live.spice;
    return rt;
  }

  private accel(): Accel {
    const want = this.opts.accel ?? 'auto';
    return want === 'auto' ? (this.kvm ? 'kvm' : 'tcg') : want;
  }

  async capabilities(): Promise<HostCapabilities> {
    const info = await this.call<{ cpus: number; memoryMb: number; freeBytes: number }>('info');
    return { accel: this.accel(), cpus: info.cpus, memoryMb: info.memoryMb, freeMemoryMb: Math.floor(info.freeBytes / 1024 / 1024) };
  }

  /** The host's CPU model and count, memory and active storage pools (refreshed), for the console and placement. */
  async hostInfo(): Promise<{
    cpuModel: string;
    cpus: number;
    memoryMb: number;
    freeMemoryMb: number;
    pools: { name: string; path: string; capacityBytes: number; freeBytes: number }[];
    guestBridge: boolean | null;
    /** its CPU time since it booted (node CPU stats), null when its libvirtd cannot tell */
    cpuTimes: CpuTimes | null;
  }> {
    const h = await this.call<{ cpuModel: string; cpus: number; memoryMb: number; freeBytes: number; pools: { name: string; path: string; capacity: number; available: number }[]; cpuTimes?: CpuTimes | null }>('host');
    // Has it the guest network's bridge (null: its libvirtd cannot tell)?
    const bridge = await this.call<{ present: boolean | null }>('interface', { name: GUEST_BRIDGE });
    return {
      guestBridge: bridge.present,
      cpuModel: h.cpuModel,
      cpus: h.cpus,
      memoryMb: h.memoryMb,
      freeMemoryMb: Math.floor(h.freeBytes / 1048576),
      pools: h.pools.map((p) => ({ name: p.name, path: p.path, capacityBytes: p.capacity, freeBytes: p.available })),
      cpuTimes: h.cpuTimes ?? null,
    };
  }

  // ---- storage volumes: disks that live on this host (docs/decisions/0011-template-bases-on-hosts.md) ----

  /** Volume `name` of the host's pool `pool`, or null when the pool has none of that name. */
  async volume(pool: string, name: string): Promise<HostVolume | null> {
    const v = await this.call<HostVolume | { absent: true }>('vol_info', { pool, name });
    return 'absent' in v ? null : v;
  }

  /** The volume at `path` on the host (in whichever pool), with its pool's name; or null. */
  async volumeAt(path: string): Promise<(HostVolume & { pool: string }) | null> {
    const v = await this.call<(HostVolume & { pool: string }) | { absent: true }>('vol_at', { path });
    return 'absent' in v ? null : v;
  }

  /** Copies `file` (of this machine) into a new volume `name` of `pool` (replacing one of that name)
   *  through libvirt's storage stream, in 1 MiB chunks with progress; `signal` stops it (the partial
   *  volume is deleted). Resolves once the host holds every byte. */
  async uploadVolume(pool: string, name: string, file: string, opts: { onProgress?: (p: VolumeProgress) => void; signal?: AbortSignal } = {}): Promise<HostVolume> {
    return this.call<HostVolume>('vol_upload', { pool, name, file }, { timeoutMs: 0, ...opts });
  }

  /** Grows the volume at `path` to `capacity` bytes of virtual size (shrinking is refused). */
  async resizeVolume(path: string, capacity: number): Promise<HostVolume> {
    return this.call<HostVolume>('vol_resize', { path, capacity }, { timeoutMs: 120_000 });
  }

  /** The pool's size and free bytes now (measured again on the host). */
  async poolSpace(pool: string): Promise<{ capacity: number; available: number }> {
    return this.call<{ capacity: number; available: number }>('pool_space', { pool });
  }

  /** Copies the volume at `path` on the host into the new file `file` of this machine (libvirt's storage
   *  stream); a failure leaves no file. */
  async downloadVolume(path: string, file: string): Promise<void> {
    await this.call('vol_download', { path, file }, { timeoutMs: 0 });
  }

  /** Deletes the volume at `path` on the host; one already gone is fine. */
  async deleteVolume(path: string): Promise<void> {
    await this.call('vol_delete', { path });
  }

  async start(spec: MachineSpec): Promise<MachineRuntime> {
    await this.ready();
    const password = (n: number) => randomBytes(n).toString('base64url').slice(0, n);
    const xml = buildDomainXml(spec, {
      domainType: this.accel() === 'kvm' ? 'kvm' : 'qemu',
      listen: this.graphicsAddress,
      vncPassword: password(8),
      spicePassword: password(24),
      startedAt: new Date(),
    });
    if (this.running.has(spec.id) || this.starting.has(spec.id)) throw new EngineError('already-running', `${spec.id} is already running`);
    if (spec.nics.some((n) => n.network === 'private')) {
      // Asked first: libvirt's own refusal ("Cannot get interface MTU") names no cause an admin can act on.
      const bridge = await this.call<{ present: boolean | null }>('interface', { name: GUEST_BRIDGE });
      if (bridge.present === false) {
        throw new EngineError('guest-network-missing', `the hypervisor has no ${GUEST_BRIDGE} bridge: it is not prepared for the guest network`);
      }
    }
    this.starting.add(spec.id);
    this.serial.set(spec.id, '');
    try {
      const r = await this.call<{ exists?: boolean; xml?: string }>('create', { name: spec.id, xml }, 'start-failed');
      if (r.exists) throw new EngineError('already-running', `${spec.id} is already running`);
      this.running.add(spec.id);
      return this.runtimeOf(parseLiveXml(r.xml!, this.graphicsAddress));
    } catch (err) {
      if (err instanceof EngineError && err.code === 'start-failed') {
        throw new EngineError('start-failed', `${spec.id} did not start on the hypervisor`, err.detail);
      }
      throw err;
    } finally {
      this.starting.delete(spec.id);
    }
  }

  async shutdown(id: string): Promise<void> {
    this.checkId(id);
    await this.call('shutdown', { name: id });
  }

  async destroy(id: string): Promise<void> {
    this.checkId(id);
    await this.call('destroy', { name: id });
    await this.settle(id, 'destroyed');
  }

  /** The domain is gone: waits a moment for libvirt's STOPPED event, so `stopped` (with libvirt's
   *  reason) is emitted before this resolves; a missing event is made up. */
  private async settle(id: string, reason: string) {
    if (!this.running.has(id)) return;
    const deadline = Date.now() + 5000;
    while (this.running.has(id) && Date.now() < deadline && this.conn.state === 'open') {
      await new Promise((r) => setTimeout(r, 20));
    }
    this.stopped(id, reason);
  }

  async reset(id: string): Promise<void> {
    this.checkId(id);
    await this.call('reset', { name: id });
    // libvirt's reset is QEMU's system_reset, reported with QEMU's reason as the QEMU driver does.
    // Resets by the guest itself are not reported (see libvirt-helper.py: no REBOOT events).
    this.emit({ id, type: 'reset', reason: 'host-qmp-system-reset' });
  }

  async status(id: string): Promise<MachineStatus> {
    this.checkId(id);
    const s = await this.call<{ state: number | null; reason?: number }>('state', { name: id });
    switch (s.state) {
      case null:
      case 5: // SHUTOFF
        await this.settle(id, 'gone');
        return 'absent';
      case 3: // PAUSED
        return s.reason === SUSPENDED_IOERROR ? 'crashed' : 'paused';
      case 7: // PMSUSPENDED
        return 'paused';
      case 4:
        return 'shutdown';
      case 6:
        return 'crashed';
      default: // NOSTATE, RUNNING, BLOCKED
        return 'running';
    }
  }

  async setViewerPassword(id: string, protocol: 'vnc' | 'spice', password: string, expiresInSeconds?: number): Promise<void> {
    this.checkId(id);
    if (protocol === 'vnc' && password.length > 8) throw new EngineError('unsupported', 'VNC passwords are at most 8 characters');
    const validTo = expiresInSeconds ? new Date(Date.now() + expiresInSeconds * 1000).toISOString().slice(0, 19) : undefined;
    const r = await this.call<{ absent?: boolean }>('password', { name: id, type: protocol, passwd: password, ...(validTo ? { validTo } : {}) });
    if (r.absent) throw new EngineError('unsupported', `${id} has no ${protocol} display`);
  }

  async screenshot(id: string): Promise<Buffer> {
    this.checkId(id);
    const r = await this.call<{ png: string }>('screenshot', { name: id });
    return Buffer.from(r.png, 'base64');
  }

  async guestAgent(id: string, command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    this.checkId(id);
    const b64 = args?.['buf-b64'];
    if (command === 'guest-file-write' && typeof b64 === 'string' && args?.count === undefined && b64.length > (LIBVIRT_AGENT_WRITE_BYTES / 3) * 4) {
      // in pieces (see LIBVIRT_AGENT_MAX_COMMAND), one after the other; the answer as the agent's for the whole
      const data = Buffer.from(b64, 'base64');
      let count = 0;
      let eof = false;
      for (let off = 0; off < data.length; off += LIBVIRT_AGENT_WRITE_BYTES) {
        const piece = data.subarray(off, off + LIBVIRT_AGENT_WRITE_BYTES);
        const r = (await this.agentCommand(id, command, { ...args, 'buf-b64': piece.toString('base64') }, timeoutMs)) as { count: number; eof: boolean };
        count += r.count;
        eof = r.eof;
        if (r.count < piece.length) break; // a short write: the caller writes the rest
      }
      return { count, eof };
    }
    if (command === 'guest-file-read' && typeof args?.count === 'number' && args.count > LIBVIRT_AGENT_READ_BYTES) {
      args = { ...args, count: LIBVIRT_AGENT_READ_BYTES }; // a shorter read: the caller reads on until eof
    }
    return this.agentCommand(id, command, args, timeoutMs);
  }

  private async agentCommand(id: string, command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    const size = Buffer.byteLength(JSON.stringify(args ? { execute: command, arguments: args } : { execute: command }));
    if (size > LIBVIRT_AGENT_MAX_COMMAND) {
      throw new EngineError('unsupported', `a guest agent command of ${size} bytes is more than libvirt carries intact (${LIBVIRT_AGENT_MAX_COMMAND})`);
    }
    const r = await this.call<{ return: unknown }>('agent', { name: id, command, args, timeout: Math.ceil(timeoutMs / 1000) }, { timeoutMs: timeoutMs + 10_000 });
    return r.return;
  }

  async waitForSerial(id: string, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    this.checkId(id);
    await this.ready();
    const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    const now = re.exec(this.serial.get(id) ?? '');
    if (now) return now;
    if (!this.running.has(id)) throw new EngineError('not-running', `${id} is not running`);
    return new Promise((resolve, reject) => {
      const w: SerialWaiter = {
        id,
        re,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(w);
          // how much was read says whether the console was silent or the guest printed something else
          reject(new EngineError('timeout', `no serial output matching ${re} within ${timeoutMs} ms (${this.serial.get(id)?.length ?? 0} characters read)`));
        }, timeoutMs),
      };
      this.waiters.add(w);
    });
  }

  async list(): Promise<MachineRuntime[]> {
    const domains = await this.call<{ name: string; xml: string }[]>('list');
    const out: MachineRuntime[] = [];
    for (const d of domains) {
      if (!this.running.has(d.name) && !this.starting.has(d.name)) {
        // adopted (started by an earlier server): its events and serial output from now on
        this.running.add(d.name);
        await this.call('console', { name: d.name }).catch(() => {});
      }
      if (!this.starting.has(d.name)) out.push(this.runtimeOf(parseLiveXml(d.xml, this.graphicsAddress)));
    }
    return out;
  }

  onEvent(cb: (e: MachineEvent) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  async close(): Promise<void> {
    if (this.conn.state === 'closed') return;
    this.setConn({ state: 'closed', reason: 'closed' });
    this.lose('the driver is closed');
    this.helper.end();
    // A helper blocked on a connection to a host that vanished does not exit by itself: ended.
    const late = await Promise.race([this.exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 5000).unref())]);
    if (late) {
      this.helper.kill();
      await this.exited;
    }
  }
}
