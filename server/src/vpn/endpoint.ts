// The users' WireGuard endpoint. wireguard-go (or the kernel's WireGuard: the same steps) makes
// its interface in the root namespace, where its UDP socket is opened and stays; the interface is
// then moved into the guest network's namespace. So users reach the configured UDP port on the
// host's own addresses, with no DNAT, no forwarding in the root namespace and no relay in the
// server, while the tunnel's packets come out next to the guests, under the namespace's firewall.
//
// The process is detached: like the guest network's dnsmasq it outlives a server restart, and the
// next start adopts it (its peers and firewall are made again from the database).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, startDaemon, type ProgramFailure } from '../host/programs';
import { wgServerConfig } from './config-file';
import { vpnRuleset, VPN_TABLE, type ReachPair } from './firewall';

export type VpnEndpointOptions = {
  /** the guest network's namespace, and this server's interface name (unique on the host: wg's control sockets are shared) */
  namespace: string;
  ifname: string;
  /** DATA_DIR/vpn: pid file, the endpoint's configuration (0600), wireguard-go's output */
  stateDir: string;
  port: number;
  privateKey: string;
  /** the endpoint's address in the users' range, with its prefix (e.g. 10.0.0.1/16) */
  address: string;
  log?: { info(o: object, msg?: string): void; warn(o: object, msg?: string): void };
};

export type VpnPeer = { publicKey: string; address: string };

const SOCKET_DIR = '/var/run/wireguard';

