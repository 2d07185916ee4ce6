// The guests' private network: a network namespace this server owns, a bridge in it, dnsmasq
// serving DHCP on the bridge, and a veth pair whose root end gives the server (and only this
// machine) a route to the guests. Desktops with the `wireguard` interface get a TAP on the bridge
// (made in the root namespace, opened by QEMU, then moved into the namespace).
//
// Everything it makes is named from DATA_DIR (see plan.ts): a later run of the same directory
// finds it again. A network with guests on it outlives the server (their machines do too) and is
// adopted at the next start; one without is torn down on stop and rebuilt at start.
import { EventEmitter } from 'node:events';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { runProgram, startDaemon, type ProgramFailure } from '../host/programs';
import { leasedAddress, parseLeases, type Lease } from './leases';
import { DEFAULT_VNI, TUNNEL_MTU, VXLAN_PORT } from './tunnel';
import { formatCidr, networkNames, overlaps, planNetwork, routeDestinations, tapName, type NetworkNames, type NetworkPlan } from './plan';

export type GuestNetworkOptions = {
  /** where the lease file, dnsmasq's pid file and its log live (e.g. DATA_DIR/network) */
  stateDir: string;
  /** names derive from it when not given */
  dataDir: string;
  /** GUEST_NETWORK, e.g. 10.2.0.0/16; `off` disables the network */
  cidr: string;
  namespace?: string;
  linkPrefix?: string;
  /** DHCP lease time; dnsmasq's minimum is 120 s */
  leaseSeconds?: number;
  /** The VXLAN to remote hypervisors (tunnel.ts): its network id (GUEST_NETWORK_VNI) and the
   *  server's address the hosts send to (GUEST_NETWORK_TUNNEL_ADDRESS; default: the route's source). */
  tunnel?: { vni?: number; localAddress?: string };
  log?: { info(o: object, msg?: string): void; warn(o: object, msg?: string): void };
};

/** What the engine needs to give a machine a NIC on the guest network. */
export interface TapNetwork {
  readonly available: boolean;
  tapName(machineId: string, index: number): string;
  /** A fresh persistent TAP in the root namespace, for QEMU to open (a stale one of that name goes first). */
  createTap(name: string): Promise<void>;
  /** Moves the TAP (opened by QEMU) into the namespace and onto the bridge; idempotent. */
  attachTap(name: string): Promise<void>;
  deleteTap(name: string): Promise<void>;
  /** Deletes the TAPs of this network that are not in `keep` (leftovers of machines that are gone). */
  pruneTaps(keep: string[]): Promise<void>;
}

const BRIDGE = 'br0';
const NS_LINK = 'vn0';
const IP = 'ip';

type Link = { ifname: string; master?: string; operstate?: string };

const failureText = (err: unknown) =>
  typeof err === 'object' && err !== null && 'stderr' in err ? String((err as ProgramFailure).stderr).trim() : String(err);

/** Does this process hold CAP_NET_ADMIN (root has it)? */
export function hasNetAdmin(): boolean {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    return eff !== undefined && (BigInt(`0x${eff}`) & (1n << 12n)) !== 0n;
  } catch {
    return false;
  }
}

