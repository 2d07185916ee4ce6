import { scaled } from './slowdown';
// Several real server processes of one installation (one scratch PostgreSQL database, one DATA_DIR, one
// SECRET) behind Debian's HAProxy running the shipped configuration (deploy/haproxy/haproxy.cfg), for
// the tests of server/test/processes and the other helpers. A process can be killed (-9), stopped
// (SIGTERM: it drains) and started again on its port; the balancer's view of each is read from its stats.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from './db';
import { startServerProcess, type ServerProcess } from './process';
import { until } from './wait';
import { freeGuestSubnet, testNetworkOptions } from './guest-network';
import { GuestNetwork } from '../../src/network/guest-network';
import { haproxyConfig, serverStates, startHaproxy } from '../../../scripts/lib/haproxy.mjs';

export type ProcessCluster = {
  /** The balancer's address: what people use. */
  url: string;
  /** HAProxy's stats page. */
  statsUrl: string;
  databaseUrl: string;
  dataDir: string;
  /** The processes' SERVER_IDs (also HAProxy's server names), by index. */
  ids: string[];
  /** Process i's own address (bypassing the balancer). */
  direct(i: number): string;
  /** The running child of process i (undefined while it is down). */
  process(i: number): ServerProcess | undefined;
  /** kill -9 of process i; resolves once it is gone. */
  kill(i: number): Promise<void>;
  /** SIGTERM to process i (its health answers 503, then it closes); resolves with its exit code. */
  stop(i: number): Promise<number | null>;
  /** Starts process i again (same port, id and environment); resolves once it answers directly. */
  start(i: number): Promise<void>;
  /** Waits until the balancer holds process i as `state` (UP, DOWN…), within `ms` scaled; answers the time it took. */
  untilBalancer(i: number, state: 'UP' | 'DOWN', ms?: number): Promise<number>;
  /** With `pieces`: what the processes were given of this machine's pieces (one of them runs them). */
  pieces?: { network: { cidr: string; namespace: string; linkPrefix: string }; rdpGatewayPort: number; bastionSshPort: number; vpnPort: number };
  /** Everything the processes and the balancer wrote. */
  output(): string;
  close(): Promise<void>;
};

/**
 * `n` server processes on ports first+2… and HAProxy on `ports.first` (stats on first+1), all on
 * 127.0.0.1. The processes start at the same moment on the fresh database (the start-up lock decides
 * who migrates and seeds). By default none runs this machine's pieces: no local hypervisor, guest
 * network, VPN or RD Gateway (quicker). `pieces`: all are given the same guest network (a free /24, its
 * own namespace), RD Gateway (port first+2+n), bastion SSH (first+3+n) and VPN (UDP first+4+n, users in
 * another free /24) and compete for them (modules/pieces: one runs them); `close` removes what the holders
 * left (the network, wireguard-go). Still no local hypervisor. `env` is added to every process's environment; `prefix` names the data directory
 * (/tmp/<prefix>-…, or `dataDir` made by the caller; `close` removes it) and the scratch database (<prefix>_…).
 */
