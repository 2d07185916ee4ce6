// The hosts of a fleet: this machine (LocalHostDirectory's answers) and every remote hypervisor the
// engine holds a libvirt connection to (one LibvirtDriver each, registered in the FleetDriver).
// Remote hosts are reached over `qemu+ssh://` with the installation's key and an ssh command that
// checks the one host key an admin confirmed (libvirt 9's `qemu+ssh` passes no known_hosts to ssh, and
// `qemu+libssh` was measured 5 s a call and crashing: docs/decisions/0009-fleet-ssh-transport.md). A connection that drops (libvirt keepalive) leaves the host
// offline with its last error, and the directory reconnects in the background with a bounded back-off.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { lookup } from 'node:dns/promises';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { clientPkiPath, ensureLibvirtPki } from '../../host/libvirt-pki';
import { runProgram } from '../../host/programs';
import { ensureSshIdentity, privateKeyFile, publicKey, writeKnownHost, writeSshCommand } from '../../host/ssh-identity';
import { EngineError } from '../driver';
import type { FleetDriver } from '../fleet';
import { cpuBusyPercent, HostError, type CpuTimes, type HostConnectOptions, type HostDirectory, type HostKey, type HostStatus } from '../hosts';
import type { GuestNetwork } from '../../network/guest-network';
import { LibvirtDriver, redact } from './libvirt-driver';
import type { StartQueue } from '../start-queue';

/** Back-off between reconnection attempts: doubling from the first, never longer than the last. */
const RETRY_MS = { first: 1000, max: 30_000 };
/** How long a first connection (and its adoption of running domains) may take. */
const CONNECT_TIMEOUT_MS = 30_000;
/**
 * Every connected host is asked for its numbers this often; no answer within HEARTBEAT_TIMEOUT_MS
 * and it is lost. libvirt's own keepalive did not end a connection whose host vanished from the
 * network (a lab host's link set down: still open after 78 s), so the directory does not rely on it.
 */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;

type Remote = {
  uri: string;
  fingerprint?: string;
  driver?: LibvirtDriver;
  lastError: string | null;
  /** the last numbers read while online (kept while offline, as HostStatus says); `guestBridge`: the host's
   *  bridge for the guest network as it said (whether the network reaches it is decided when asked: `tunnelPeer`) */
  last?: Omit<HostStatus, 'online' | 'lastError' | 'checkedAt' | 'startsInFlight' | 'guestNetwork'> & { guestBridge: boolean | null };
  /** when `last` was read from the connected host (the heartbeat keeps it fresh) */
  sampledAt?: number;
  /** the host's CPU times at that reading (its load is the busy share until the next) */
  cpuTimes?: CpuTimes;
  retry?: NodeJS.Timeout;
  heartbeat?: NodeJS.Timeout;
  retryMs: number;
  removed: boolean;
  /** offline listeners were told (once per time offline) */
  toldOffline: boolean;
  /** the host's IPv4 address the guest network's tunnel floods to, once it is spanned there */
  tunnelPeer?: string;
  /** why the last span failed (said once in the log; the heartbeat tries again) */
  spanFailure?: string;
};

/** A remote hypervisor's URI split: how the server reaches it. */
function parseUri(uri: string): { transport: 'ssh' | 'tls'; user: string; host: string; port: number; path: string } {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new HostError('uri_invalid', 'not a libvirt URI');
  }
  const transport = u.protocol === 'qemu+ssh:' || u.protocol === 'qemu+libssh:' ? 'ssh' : u.protocol === 'qemu+tls:' ? 'tls' : null;
  if (!transport || !u.hostname) throw new HostError('uri_invalid', 'a hypervisor is qemu+ssh://user@host/system or qemu+tls://host/system');
  return { transport, user: decodeURIComponent(u.username || 'root'), host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : transport === 'ssh' ? 22 : 16514, path: u.pathname || '/system' };
}