function findProgram(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin', '/bin']) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

export class GuestNetwork extends EventEmitter<{ lease: [{ mac: string }]; available: [] }> implements TapNetwork {
  /** guests can be given this network and reached (run here, or by the process of this machine that holds it) */
  available = false;
  /** this process runs it (namespace, dnsmasq, tunnel): see `take` */
  held = false;
  /** why the network is not available (for the log and the README's checks); null when it is */
  reason: string | null = null;
  readonly names: NetworkNames;
  readonly plan: NetworkPlan | null;
  readonly leaseSeconds: number;
  readonly #opts: GuestNetworkOptions;
  readonly #stateDir: string;
  #dnsmasq: string | null = null;
  #watcher: FSWatcher | null = null;
  #poll: NodeJS.Timeout | null = null;
  #leases: Lease[] = [];
  #leaseText = '';
  #waiters = 0;

  private constructor(opts: GuestNetworkOptions) {
    super();
    this.#opts = opts;
    this.#stateDir = resolve(opts.stateDir);
    this.names = networkNames(opts.dataDir, { namespace: opts.namespace, linkPrefix: opts.linkPrefix });
    this.plan = opts.cidr === 'off' ? null : planNetwork(opts.cidr);
    this.leaseSeconds = Math.max(120, opts.leaseSeconds ?? 3600);
  }

  get namespace(): string {
    return this.names.namespace;
  }

  get leaseFile(): string {
    return join(this.#stateDir, 'leases');
  }

  /** Opens the network: adopts what an earlier run left (when guests use it), else builds it afresh.
   *  Never throws for a host that cannot: `available` is false and `reason` says why. */
  static async open(opts: GuestNetworkOptions): Promise<GuestNetwork> {
    const net = new GuestNetwork(opts);
    await net.take();
    return net;
  }

  /**
   * The network as a process of an installation sees it before it runs it (cluster mode: one process of
   * the machine holds it, modules/pieces): not available until `take` (this process runs it) or `follow`
   * (the process that runs it says it is there: this machine's guests are reached, their leases read).
   */
  static dormant(opts: GuestNetworkOptions): GuestNetwork {
    const net = new GuestNetwork(opts);
    net.reason = net.plan ? 'run by another server process, none yet' : 'GUEST_NETWORK is off';
    return net;
  }

  /** This process runs the network from now on (adopting what the one before left); idempotent. */
  async take(): Promise<void> {
    if (this.held) return;
    this.reason = this.#cannot();
    if (this.reason) {
      this.available = false;
      return;
    }
    try {
      await this.#up();
      this.available = true;
      this.held = true;
    } catch (err) {
      this.reason = `could not set up the guest network: ${err instanceof Error ? err.message : failureText(err)}`;
      await this.#teardown().catch(() => undefined);
    }
    if (this.reason) this.#opts.log?.warn({ reason: this.reason }, 'guest network not available');
    else this.#opts.log?.info({ namespace: this.namespace }, 'guest network ready');
    if (this.available) this.emit('available');
  }

  /** Another process of this machine runs the network (`available`: it is up there); nothing here changes it. */
  follow(available: boolean): void {
    if (this.held) return;
    const was = this.available;
    this.available = available && this.plan !== null;
    this.reason = this.available ? null : 'the server process that runs the guest network has none';
    if (!was && this.available) this.emit('available');
  }

  /** This process stops running the network (it lost the right to): the network stays, followed. */
  release(): void {
    this.#stopWatching();
    this.held = false;
  }

  /** A network that is off (tests, hosts without the capability). */
  static unavailable(dataDir: string, reason: string): GuestNetwork {
    const net = new GuestNetwork({ stateDir: join(dataDir, 'network'), dataDir, cidr: 'off' });
    net.reason = reason;
    return net;
  }

  /** Why this machine cannot run the network (off, not Linux, no CAP_NET_ADMIN, a program missing), or null. */
  cannotRun(): string | null {
    return this.#cannot();
  }

  #cannot(): string | null {
    if (!this.plan) return 'GUEST_NETWORK is off';
    if (process.platform !== 'linux') return 'the guest network needs Linux';
    if (!hasNetAdmin()) return 'the guest network needs root or CAP_NET_ADMIN';
    if (!findProgram('ip')) return 'the guest network needs `ip` (Debian package iproute2)';
    this.#dnsmasq = findProgram('dnsmasq');
    if (!this.#dnsmasq) return 'the guest network needs dnsmasq (Debian package dnsmasq-base)';
    if (!existsSync('/dev/net/tun')) return 'the guest network needs /dev/net/tun';
    return null;
  }

  /** Runs `cmd args` inside the namespace (e.g. `exec('wg', ['show'])`); answers its stdout. */
  async exec(cmd: string, args: readonly string[] = []): Promise<string> {
    if (!this.available) throw new Error(`guest network not available: ${this.reason}`);
    return runProgram(IP, ['netns', 'exec', this.namespace, cmd, ...args]).catch((err) => {
      throw new Error(`${cmd} in ${this.namespace} failed: ${failureText(err)}`);
    });
  }

  // ---- setting up and tearing down -----------------------------------------------------------

  async #ip(args: string[]): Promise<string> {
    return runProgram(IP, args).catch((err) => {
      throw new Error(`ip ${args.join(' ')}: ${failureText(err)}`);
    });
  }

  async #nsExists(): Promise<boolean> {
    const out = await this.#ip(['netns', 'list']);
    return out.split('\n').some((l) => l.split(/\s+/)[0] === this.namespace);
  }

  async #nsLinks(): Promise<Link[]> {
    return JSON.parse((await this.#ip(['-n', this.namespace, '-j', 'link', 'show'])) || '[]') as Link[];
  }

  async #rootLinks(): Promise<Link[]> {
    return JSON.parse((await this.#ip(['-j', 'link', 'show'])) || '[]') as Link[];
  }

  #isOurTap = (name: string) => name.startsWith(this.names.tapPrefix) && name.length > this.names.tapPrefix.length;

  async #up(): Promise<void> {
    const plan = this.plan!;
    mkdirSync(this.#stateDir, { recursive: true, mode: 0o700 });
    let adopt = false;
    if (await this.#nsExists()) {
      // Guests on the bridge: their machines outlived the last run; keep their network.
      const links = await this.#nsLinks().catch(() => []);
      adopt = links.some((l) => this.#isOurTap(l.ifname) || l.ifname === this.names.tunnelLink);
      if (!adopt) await this.#teardown();
    } else {
      // A crashed run may have left the server's end of the veth, or TAPs not yet moved.
      await this.#removeRootLinks();
    }
    if (!adopt) {
      // The range must not shadow or be shadowed by a route this machine already has.
      const routes = routeDestinations(await this.#ip(['-4', '-o', 'route', 'show', 'table', 'all']));
      const clash = routes.find((r) => overlaps(r, plan.subnet));
      if (clash) throw new Error(`GUEST_NETWORK ${formatCidr(plan.subnet)} overlaps the existing route ${formatCidr(clash)}`);
      await this.#create();
    } else {
      await this.#repair();
    }
    await this.#startDnsmasq();
    this.#watchLeases();
  }

  async #create(): Promise<void> {
    const plan = this.plan!;
    const ns = this.namespace;
    const prefix = plan.subnet.prefix;
    await this.#ip(['netns', 'add', ns]);
    const batch = [
      `-n ${ns} link set lo up`,
      `-n ${ns} link add ${BRIDGE} type bridge`,
      `-n ${ns} addr add ${plan.gateway}/${prefix} dev ${BRIDGE}`,
      `-n ${ns} link set ${BRIDGE} up`,
      // The veth's namespace end is a port of the bridge: the server sits on the guests' segment.
      `link add ${this.names.hostLink} type veth peer name ${NS_LINK} netns ${ns}`,
      `-n ${ns} link set ${NS_LINK} master ${BRIDGE} up`,
      `addr add ${plan.host}/${prefix} dev ${this.names.hostLink}`,
      `link set ${this.names.hostLink} up`,
    ];
    for (const line of batch) await this.#ip(line.split(' '));
    // Forwarding inside the namespace only (a VPN endpoint there routes to the guests); the root's stays as it is.
    await this.#ip(['netns', 'exec', ns, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  }

  /** An adopted namespace: make sure the pieces are there and up (a crashed run may have left it half made). */
  async #repair(): Promise<void> {
    const plan = this.plan!;
    const ns = this.namespace;
    const prefix = plan.subnet.prefix;
    const links = await this.#nsLinks();
    const has = (n: string) => links.some((l) => l.ifname === n);
    if (!has(BRIDGE)) throw new Error(`namespace ${ns} has TAPs but no bridge`);
    await this.#ip(['-n', ns, 'link', 'set', BRIDGE, 'up']);
    await this.#ip(['-n', ns, 'addr', 'replace', `${plan.gateway}/${prefix}`, 'dev', BRIDGE]);
    if (!has(NS_LINK) || !(await this.#rootLinks()).some((l) => l.ifname === this.names.hostLink)) {
      await this.#ip(['link', 'del', this.names.hostLink]).catch(() => undefined);
      await this.#ip(['-n', ns, 'link', 'del', NS_LINK]).catch(() => undefined);
      await this.#ip(['link', 'add', this.names.hostLink, 'type', 'veth', 'peer', 'name', NS_LINK, 'netns', ns]);
    }
    await this.#ip(['-n', ns, 'link', 'set', NS_LINK, 'master', BRIDGE, 'up']);
    await this.#ip(['addr', 'replace', `${plan.host}/${prefix}`, 'dev', this.names.hostLink]);
    await this.#ip(['link', 'set', this.names.hostLink, 'up']);
  }

  async #removeRootLinks(): Promise<void> {
    for (const l of await this.#rootLinks().catch(() => [])) {
      if (l.ifname === this.names.hostLink || l.ifname === this.names.tunnelLink || this.#isOurTap(l.ifname)) await this.#ip(['link', 'del', l.ifname]).catch(() => undefined);
    }
  }

  /** pids of the processes in the namespace (dnsmasq, and a VPN endpoint if one runs there) */
  async #nsPids(): Promise<number[]> {
    const out = await this.#ip(['netns', 'pids', this.namespace]).catch(() => '');
    return out.split('\n').map((l) => Number(l.trim())).filter((n) => Number.isInteger(n) && n > 0);
  }

  async #killInNamespace(filter: (pid: number) => boolean): Promise<void> {
    const pids = (await this.#nsPids()).filter(filter);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    const until = Date.now() + 3000;
    while (Date.now() < until && (await this.#nsPids()).some((p) => pids.includes(p))) await new Promise((r) => setTimeout(r, 50));
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }

  async #teardown(): Promise<void> {
    this.#stopWatching();
    if (await this.#nsExists().catch(() => false)) {
      // Everything running in our namespace was started for this server (dnsmasq, a VPN endpoint).
      await this.#killInNamespace(() => true);
      for (const l of await this.#nsLinks().catch(() => [])) {
        if (this.#isOurTap(l.ifname)) await this.#ip(['-n', this.namespace, 'link', 'del', l.ifname]).catch(() => undefined);
      }
      await this.#ip(['netns', 'del', this.namespace]).catch(() => undefined);
    }
    await this.#removeRootLinks();
    this.available = false;
    this.held = false;
  }

  // ---- dnsmasq and leases ----------------------------------------------------------------------

  #isDnsmasq = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'dnsmasq';
    } catch {
      return false;
    }
  };

  async #startDnsmasq(): Promise<void> {
    const plan = this.plan!;
    // A dnsmasq of an earlier run (it outlives the server with the guests) is replaced: the lease file keeps the leases.
    await this.#killInNamespace(this.#isDnsmasq);
    const pidFile = join(this.#stateDir, 'dnsmasq.pid');
    await rm(pidFile, { force: true });
    const args = [
      'netns', 'exec', this.namespace, this.#dnsmasq!,
      '--keep-in-foreground', '--conf-file=/dev/null', '--port=0',
      `--interface=${BRIDGE}`, '--bind-interfaces', '--except-interface=lo',
      `--dhcp-range=${plan.dhcpFirst},${plan.dhcpLast},${plan.netmask},${this.leaseSeconds}`,
      `--dhcp-option=option:router,${plan.gateway}`,
      '--dhcp-authoritative',
      `--dhcp-leasefile=${this.leaseFile}`,
      `--pid-file=${pidFile}`,
      // No DHCP lines in its log: they carry guest addresses.
      '--quiet-dhcp',
      `--log-facility=${join(this.#stateDir, 'dnsmasq.log')}`,
    ];
    // Detached: it keeps serving the guests while the server restarts.
    const child = startDaemon(IP, args, { logFile: join(this.#stateDir, 'dnsmasq.out') });
    const exited = new Promise<string>((res) => {
      child.once('exit', (code, sig) => res(code !== null ? `exit code ${code}` : `signal ${sig}`));
      child.once('error', (err) => res(err.message));
    });
    // Up when its pid file is written (it has bound its DHCP socket by then).
    const until = Date.now() + 10_000;
    while (!existsSync(pidFile)) {
      const done = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 50))]);
      if (done !== null) {
        const out = await readFile(join(this.#stateDir, 'dnsmasq.out'), 'utf8').catch(() => '');
        throw new Error(`dnsmasq did not start (${done}): ${out.trim().split('\n').slice(-3).join(' ')}`);
      }
      if (Date.now() > until) throw new Error('dnsmasq did not start within 10 s');
    }
  }

  #readLeases(): boolean {
    let text = '';
    try {
      text = readFileSync(this.leaseFile, 'utf8');
    } catch {
      text = '';
    }
    if (text === this.#leaseText) return false;
    const before = new Map(this.#leases.map((l) => [l.mac, l.expiresAt]));
    this.#leaseText = text;
    this.#leases = parseLeases(text);
    for (const l of this.#leases) if (before.get(l.mac) !== l.expiresAt) this.emit('lease', { mac: l.mac });
    return true;
  }

  #watchLeases(): void {
    this.#readLeases();
    try {
      // dnsmasq rewrites the file; the directory sees every change.
      this.#watcher = watch(this.#stateDir, { persistent: false }, () => this.#readLeases());
    } catch {
      this.#watcher = null;
    }
    // Watches miss events on some file systems: a slow poll besides.
    this.#poll = setInterval(() => this.#readLeases(), 1000);
    this.#poll.unref();
  }

  #stopWatching(): void {
    this.#watcher?.close();
    this.#watcher = null;
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = null;
  }

  /** The address leased to `mac` (granted at or after `since`, epoch ms, when given). Never log it. */
  addressOf(mac: string, since?: number): string | null {
    if (!this.available) return null;
    this.#readLeases();
    return leasedAddress(this.#leases, mac, { leaseSeconds: this.leaseSeconds, since: since === undefined ? undefined : since / 1000 });
  }

  /** Resolves with the guest's address once it holds a lease granted since `since` (epoch ms); null on timeout or abort. */
  waitForAddress(mac: string, opts: { since?: number; timeoutMs: number; signal?: AbortSignal }): Promise<string | null> {
    return new Promise((resolvePromise) => {
      const now = this.addressOf(mac, opts.since);
      if (now || !this.available || opts.signal?.aborted) return resolvePromise(now);
      this.#waiters++;
      const check = () => {
        const ip = this.addressOf(mac, opts.since);
        if (ip) finish(ip);
      };
      const tick = setInterval(check, 500);
      const timer = setTimeout(() => finish(null), opts.timeoutMs);
      const onAbort = () => finish(null);
      const finish = (ip: string | null) => {
        clearInterval(tick);
        clearTimeout(timer);
        this.off('lease', check);
        opts.signal?.removeEventListener('abort', onAbort);
        this.#waiters--;
        resolvePromise(ip);
      };
      this.on('lease', check);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  // ---- TAPs ------------------------------------------------------------------------------------

  tapName(machineId: string, index: number): string {
    return tapName(this.names, machineId, index);
  }

  /**
   * The TAP a machine's QEMU opens, made in this host's namespace (QEMU runs there) before its launch. One `ip` run on a
   * start's path: a leftover of the same name (a machine that died with its TAP) is removed only when the making fails;
   * one left in the guest network's namespace is removed when the new one moves there (`attachTap`).
   */
  async createTap(name: string): Promise<void> {
    if (!this.available) throw new Error(`guest network not available: ${this.reason}`);
    const add = () => this.#ip(['tuntap', 'add', 'dev', name, 'mode', 'tap']);
    await add().catch(async () => {
      await this.deleteTap(name);
      await add();
    });
  }

  /** The TAP QEMU holds open, moved into the guest network's namespace and onto its bridge (two `ip` runs on a start's path). */
  async attachTap(name: string): Promise<void> {
    if (!this.available) throw new Error(`guest network not available: ${this.reason}`);
    const move = () => this.#ip(['link', 'set', name, 'netns', this.namespace]);
    await move().catch(async () => {
      // Already there (nothing to move), or a leftover of the same name there holds the name: that one goes.
      if (!(await this.#rootLinks()).some((l) => l.ifname === name)) return;
      await this.#ip(['-n', this.namespace, 'link', 'del', name]).catch(() => undefined);
      await move();
    });
    await this.#ip(['-n', this.namespace, 'link', 'set', name, 'master', BRIDGE, 'up']);
  }

  async deleteTap(name: string): Promise<void> {
    if (!this.#isOurTap(name)) throw new Error(`${name} is not a TAP of this network`);
    await this.#ip(['link', 'del', name]).catch(() => undefined);
    if (await this.#nsExists().catch(() => false)) await this.#ip(['-n', this.namespace, 'link', 'del', name]).catch(() => undefined);
  }

  async pruneTaps(keep: string[]): Promise<void> {
    if (!this.available) return;
    const keepSet = new Set(keep);
    for (const l of await this.#nsLinks().catch(() => [])) {
      if (this.#isOurTap(l.ifname) && !keepSet.has(l.ifname)) await this.#ip(['-n', this.namespace, 'link', 'del', l.ifname]).catch(() => undefined);
    }
    for (const l of await this.#rootLinks().catch(() => [])) {
      if (this.#isOurTap(l.ifname) && !keepSet.has(l.ifname)) await this.#ip(['link', 'del', l.ifname]).catch(() => undefined);
    }
  }

  // ---- the tunnel to remote hypervisors (tunnel.ts) -------------------------------------------

  #tunnelWork: Promise<unknown> = Promise.resolve();

  /** One change of the tunnel at a time (hosts connect side by side). */
  #tunnelStep<T>(step: () => Promise<T>): Promise<T> {
    const next = this.#tunnelWork.then(step, step);
    this.#tunnelWork = next.catch(() => undefined);
    return next;
  }

  /** The remote hosts' addresses the tunnel floods to. */
  async tunnelPeers(): Promise<string[]> {
    if (!this.available) return [];
    const out = await this.#ip(['-n', this.namespace, 'link', 'show', this.names.tunnelLink]).catch(() => null);
    if (out === null) return [];
    const fdb = JSON.parse((await runProgram('bridge', ['-n', this.namespace, '-j', 'fdb', 'show', 'dev', this.names.tunnelLink])) || '[]') as { mac: string; dst?: string }[];
    return fdb.filter((e) => e.mac === '00:00:00:00:00:00' && e.dst).map((e) => e.dst!);
  }

  /**
   * Spans the guest network to the hypervisor at `address` (an IPv4 address): the VXLAN device is
   * made on the first host (in the root namespace, so that its UDP socket uses the routes that reach
   * the hosts, then moved onto the bridge), and floods to each host. Idempotent.
   */
  addTunnelPeer(address: string): Promise<void> {
    return this.#tunnelStep(async () => {
      // Followed: the process that runs the network spans it to every host it connects (the same ones).
      if (this.available && !this.held) return;
      if (!this.available) throw new Error(`guest network not available: ${this.reason}`);
      const ns = this.namespace;
      const dev = this.names.tunnelLink;
      if ((await this.#ip(['-n', ns, 'link', 'show', dev]).catch(() => null)) === null) {
        const vni = this.#opts.tunnel?.vni ?? DEFAULT_VNI;
        const local = this.#opts.tunnel?.localAddress;
        await this.#ip(['link', 'del', dev]).catch(() => undefined);
        await this.#ip(['link', 'add', dev, 'type', 'vxlan', 'id', String(vni), 'dstport', String(VXLAN_PORT), ...(local ? ['local', local] : [])]);
        try {
          await this.#ip(['link', 'set', dev, 'netns', ns]);
        } catch (err) {
          await this.#ip(['link', 'del', dev]).catch(() => undefined);
          throw err;
        }
        await this.#ip(['-n', ns, 'link', 'set', dev, 'mtu', String(TUNNEL_MTU), 'master', BRIDGE, 'up']);
        // The server's end too: its TCP (RDP proxies, bastion) offers segments that fit the tunnel.
        await this.#ip(['link', 'set', this.names.hostLink, 'mtu', String(TUNNEL_MTU)]);
        await this.#ip(['-n', ns, 'link', 'set', NS_LINK, 'mtu', String(TUNNEL_MTU)]);
      }
      if ((await this.tunnelPeers()).includes(address)) return;
      await runProgram('bridge', ['-n', ns, 'fdb', 'append', '00:00:00:00:00:00', 'dev', dev, 'dst', address]).catch((err) => {
        throw new Error(`bridge fdb append: ${failureText(err)}`);
      });
    });
  }

  /** The hypervisor at `address` leaves the guest network; without hosts the VXLAN device goes too. */
  removeTunnelPeer(address: string): Promise<void> {
    return this.#tunnelStep(async () => {
      if (!this.held) return;
      const peers = await this.tunnelPeers();
      if (peers.includes(address)) {
        await runProgram('bridge', ['-n', this.namespace, 'fdb', 'del', '00:00:00:00:00:00', 'dev', this.names.tunnelLink, 'dst', address]).catch(() => undefined);
      }
      if (peers.every((p) => p === address)) await this.#ip(['-n', this.namespace, 'link', 'del', this.names.tunnelLink]).catch(() => undefined);
    });
  }

  /**
   * Guests still on the bridge: a TAP here, or the tunnel to remote hosts when `remoteGuests` (the
   * engine knows whether machines run there; the tunnel alone means only that hosts are connected).
   */
  async inUse(remoteGuests = true): Promise<boolean> {
    if (!this.available) return false;
    return (await this.#nsLinks().catch(() => [])).some((l) => this.#isOurTap(l.ifname) || (remoteGuests && l.ifname === this.names.tunnelLink));
  }

  /**
   * On the server's stop. With guests on it, the network stays (their machines keep running and
   * the next start adopts both); without, or with `{ teardown: true }` (tests), it is removed.
   * `remoteGuests`: whether machines may run on other hosts (unknown: assumed).
   */
  async close(opts: { teardown?: boolean; remoteGuests?: boolean } = {}): Promise<void> {
    this.#stopWatching();
    if (!this.held && !opts.teardown) {
      this.available = false;
      return;
    }
    if (!opts.teardown && (await this.inUse(opts.remoteGuests))) {
      this.available = false;
      return;
    }
    if (this.plan || opts.teardown) await this.#teardown();
  }
}