/** `ip`, `wg` and `nft` through the host's program runner (as the guest network's own commands). */
function run(cmd: string, args: readonly string[]): Promise<string> {
  return runProgram(cmd, args, { timeoutMs: 15_000 }).catch((f: ProgramFailure) => {
    throw new Error(`${cmd} ${args[0] ?? ''}: ${String(f.stderr).trim()}`);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Is `pid` the wireguard-go of `ifname` (not a reused pid, not another server's)? */
function isOurs(pid: number, ifname: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.some((a) => a.endsWith('wireguard-go')) && args.includes(ifname);
  } catch {
    return false;
  }
}

export class VpnEndpoint {
  readonly #o: VpnEndpointOptions;
  #applied = { peers: '', rules: '' };

  private constructor(o: VpnEndpointOptions) {
    this.#o = o;
  }

  get ifname() {
    return this.#o.ifname;
  }

  get #pidFile() {
    return join(this.#o.stateDir, 'wireguard-go.pid');
  }

  #ns(args: string[]) {
    return run('ip', ['-n', this.#o.namespace, ...args]);
  }

  async #controlAlive(): Promise<boolean> {
    return run('wg', ['show', this.#o.ifname, 'listen-port']).then(
      () => true,
      () => false,
    );
  }

  async #linkIn(where: 'ns' | 'root'): Promise<boolean> {
    const args = ['link', 'show', 'dev', this.#o.ifname];
    return (where === 'ns' ? this.#ns(args) : run('ip', args)).then(
      () => true,
      () => false,
    );
  }

  /** Starts the endpoint or adopts the one an earlier run left; applies the key and port. */
  static async open(o: VpnEndpointOptions, initial: { peers: VpnPeer[]; reach: ReachPair[] }): Promise<VpnEndpoint> {
    const ep = new VpnEndpoint(o);
    mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
    const inNs = await ep.#linkIn('ns');
    const alive = await ep.#controlAlive();
    if (inNs && alive) {
      o.log?.info({ ifname: o.ifname }, 'vpn endpoint adopted');
    } else {
      await ep.#stopProcess();
      if (inNs) await ep.#ns(['link', 'del', 'dev', o.ifname]).catch(() => undefined);
      if (await ep.#linkIn('root')) await run('ip', ['link', 'del', 'dev', o.ifname]).catch(() => undefined);
      rmSync(join(SOCKET_DIR, `${o.ifname}.sock`), { force: true });
      await ep.#startProcess();
    }
    // Key, port and the peers as the database has them (an adopted endpoint keeps its sessions).
    try {
      await ep.#syncconf(initial.peers);
    } catch (err) {
      await ep.close({ stop: true });
      throw err;
    }
    if (await ep.#linkIn('root')) await run('ip', ['link', 'set', 'dev', o.ifname, 'netns', o.namespace]);
    await ep.#ns(['addr', 'replace', o.address, 'dev', o.ifname]);
    await ep.#ns(['link', 'set', 'dev', o.ifname, 'up']);
    await ep.apply(initial.peers, initial.reach);
    return ep;
  }

  async #startProcess(): Promise<void> {
    // Silent: its log would name the peers' addresses.
    const child = startDaemon('wireguard-go', ['-f', this.#o.ifname], { logFile: join(this.#o.stateDir, 'wireguard-go.log'), env: { ...process.env, LOG_LEVEL: 'silent' } });
    let exited: string | null = null;
    child.once('exit', (code, sig) => (exited = code !== null ? `exit code ${code}` : `signal ${sig}`));
    child.once('error', (err) => (exited = err.message));
    if (child.pid) writeFileSync(this.#pidFile, String(child.pid), { mode: 0o600 });
    const until = Date.now() + 10_000;
    while (!(await this.#controlAlive())) {
      if (exited) throw new Error(`wireguard-go did not start (${exited})`);
      if (Date.now() > until) throw new Error('wireguard-go did not start within 10 s');
      await sleep(50);
    }
  }

  async #stopProcess(): Promise<void> {
    let pid = 0;
    try {
      pid = Number(readFileSync(this.#pidFile, 'utf8').trim());
    } catch {
      return;
    }
    const ifname = this.#o.ifname;
    if (pid > 0 && isOurs(pid, ifname)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone
      }
      const until = Date.now() + 3000;
      while (isOurs(pid, ifname) && Date.now() < until) await sleep(50);
      if (isOurs(pid, ifname)) process.kill(pid, 'SIGKILL');
    }
    rmSync(this.#pidFile, { force: true });
  }

  async #syncconf(peers: VpnPeer[]): Promise<void> {
    const file = join(this.#o.stateDir, 'wg.conf');
    writeFileSync(file, wgServerConfig({ privateKey: this.#o.privateKey, listenPort: this.#o.port, peers }), { mode: 0o600 });
    try {
      await run('wg', ['syncconf', this.#o.ifname, file]);
    } finally {
      rmSync(file, { force: true });
    }
  }

  async #nft(ruleset: string): Promise<void> {
    const file = join(this.#o.stateDir, 'nft.rules');
    writeFileSync(file, ruleset, { mode: 0o600 });
    // nft's complaints quote the rules, which hold addresses: they are not passed on (nor logged).
    await run('ip', ['netns', 'exec', this.#o.namespace, 'nft', '-f', file]).catch(() => {
      throw new Error('nft refused the VPN firewall rules');
    });
  }

  /** Peers and firewall as given (each applied only when it changed, or always with `force`): a removed peer is gone at once. */
  async apply(peers: VpnPeer[], reach: ReachPair[], force = false): Promise<void> {
    if (force) this.#applied = { peers: '', rules: '' };
    const peerKey = JSON.stringify(peers.map((p) => [p.publicKey, p.address]).sort());
    if (peerKey !== this.#applied.peers) {
      await this.#syncconf(peers);
      this.#applied.peers = peerKey;
    }
    const rules = vpnRuleset(this.#o.ifname, reach);
    if (rules !== this.#applied.rules) {
      // Rules first when reach shrinks is not needed: the table is replaced as a whole, atomically.
      await this.#nft(rules);
      this.#applied.rules = rules;
    }
  }

  /** `stop`: end the process and remove the interface (tests; a network being torn down). Otherwise it keeps running for the next start. */
  async close(opts: { stop?: boolean } = {}): Promise<void> {
    if (!opts.stop) return;
    await run('ip', ['netns', 'exec', this.#o.namespace, 'nft', 'delete', 'table', 'inet', VPN_TABLE]).catch(() => undefined);
    await this.#stopProcess();
    await this.#ns(['link', 'del', 'dev', this.#o.ifname]).catch(() => undefined);
    await run('ip', ['link', 'del', 'dev', this.#o.ifname]).catch(() => undefined);
    if (existsSync(join(SOCKET_DIR, `${this.#o.ifname}.sock`))) rmSync(join(SOCKET_DIR, `${this.#o.ifname}.sock`), { force: true });
  }
}