/** `SHA256:…` of a host key's base64 body, as `ssh-keygen -lf` prints it. */
export function fingerprintOf(base64Key: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(base64Key, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

export class FleetHostDirectory implements HostDirectory {
  private readonly remotes = new Map<string, Remote>();
  private readonly onlineListeners = new Set<(id: string) => void>();
  private readonly offlineListeners = new Set<(id: string, reason: string) => void>();

  constructor(
    private readonly parts: {
      fleet: FleetDriver;
      /** the installation's start queue: a host's starts in flight in every server process (else this process's, from the fleet) */
      queue?: Pick<StartQueue, 'inFlight'>;
      /** this machine's answers */
      local: HostDirectory;
      /** where the installation's SSH key and the hosts' known_hosts live */
      dataDir: string;
      /** the guest network, spanned to every connected host (network/tunnel.ts); absent or unavailable: not spanned */
      network?: Pick<GuestNetwork, 'available' | 'addTunnelPeer' | 'removeTunnelPeer'>;
      keepAlive?: { intervalS: number; count: number };
      log?: { warn: (obj: object, msg: string) => void; info: (obj: object, msg: string) => void };
    },
  ) {}

  async installationPublicKey(): Promise<string | null> {
    return publicKey(this.parts.dataDir);
  }

  /**
   * The certificate a `qemu+tls` host's libvirtd presents (its SHA-256 as `openssl x509 -fingerprint
   * -sha256` prints it), read with the installation's client certificate (libvirtd asks for one).
   */
  private async certificate(uri: string): Promise<HostKey> {
    const { host, port } = parseUri(uri);
    await ensureLibvirtPki(this.parts.dataDir);
    const dir = clientPkiPath(this.parts.dataDir);
    const [cert, key] = await Promise.all([readFile(join(dir, 'clientcert.pem')), readFile(join(dir, 'clientkey.pem'))]);
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const socket = tlsConnect({ host, port, cert, key, rejectUnauthorized: false, servername: isIP(host) ? undefined : host, timeout: 15_000 }, () => {
        const peer = socket.getPeerCertificate();
        socket.destroy();
        if (peer?.raw) resolve(peer.raw);
        else reject(new Error('no certificate'));
      });
      socket.once('timeout', () => socket.destroy(new Error('timeout')));
      socket.once('error', reject);
    }).catch(() => {
      throw new HostError('unreachable', 'the host did not answer on its libvirt TLS port');
    });
    const hex = createHash('sha256').update(raw).digest('hex').toUpperCase().match(/../g)!.join(':');
    return { algorithm: 'x509', fingerprint: `SHA256:${hex}` };
  }

  /** Every host key the host at `uri` presents (ssh-keyscan), ed25519 first. */
  private async scan(uri: string): Promise<{ type: string; body: string }[]> {
    const { host, port } = parseUri(uri);
    const out = await runProgram('ssh-keyscan', ['-T', '5', '-t', 'ed25519,ecdsa,rsa', '-p', String(port), host], { timeoutMs: 15_000 }).catch(() => '');
    const keys = out
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length >= 3 && !f[0]!.startsWith('#'))
      .map((f) => ({ type: f[1]!, body: f[2]! }));
    if (keys.length === 0) throw new HostError('unreachable', 'the host did not answer on its SSH port');
    const rank = (t: string) => (t === 'ssh-ed25519' ? 0 : t.startsWith('ecdsa') ? 1 : 2);
    return keys.sort((a, b) => rank(a.type) - rank(b.type));
  }

  async hostKey(uri: string): Promise<HostKey> {
    if (parseUri(uri).transport === 'tls') return this.certificate(uri);
    const [key] = await this.scan(uri);
    return { algorithm: key!.type, fingerprint: fingerprintOf(key!.body) };
  }

  /**
   * The URI the helper opens: qemu+ssh with the installation's key and an ssh that checks this host's
   * confirmed key only; qemu+tls with the installation's client certificate, libvirt checking the
   * host's against the installation's CA and the host's name.
   */
  private async connectionUri(id: string, uri: string): Promise<string> {
    const u = parseUri(uri);
    if (u.transport === 'tls') return `${uri}?pkipath=${clientPkiPath(this.parts.dataDir)}`;
    const q = new URLSearchParams({ keyfile: privateKeyFile(this.parts.dataDir), command: await writeSshCommand(this.parts.dataDir, id) });
    const host = u.host.includes(':') ? `[${u.host}]` : u.host;
    return `qemu+ssh://${encodeURIComponent(u.user)}@${host}${u.port === 22 ? '' : `:${u.port}`}${u.path}?${q.toString().replace(/%2F/g, '/')}`;
  }

  /** One attempt: the host key checked and written, a driver connected and registered in the fleet. */
  private async open(id: string, r: Remote): Promise<void> {
    const { host, port, transport } = parseUri(r.uri);
    if (transport === 'ssh') {
      await ensureSshIdentity(this.parts.dataDir);
      const key = (await this.scan(r.uri)).find((k) => !r.fingerprint || fingerprintOf(k.body) === r.fingerprint);
      if (!key) throw new HostError('host_key_changed', 'the host presented another host key than the one confirmed');
      await writeKnownHost(this.parts.dataDir, id, { name: host, port }, `${key.type} ${key.body}`);
    } else if (r.fingerprint && (await this.certificate(r.uri)).fingerprint !== r.fingerprint) {
      throw new HostError('host_key_changed', 'the host presented another certificate than the one confirmed');
    }
    const driver = new LibvirtDriver({ uri: await this.connectionUri(id, r.uri), graphicsAddress: host, keepAlive: this.parts.keepAlive });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new EngineError('host-unreachable', 'the hypervisor did not answer in time')), CONNECT_TIMEOUT_MS).unref());
    try {
      await Promise.race([driver.ready(), timeout]);
    } catch (err) {
      await driver.close().catch(() => undefined);
      if (err instanceof EngineError && err.code === 'host-key-unknown') throw new HostError('host_key_changed', err.message);
      throw new HostError('unreachable', err instanceof EngineError ? `${err.message}${err.detail ? `: ${err.detail}` : ''}` : 'cannot connect to the hypervisor');
    }
    if (r.removed || this.parts.fleet.closed) {
      await driver.close();
      return;
    }
    r.driver = driver;
    r.lastError = null;
    r.retryMs = RETRY_MS.first;
    r.toldOffline = false;
    await this.spanGuestNetwork(id, r, host);
    this.parts.fleet.setHost(id, driver);
    for (const cb of this.onlineListeners) cb(id);
    driver.onConnection((s) => {
      if (s.state === 'lost') this.lose(id, r, driver, s.reason ?? 'connection to the hypervisor lost');
    });
    r.heartbeat = setInterval(() => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the hypervisor did not answer in time')), HEARTBEAT_TIMEOUT_MS);
      });
      // A span that failed (the network not there yet, a command refused under load) is tried again here.
      if (!r.tunnelPeer && this.parts.network?.available) void this.spanGuestNetwork(id, r, parseUri(r.uri).host);
      Promise.race([this.sample(r, driver), late])
        .catch((err: unknown) => this.lose(id, r, driver, this.words(err, r.uri)))
        .finally(() => clearTimeout(timer));
    }, HEARTBEAT_MS);
    r.heartbeat.unref();
  }

  /** Lost (keepalive, socket, helper, no answer to the heartbeat): offline with the reason, tried again in the background. */
  private lose(id: string, r: Remote, driver: LibvirtDriver, reason: string) {
    if (r.driver !== driver) return;
    clearInterval(r.heartbeat);
    r.heartbeat = undefined;
    r.lastError = reason;
    r.driver = undefined;
    this.parts.log?.warn({ hypervisor: id, reason }, 'hypervisor connection lost');
    // Its machines are not known from now on (nothing is routed to a closed connection).
    this.parts.fleet.removeHost(id);
    void driver.close();
    this.tellOffline(id, r);
    this.retry(id, r);
  }

  private tellOffline(id: string, r: Remote) {
    if (r.toldOffline || r.removed) return;
    r.toldOffline = true;
    for (const cb of this.offlineListeners) cb(id, r.lastError ?? 'offline');
  }

  /** The guest network reaches the host (its VXLAN peer): desktops there get their lease from this server.
   *  A failure is logged and leaves the host connected (its desktops without the guest network still run). */
  private async spanGuestNetwork(id: string, r: Remote, host: string, again = false) {
    const network = this.parts.network;
    if (!network?.available || (r.tunnelPeer && !again)) return;
    try {
      const { address } = await lookup(host, { family: 4 });
      await network.addTunnelPeer(address);
      r.tunnelPeer = address;
      r.spanFailure = undefined;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      // Said once per reason: the heartbeat tries again every few seconds.
      if (r.spanFailure !== reason) this.parts.log?.warn({ hypervisor: id, reason }, 'the guest network does not reach this hypervisor');
      r.spanFailure = reason;
    }
  }

  /**
   * The guest network became available here (this process took it over, or the one that runs it said so):
   * it reaches every host connected before, as it does each one that connects (idempotent).
   */
  async spanToConnected(): Promise<void> {
    await Promise.all(
      [...this.remotes].filter(([, r]) => r.driver).map(([id, r]) => this.spanGuestNetwork(id, r, parseUri(r.uri).host, true)),
    );
  }

  private retry(id: string, r: Remote) {
    if (r.removed || r.retry || this.parts.fleet.closed) return;
    r.retry = setTimeout(() => {
      r.retry = undefined;
      this.open(id, r).then(
        () => this.parts.log?.info({ hypervisor: id }, 'hypervisor connected'),
        (err: unknown) => {
          r.lastError = this.words(err, r.uri);
          // A stored host that does not answer at server start: offline from its first attempt.
          this.tellOffline(id, r);
          r.retryMs = Math.min(r.retryMs * 2, RETRY_MS.max);
          this.retry(id, r);
        },
      );
    }, r.retryMs);
    r.retry.unref();
  }

  private words(err: unknown, uri: string): string {
    return redact(err instanceof Error ? err.message : String(err), uri);
  }

  async connect(id: string, uri: string, opts: HostConnectOptions): Promise<HostStatus> {
    if (id === LOCAL_HYPERVISOR) throw new HostError('uri_invalid', 'the local host is not connected by a URI');
    if (this.remotes.has(id)) await this.disconnect(id);
    const r: Remote = { uri, fingerprint: opts.hostKeyFingerprint, lastError: null, retryMs: RETRY_MS.first, removed: false, toldOffline: false };
    this.remotes.set(id, r);
    try {
      await this.open(id, r);
    } catch (err) {
      this.remotes.delete(id);
      r.removed = true;
      throw err instanceof HostError ? err : new HostError('unreachable', this.words(err, uri));
    }
    return (await this.status(id))!;
  }

  /** A stored host (server start): connected in the background; until then, and while it fails, offline with the reason. */
  resume(id: string, uri: string, opts: HostConnectOptions): void {
    if (this.remotes.has(id) || id === LOCAL_HYPERVISOR) return;
    const r: Remote = { uri, fingerprint: opts.hostKeyFingerprint, lastError: 'connecting', retryMs: 0, removed: false, toldOffline: false };
    this.remotes.set(id, r);
    this.retry(id, r);
    r.retryMs = RETRY_MS.first;
  }

  onOnline(cb: (id: string) => void): () => void {
    this.onlineListeners.add(cb);
    return () => this.onlineListeners.delete(cb);
  }

  onOffline(cb: (id: string, reason: string) => void): () => void {
    this.offlineListeners.add(cb);
    return () => this.offlineListeners.delete(cb);
  }

  /** The host is removed: its connection ends and the guest network no longer reaches it. */
  async disconnect(id: string): Promise<void> {
    const peer = this.remotes.get(id)?.tunnelPeer;
    await this.drop(id);
    if (peer && ![...this.remotes.values()].some((x) => x.tunnelPeer === peer)) await this.parts.network?.removeTunnelPeer(peer).catch(() => undefined);
  }

  private async drop(id: string): Promise<void> {
    const r = this.remotes.get(id);
    if (!r) return;
    r.removed = true;
    if (r.retry) clearTimeout(r.retry);
    clearInterval(r.heartbeat);
    this.remotes.delete(id);
    this.parts.fleet.removeHost(id);
    await r.driver?.close();
  }

  /** The host's numbers now, kept as its last known ones. */
  private async sample(r: Remote, driver: LibvirtDriver) {
    const [{ cpuTimes, ...info }, machines] = await Promise.all([driver.hostInfo(), driver.list()]);
    // Its load: the busy share since the previous reading (the heartbeat's, seconds ago; the first: since it booted).
    const cpuUsedPercent = cpuTimes ? cpuBusyPercent(r.cpuTimes, cpuTimes) : undefined;
    if (cpuTimes) r.cpuTimes = cpuTimes;
    r.last = { ...info, running: machines.length, ...(cpuUsedPercent === undefined ? {} : { cpuUsedPercent }) };
    r.sampledAt = Date.now();
    return r.last;
  }

  /** A connected host answers from its heartbeat's numbers while they are fresh (placement asks every host at
   *  every start: a round trip over SSH each, measured 0.1–0.7 s under load), else it is asked now. */
  async status(id: string): Promise<HostStatus | null> {
    if (id === LOCAL_HYPERVISOR) return this.parts.local.status(id);
    const r = this.remotes.get(id);
    if (!r) return null;
    const checkedAt = new Date().toISOString();
    const own = this.parts.fleet.startsInFlight(id);
    const startsInFlight = this.parts.queue ? await this.parts.queue.inFlight(id).catch(() => own) : own;
    if (r.driver) {
      try {
        const fresh = r.last && r.sampledAt !== undefined && Date.now() - r.sampledAt < HEARTBEAT_MS + 1000;
        const { guestBridge, ...last } = fresh ? r.last! : await this.sample(r, r.driver);
        // Decided now, not when the numbers were read: the span may have ended since (the connection's
        // first reading comes before it; a followed network becomes available later).
        return { online: true, ...last, guestNetwork: guestBridge !== false && r.tunnelPeer !== undefined, startsInFlight, lastError: null, checkedAt };
      } catch (err) {
        r.lastError = this.words(err, r.uri);
      }
    }
    const { guestBridge: _bridge, ...last } = r.last ?? { cpuModel: '', cpus: 0, memoryMb: 0, freeMemoryMb: 0, running: 0, pools: [], guestBridge: null };
    return { online: false, ...last, guestNetwork: false, startsInFlight, lastError: r.lastError, checkedAt };
  }

  /** Ends every connection (machines keep running, and the guest network keeps reaching them; the next server adopts them). */
  async close(): Promise<void> {
    await Promise.all([...this.remotes.keys()].map((id) => this.drop(id)));
  }
}