export async function startProcesses(opts: { adminUrl: string; n: number; firstPort: number; env?: Record<string, string>; prefix?: string; dataDir?: string; pieces?: boolean }): Promise<ProcessCluster> {
  const prefix = opts.prefix ?? 'i26procs';
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), `${prefix}-`));
  const scratch = await createScratchDatabase(opts.adminUrl, prefix);
  const ids = Array.from({ length: opts.n }, (_, i) => `p${i + 1}`);
  const portOf = (i: number) => opts.firstPort + 2 + i;
  let pieces: ProcessCluster['pieces'];
  if (opts.pieces) {
    const { cidr, namespace, linkPrefix } = testNetworkOptions();
    const first = opts.firstPort + 2 + opts.n;
    pieces = { network: { cidr, namespace: namespace!, linkPrefix: linkPrefix! }, rdpGatewayPort: first, bastionSshPort: first + 1, vpnPort: first + 2 };
  }
  const piecesEnv: Record<string, string> = pieces
    ? {
        GUEST_NETWORK: pieces.network.cidr,
        GUEST_NETWORK_NAMESPACE: pieces.network.namespace,
        GUEST_NETWORK_LINK_PREFIX: pieces.network.linkPrefix,
        RDP_GATEWAY_PORT: String(pieces.rdpGatewayPort),
        BASTION_SSH_PORT: String(pieces.bastionSshPort),
        VPN_PORT: String(pieces.vpnPort),
        VPN_HOST: '127.0.0.1',
        VPN_USERS_NETWORK: freeGuestSubnet(),
      }
    : { GUEST_NETWORK: 'off', RDP_GATEWAY_PORT: 'off', VPN_PORT: 'off' };
  const env = {
    DATABASE_URL: scratch.url,
    SECRET: randomBytes(32).toString('base64url'),
    LOCAL_HYPERVISOR: 'off',
    ...piecesEnv,
    TRUST_PROXY: 'loopback',
    // Longer than the balancer takes to leave a stopping process out (its 503 on 3 checks, ~1 s).
    SHUTDOWN_DRAIN_SECONDS: '2',
    LOG_LEVEL: 'warn',
    // Tests sign in once and call for minutes (a file of rolling restarts took 7 minutes on a machine without KVM: its
    // last requests were 401 when the default 5-minute sessions ran out).
    SESSION_TOKEN_SECONDS: String(scaled(1800)),
    SESSION_MAX_RENEW_SECONDS: String(scaled(1800)),
    ...opts.env,
  };
  const children: (ServerProcess | undefined)[] = [];
  const ended: string[] = [];
  const launch = async (i: number) => {
    children[i] = await startServerProcess(dataDir, { ...env, PORT: String(portOf(i)), SERVER_ID: ids[i]! });
  };
  const haproxy = startHaproxy({
    dir: dataDir,
    config: haproxyConfig({
      bind: `127.0.0.1:${opts.firstPort}`,
      stats: `127.0.0.1:${opts.firstPort + 1}`,
      servers: ids.map((name, i) => ({ name, address: `127.0.0.1:${portOf(i)}` })),
    }),
  });
  const statsUrl = `http://127.0.0.1:${opts.firstPort + 1}/`;
  const end = async (i: number, signal: NodeJS.Signals) => {
    const child = children[i];
    if (!child) return null;
    children[i] = undefined;
    child.child.kill(signal);
    const { code } = await child.exited;
    ended.push(child.output());
    return code;
  };
  const cluster: ProcessCluster = {
    url: `http://127.0.0.1:${opts.firstPort}`,
    statsUrl,
    databaseUrl: scratch.url,
    dataDir,
    ids,
    pieces,
    direct: (i) => `http://127.0.0.1:${portOf(i)}`,
    process: (i) => children[i],
    kill: async (i) => void (await end(i, 'SIGKILL')),
    stop: (i) => end(i, 'SIGTERM'),
    start: (i) => launch(i),
    untilBalancer: async (i, state, ms = 15_000) => {
      const started = Date.now();
      await until(`HAProxy to hold ${ids[i]} ${state}`, async () => (await serverStates(statsUrl).catch(() => ({}) as Record<string, string>))[ids[i]!]?.startsWith(state), ms);
      return Date.now() - started;
    },
    output: () => [...ended, ...children.map((c) => c?.output() ?? ''), haproxy.output()].join('\n'),
    close: async () => {
      await Promise.all(children.map((_, i) => end(i, 'SIGKILL')));
      await haproxy.stop();
      // What the holders left (a killed one leaves them to the next): wireguard-go, the guest network and its dnsmasq.
      if (pieces) {
        await endDaemon(join(dataDir, 'vpn', 'wireguard-go.pid'), 'wireguard-go');
        await GuestNetwork.dormant({ ...pieces.network, dataDir, stateDir: join(dataDir, 'network') }).close({ teardown: true });
      }
      await scratch.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(ids.map((_, i) => launch(i)));
    for (let i = 0; i < opts.n; i++) await cluster.untilBalancer(i, 'UP');
  } catch (err) {
    const output = cluster.output();
    await cluster.close();
    throw new Error(`${(err as Error).message}\n${output.slice(-4000)}`);
  }
  return cluster;
}

/** Ends the daemon whose pid `pidFile` holds when it still runs as `name` (SIGTERM: it removes what it made). */
async function endDaemon(pidFile: string, name: string) {
  let pid = 0;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  const runs = () => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(name);
    } catch {
      return false;
    }
  };
  if (!(pid > 0) || !runs()) return;
  process.kill(pid, 'SIGTERM');
  await until(`${name} to end`, async () => !runs(), 10_000).catch(() => process.kill(pid, 'SIGKILL'));
}

/** One GET /api/v3/user: its status (0: no answer within `timeoutMs`) and the process that answered. `agent`: a client's own connection. */
export function probe(url: string, token: string, timeoutMs = 5_000, agent?: Agent): Promise<{ status: number; server: string | null }> {
  return new Promise((resolve) => {
    const req = get(`${url}/api/v3/user`, { headers: { authorization: `Bearer ${token}` }, agent, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, server: (res.headers['x-server-id'] as string | undefined) ?? null }));
      res.once('error', () => resolve({ status: 0, server: null }));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve({ status: 0, server: null }));
  });
}

/** `n` open sessions: clients with a kept-alive connection of their own each, using `tokens` in turn. */
export function openSessions(tokens: string[], n: number) {
  const clients = Array.from({ length: n }, (_, i) => ({ token: tokens[i % tokens.length]!, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }));
  return { clients, close: () => clients.forEach((c) => c.agent.destroy()) };
}

/**
 * kill -9 of process `i` while the sessions are open: each session asks through the balancer until it
 * gets a good answer. Answers, per session, the time from the kill to that answer and who gave it
 * (Infinity after `boundMs`), and the time until the balancer held the process DOWN.
 */
export async function failover(cluster: ProcessCluster, i: number, clients: { token: string; agent: Agent }[], boundMs: number) {
  const killedAt = Date.now();
  await cluster.kill(i);
  const leftOut = cluster.untilBalancer(i, 'DOWN', boundMs).then(() => Date.now() - killedAt);
  const firstAnswers = await Promise.all(
    clients.map(async (c) => {
      for (;;) {
        const r = await probe(cluster.url, c.token, 2_000, c.agent);
        if (r.status === 200) return { ms: Date.now() - killedAt, server: r.server };
        if (Date.now() - killedAt > boundMs) return { ms: Infinity, server: null };
      }
    }),
  );
  return { firstAnswers, leftOutMs: await leftOut };
}
