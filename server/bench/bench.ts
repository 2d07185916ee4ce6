// `npm run bench`: the portal's hot paths, each beside its raw baseline measured in the same run,
// on the embedded database and on PostgreSQL. Never a test: targets are shown, not enforced.
//
// The server under test runs as its own process (`node --import tsx server/src/main.ts`), so this
// load generator never shares its event loop; everything measured goes through HTTP or the live
// socket with real sign-ins. The data it needs (500 students, a user with 1,000 desktops) is
// written by a seeding step (seed.ts) before the server starts.
//
//   node --import tsx server/bench/bench.ts [--only user,desktops,create,deployment,fanout,web,vnc,pool,rdp,admin-desktops,usage,backup,cluster,processes]
//        [--mode pglite|postgres|both] [--quick]
// PostgreSQL: BENCH_PG_ADMIN_URL (set by scripts/bench.mjs from the local Debian cluster) names a
// role that may create databases; each run makes a fresh database and drops it afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createConnection, createServer } from 'node:net';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { io, type Socket } from 'socket.io-client';
import { LOCAL_HYPERVISOR, SOCKET_NAMESPACE, SOCKET_PATH } from '@vdi/contracts';
import { overlayArgs } from '../src/engine/disks';
import { createScratchDatabase } from '../test/helpers/db';
import { decideAccel } from '../src/engine/accel';
import { ADMIN_DESKTOPS, BENCH_GROUP, BENCH_PASSWORD, BENCH_USERS, LIST_DESKTOPS, LIST_USER, USAGE_PEOPLE, benchUsername } from './people';
import { firstFrameOverUnix, firstFrameOverWebSocket, type FrameMarks } from './rfb';
import { domainXmlByHand, domainsOn, qemuImgOnHost, startBenchLab, stormByHand } from './cluster';
import { rowsProcesses } from './processes';
import { profileServer } from './profile';
import { loadConfig } from '../src/config';
import { GuestNetwork } from '../src/network/guest-network';
import { addLabHost, untilOnline } from '../../scripts/lib/hypervisors.mjs';
import { fingerprintOf } from '../src/engine/libvirt/hosts';
import { countPixels, xfreerdpScreen } from '../test/helpers/rdp-clients';
import { RDP_TEMPLATE_ID } from '../src/seed/rdp-template';
import {
  cpuPerOp, guestsQuiet, threadTicks, fmtBytes, fmtLat, fmtLoad, fmtLoadResult, fmtMs, latencies, now, openLoop, pool, settle, watchLoad, countDatabaseProcesses, type Latencies, type Load,
} from './measure';

const root = join(import.meta.dirname, '..', '..');
const ROWS = ['user', 'desktops', 'create', 'deployment', 'fanout', 'web', 'vnc', 'pool', 'rdp', 'admin-desktops', 'usage', 'backup', 'cluster', 'processes'] as const;
type RowKey = (typeof ROWS)[number];
type Mode = 'pglite' | 'postgres';

const { values: args } = parseArgs({
  options: { only: { type: 'string' }, mode: { type: 'string', default: 'both' }, quick: { type: 'boolean', default: false } },
});
const only = new Set<RowKey>((args.only ? args.only.split(',') : ROWS).map((r) => r.trim()) as RowKey[]);
for (const r of only) if (!ROWS.includes(r)) throw new Error(`--only: unknown row "${r}" (rows: ${ROWS.join(', ')})`);
const modeArg = args.mode ?? 'both';
if (!['pglite', 'postgres', 'both'].includes(modeArg)) throw new Error('--mode is pglite, postgres or both');
const quick = Boolean(args.quick);
const WINDOW_S = quick ? 4 : 20;
const startLoad = loadavg();

// ---- the table ----

type Row = { mode: Mode; key?: RowKey; row: string; portal: string; raw: string; target: string; met: boolean | null; load: string };
const table: Row[] = [];
let crashed = false;
let currentKey: RowKey | undefined;
const add = (r: Row) => {
  r.key ??= currentKey;
  table.push(r);
  process.stderr.write(`  ${r.mode} · ${r.row}: ${r.portal} | raw ${r.raw} | ${r.met === null ? '' : r.met ? 'met' : 'NOT met'}\n`);
};
const say = (msg: string) => process.stderr.write(`› ${msg}\n`);

function printTable() {
  const head = { mode: 'mode', row: 'row', portal: 'portal', raw: 'raw baseline (same run)', target: 'target', met: 'met', load: 'machine while it ran' };
  const rank = (r: Row) => (r.mode === 'pglite' ? 0 : 100) + (r.key ? ROWS.indexOf(r.key) : 99);
  const sorted = table.map((r, i) => ({ r, i })).sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i).map((x) => x.r);
  const cells = [head, ...sorted.map((r) => ({ ...r, met: r.met === null ? '—' : r.met ? 'yes' : 'NO' }))];
  const keys = ['mode', 'row', 'portal', 'raw', 'target', 'met', 'load'] as const;
  const width = Object.fromEntries(keys.map((k) => [k, Math.max(...cells.map((c) => String(c[k]).length))])) as Record<(typeof keys)[number], number>;
  const line = (c: (typeof cells)[number]) => `| ${keys.map((k) => String(c[k]).padEnd(width[k])).join(' | ')} |`;
  const out = [line(cells[0]!), `|${keys.map((k) => '-'.repeat(width[k] + 2)).join('|')}|`, ...cells.slice(1).map(line)];
  const load = `load average at the start ${startLoad.map((l) => l.toFixed(2)).join(' ')}, at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
  process.stdout.write(`\nBenchmark (${cpus().length} cores${quick ? ', --quick: short windows' : ''}; accel ${decideAccel('auto').accel}; ${load})\n\n${out.join('\n')}\n\n`);
}

// ---- child processes ----

/** Interrupted (Ctrl-C, SIGTERM): what this run started is stopped and its directories removed, one after another. */
const onInterrupt = new Set<() => unknown>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    for (const f of onInterrupt) {
      try {
        await f();
      } catch {
        // best effort
      }
    }
    process.exit(130);
  });
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
    s.on('error', reject);
  });

/** A bench helper process (raw-http.ts, raw-socket.ts) that prints `PORT <n>` once listening. */
async function startRaw(script: string, env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, script)], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  const kill = () => proc.kill('SIGKILL');
  onInterrupt.add(kill);
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    stop: async () => {
      onInterrupt.delete(kill);
      await stopChild(proc);
    },
  };
}

async function stopChild(proc: ChildProcess, graceMs = 30_000) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function runChild(file: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    proc.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} failed (${code}): ${err.slice(-2000)}`))));
  });
}

type Seeded = { templateId: string; basePath: string; group: string; usageRows: number };
type Portal = {
  url: string; pid: number; dataDir: string; seeded: Seeded; env: NodeJS.ProcessEnv; stop(): Promise<void>;
  /** The server process again on the same data (and database), with `overrides` in its environment. */
  restart(overrides: Record<string, string | undefined>): Promise<void>;
};

/** The server under test in its own process, on a fresh data directory (and database), seeded first. */
async function startPortal(mode: Mode, databaseUrl: string | undefined, overrides: Record<string, string | undefined> = {}): Promise<Portal> {
  // Short: QEMU's unix socket paths under DATA_DIR/run must fit 107 bytes.
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    IMAGES_DIR: process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'images'),
    DEMO_PASSWORD: BENCH_PASSWORD,
    LOG_LEVEL: 'warn',
    START_CONCURRENCY: '1',
    // A full run signs everyone in once per mode; their tokens must outlive it.
    SESSION_TOKEN_SECONDS: '3600',
    SESSION_MAX_RENEW_SECONDS: '3600',
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  if (only.has('usage')) env.BENCH_USAGE_HISTORY = '1';
  say(`${mode}: seeding (demo organisation, ${BENCH_USERS} students, ${LIST_DESKTOPS} desktops of one user${only.has('usage') ? `, a year of usage of ${USAGE_PEOPLE} people` : ''})`);
  let server: Awaited<ReturnType<typeof spawnServer>>;
  let seeded: Seeded;
  try {
    seeded = JSON.parse((await runChild(join(import.meta.dirname, 'seed.ts'), env)).trim().split('\n').pop()!) as Seeded;
    say(`${mode}: starting the server`);
    server = await spawnServer(env, dataDir);
  } catch (err) {
    // A seed or a start that failed leaves no data directory behind.
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  /** What a stopped server leaves on purpose (its machines, to be adopted; their guest network), and the data directory. */
  const leftovers = async () => {
    // Machines still running (the server leaves them to be adopted) are ours: stop them by pid.
    for (const pid of qemuPidsUnder(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    // So is the guest network the server left for them (its namespace, dnsmasq, the VPN endpoint's wireguard-go).
    try {
      const vpnPid = Number(readFileSync(join(dataDir, 'vpn', 'wireguard-go.pid'), 'utf8').trim());
      if (readFileSync(`/proc/${vpnPid}/cmdline`, 'utf8').includes('wireguard-go')) process.kill(vpnPid, 'SIGTERM');
    } catch {
      // none, or gone
    }
    const { guestNetwork } = loadConfig(env);
    if (guestNetwork.cidr !== 'off') {
      await GuestNetwork.dormant({ ...guestNetwork, dataDir, stateDir: join(dataDir, 'network') }).close({ teardown: true }).catch(() => undefined);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  // (interrupted: the server is gone first, by the handler spawnServer added before this one)
  onInterrupt.add(leftovers);
  let restarts = 0;
  const portal: Portal = {
    ...server,
    dataDir,
    seeded,
    env,
    async restart(changes) {
      await server.stop();
      const next = { ...env };
      for (const [k, v] of Object.entries(changes)) {
        if (v === undefined) delete next[k];
        else next[k] = v;
      }
      server = await spawnServer(next, dataDir, `server-${++restarts}.log`);
      portal.pid = server.pid;
      // (after the new server's own handler: an interruption ends the server before what it leaves)
      onInterrupt.delete(leftovers);
      onInterrupt.add(leftovers);
    },
    async stop() {
      await server.stop();
      onInterrupt.delete(leftovers);
      await leftovers();
    },
  };
  return portal;
}

/** One server process (`main.ts`) with `env`, answering; its log in `dataDir` (`log`: the file's name). */
async function spawnServer(env: NodeJS.ProcessEnv, dataDir: string, log = 'server.log'): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const logPath = join(dataDir, log);
  const out = createWriteStream(logPath);
  const proc = spawn(process.execPath, [...serverNodeArgs(), '--import', 'tsx', join(root, 'server', 'src', 'main.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.pipe(out);
  proc.stderr!.pipe(out);
  const kill = () => {
    proc.kill('SIGKILL');
    for (const pid of qemuPidsUnder(dataDir)) process.kill(pid, 'SIGKILL');
  };
  onInterrupt.add(kill);
  const url = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the server exited (${proc.exitCode}): ${readFileSync(logPath, 'utf8').slice(-2000)}`);
    const ok = await fetch(`${url}/api/v3/categories`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('the server did not answer within 180 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pid: proc.pid!,
    async stop() {
      onInterrupt.delete(kill);
      await stopChild(proc);
    },
  };
}

/** BENCH_SERVER_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: node options of the server under test only. */
const serverNodeArgs = () => (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

function qemuPidsUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSafe('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.startsWith('qemu-system') && cmd.includes(dir)) pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}
const readdirSafe = (d: string) => {
  try {
    return readdirSync(d);
  } catch {
    return [];
  }
};

// ---- HTTP as a client ----

async function signIn(base: string, username: string, password = BENCH_PASSWORD): Promise<string> {
  const form = new FormData();
  form.append('username', username);
  form.append('password', password);
  const res = await fetch(`${base}/authentication/login?provider=form&category_id=default`, { method: 'POST', body: form });
  if (!res.ok) throw new Error(`sign-in of ${username}: ${res.status} ${await res.text()}`);
  return res.text();
}

async function api<T = unknown>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/api/v3${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

/**
 * A person's browser: its own kept-alive connection to the portal, as a signed-in page has (it
 * called the API when it opened). The creation rows measure the server's answer on such
 * connections, not the load generator opening 100 TCP connections at the same instant.
 */
function browserOf(base: string, token: string) {
  const u = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const payload = body !== undefined ? JSON.stringify(body) : undefined;
      const req = http.request(
        {
          agent, host: u.hostname, port: u.port, path: `/api/v3${path}`, method,
          headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (!res.statusCode || res.statusCode >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
            else resolve(text ? JSON.parse(text) : undefined);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

function qemuImg(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const p = spawn('qemu-img', args, { stdio: 'ignore' });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`qemu-img exited ${code}`))));
  });
}

// ---- rows ----

type Ctx = { mode: Mode; portal: Portal; raw: { url: string }; tokens: Map<string, string>; work: string; deploymentId?: string };

/** Signs in (once per mode) whoever is not signed in yet, a few at a time. */
async function tokensOf(c: Ctx, usernames: string[]): Promise<string[]> {
  const missing = usernames.filter((u) => !c.tokens.has(u));
  if (missing.length) {
    const t0 = now();
    await pool(missing, 4, async (u) => c.tokens.set(u, await signIn(c.portal.url, u)));
    if (missing.length > 10) say(`${c.mode}: ${missing.length} sign-ins in ${((now() - t0) / 1000).toFixed(1)} s`);
  }
  return usernames.map((u) => c.tokens.get(u)!);
}
const students = (from: number, n: number) => Array.from({ length: n }, (_, i) => benchUsername(from + i));
const loadCell = (l: Load) => fmtLoad(l);

async function rowHttp(c: Ctx, opts: { name: string; path: string; rate: number; tokens: string[]; p99: number }) {
  say(`${c.mode}: ${opts.name}, ${opts.rate}/s for ${WINDOW_S} s (and the raw baseline)`);
  // The body size, then the raw baseline first: a saturated server goes on working through its
  // backlog after the window, which must not weigh on the baseline.
  const probe = await fetch(`${c.portal.url}${opts.path}`, { headers: { authorization: `Bearer ${opts.tokens[0]}` } });
  if (!probe.ok) throw new Error(`GET ${opts.path}: ${probe.status}`);
  const bytes = (await probe.arrayBuffer()).byteLength;
  const raw = await openLoop({ url: `${c.raw.url}/bytes/${bytes}`, rate: opts.rate, seconds: WINDOW_S });
  await settle(c.portal.pid);
  const portal = await openLoop({
    url: `${c.portal.url}${opts.path}`, rate: opts.rate, seconds: WINDOW_S, serverPid: c.portal.pid,
    headers: (i) => ({ authorization: `Bearer ${opts.tokens[i % opts.tokens.length]}` }),
  });
  add({
    mode: c.mode,
    row: `${opts.name} ${opts.rate}/s × ${WINDOW_S} s (${fmtBytes(bytes)})`,
    portal: fmtLoadResult(portal),
    raw: fmtLoadResult(raw),
    target: `≥ 98% achieved, p99 < ${opts.p99} ms, 0 err`,
    met: portal.achieved >= 0.98 && portal.lat.p99 < opts.p99 && portal.errors === 0,
    load: loadCell(portal.load),
  });
}

async function rowUser(c: Ctx) {
  // 50 different sessions, as a class signing in, not one hot session.
  await rowHttp(c, { name: 'GET /api/v3/user', path: '/api/v3/user', rate: 200, tokens: await tokensOf(c, students(0, 50)), p99: 50 });
}

async function rowDesktops(c: Ctx) {
  const [token] = await tokensOf(c, [LIST_USER]);
  const list = await api<unknown[]>(c.portal.url, token!, 'GET', '/user/desktops');
  if (list.length < LIST_DESKTOPS) throw new Error(`the list has ${list.length} desktops, not ${LIST_DESKTOPS}`);
  await rowHttp(c, { name: `GET /api/v3/user/desktops (${list.length} desktops)`, path: '/api/v3/user/desktops', rate: 50, tokens: [token!], p99: 150 });
}

/** The console's desktops across owners: a page of 50 from the middle of 5,000 (SQL paging, sorted by name, with its count). */
async function rowAdminDesktops(c: Ctx) {
  const [token] = await tokensOf(c, ['admin']);
  const path = '/admin/desktops?per_page=50&page=50&sort=name';
  const { total } = await api<{ total: number }>(c.portal.url, token!, 'GET', path);
  if (total < ADMIN_DESKTOPS) throw new Error(`the console lists ${total} desktops, not ${ADMIN_DESKTOPS}`);
  await rowHttp(c, { name: `GET /api/v3/admin/desktops, a page of 50 of ${total}`, path: `/api/v3${path}`, rate: 50, tokens: [token!], p99: 100 });
}

/**
 * A server in service has created desktops before the rush: `n` other students create one each,
 * two at a time, unmeasured (the code path compiled, the pools and caches warm), then it settles.
 */
async function warmCreate(c: Ctx, n: number, from: number) {
  say(`${c.mode}: warming up with ${n} creations (not measured)`);
  const tokens = await tokensOf(c, students(from, n));
  for (let i = 0; i < tokens.length; i += 2) {
    await Promise.all(tokens.slice(i, i + 2).map((token, j) =>
      api(c.portal.url, token, 'POST', '/persistent_desktop', { name: `Bench warm-up ${i + j}`, template_id: c.portal.seeded.templateId })));
  }
  await settle(c.portal.pid);
}

/** Rounds of each creation row: one burst of n people's p95 is nearly its slowest answer, so the row reads the median of a few. */
const CREATE_ROUNDS = quick ? 1 : 5;
/** Pairs of the pool row's rounds (the pool's, the running desktops'): the row reads the median p95 of each side. */
const POOL_PAIRS = quick ? 1 : 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The creation rows' baseline: `qemu-img create -b` of the template's base, here (default) or on a lab host. */
type RawCreate = { where: string; create: (args: string[]) => Promise<number>; dir: string };

async function rowCreate(c: Ctx, n: number, from: number, opts: { row?: string; raw?: RawCreate } = {}) {
  const rawCreate: RawCreate = opts.raw ?? { where: 'in parallel', create: qemuImg, dir: c.work };
  say(`${c.mode}: ${n} people creating a desktop at once (and ${n} qemu-img create -b ${rawCreate.where}), ${CREATE_ROUNDS} round(s)`);
  const tokens = await tokensOf(c, students(from, n));
  // Each person has the portal open (their page asked who they are), then the server settles.
  const browsers = tokens.map((token) => browserOf(c.portal.url, token));
  await pool(browsers, 4, (b) => b.call('GET', '/user'));
  let errors = 0;
  let errorSample: string | undefined;
  const rounds: { portal: Latencies; raw: Latencies; load: Load }[] = [];
  const threads0 = threadTicks(c.portal.pid);
  for (let round = 0; round < CREATE_ROUNDS; round++) {
    // Each round: the people's burst through the API, then the same number of qemu-img runs alone.
    await settle(c.portal.pid);
    const watch = watchLoad(c.portal.pid);
    const times = await Promise.all(
      browsers.map(async (browser, i) => {
        const t0 = now();
        try {
          await browser.call('POST', '/persistent_desktop', { name: `Bench created ${n}-${round}-${i}`, template_id: c.portal.seeded.templateId });
          return now() - t0;
        } catch (err) {
          errors++;
          errorSample ??= (err as Error).message.slice(0, 80);
          return undefined;
        }
      }),
    );
    const load = watch.stop();
    const portal = latencies(times.filter((t): t is number => t !== undefined));
    await settle(c.portal.pid);
    const raw = latencies(await Promise.all(Array.from({ length: n }, (_, i) => rawCreate.create(overlayArgs(c.portal.seeded.basePath, 'qcow2', join(rawCreate.dir, `create-${n}-${round}-${i}.qcow2`))))));
    rounds.push({ portal, raw, load });
  }
  for (const b of browsers) b.close();
  // CPU per creation over every round (the settles between them are near idle by definition).
  const cpu = cpuPerOp(c.portal.pid, threads0, n * CREATE_ROUNDS);
  const portalP95 = median(rounds.map((r) => r.portal.p95));
  const rawP95 = median(rounds.map((r) => r.raw.p95));
  const shown = rounds.find((r) => r.portal.p95 === portalP95)!;
  const ratio = portalP95 / rawP95;
  const perRound = (pick: (r: (typeof rounds)[number]) => Latencies) => (rounds.length > 1 ? ` (p95 by round ${rounds.map((r) => fmtMs(pick(r).p95)).join(' / ')} ms)` : '');
  add({
    mode: c.mode,
    row: opts.row ?? `${n} people create a desktop at once`,
    portal: `${fmtLat(shown.portal)}${perRound((r) => r.portal)}, ${errors} err${errorSample ? ` (${errorSample})` : ''}; median p95 ${ratio.toFixed(1)}× raw; server CPU per creation: main thread ${fmtMs(cpu.main)} ms, other threads ${fmtMs(cpu.others)} ms`,
    raw: `${n} × qemu-img create -b ${rawCreate.where}: median p95 ${fmtMs(rawP95)} ms${perRound((r) => r.raw)}`,
    target: 'p95 ≤ 2× raw p95 (medians of the rounds)',
    met: errors === 0 && ratio <= 2,
    load: loadCell(shown.load),
  });
}

/** Parallelism of the server's deployment job, read from its source so the baseline follows it. */
function deploymentParallelism(): number {
  try {
    const src = readFileSync(join(root, 'server', 'src', 'modules', 'deployments', 'create.ts'), 'utf8');
    return Number(/CREATE_CONCURRENCY\s*=\s*(\d+)/.exec(src)?.[1] ?? 4);
  } catch {
    return 4;
  }
}

function socketOf(base: string, auth: Record<string, string>): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = io(`${base}${SOCKET_NAMESPACE}`, { path: SOCKET_PATH, transports: ['websocket'], forceNew: true, reconnection: false, timeout: 30_000, auth });
    s.once('connect', () => resolve(s));
    s.once('connect_error', (err) => {
      s.close();
      reject(err);
    });
  });
}

async function makeDeployment(c: Ctx, report: boolean) {
  say(`${c.mode}: a deployment of ${BENCH_USERS} users (and ${BENCH_USERS} qemu-img overlays)`);
  const [admin] = await tokensOf(c, ['admin']);
  const socket = await socketOf(c.portal.url, { jwt: admin! });
  const watch = watchLoad(c.portal.pid);
  const t0 = now();
  type End = { deployment_id: string; created: number; failed: number; total: number };
  const ends: End[] = [];
  let wake = () => {};
  socket.on('end_creating_desktops', (raw: string) => {
    ends.push(JSON.parse(raw) as End);
    wake();
  });
  const { id } = await api<{ id: string }>(c.portal.url, admin!, 'POST', '/deployments', {
    name: 'Bench deployment', template_id: c.portal.seeded.templateId, desktop_name: 'Bench desktop', allowed: { groups: [BENCH_GROUP] },
  });
  const deadline = Date.now() + 900_000;
  let ended: End | undefined;
  while (!(ended = ends.find((e) => e.deployment_id === id))) {
    if (Date.now() > deadline) throw new Error('the creation job did not end within 15 minutes');
    await new Promise<void>((r) => {
      wake = r;
      setTimeout(r, 1000);
    });
  }
  const portalMs = now() - t0;
  const load = watch.stop();
  socket.close();
  c.deploymentId = id;
  if (!report) return;
  const parallel = deploymentParallelism();
  await settle(c.portal.pid);
  const r0 = now();
  await pool(Array.from({ length: BENCH_USERS }, (_, i) => i), parallel, (i) => qemuImg(overlayArgs(c.portal.seeded.basePath, 'qcow2', join(c.work, `dep-${i}.qcow2`))));
  const rawMs = now() - r0;
  const ratio = portalMs / rawMs;
  add({
    mode: c.mode,
    row: `deployment of ${BENCH_USERS} users, POST → job's end`,
    portal: `${(portalMs / 1000).toFixed(1)} s (${ended!.created} created, ${ended!.failed} failed); ${ratio.toFixed(1)}× raw`,
    raw: `${BENCH_USERS} qemu-img overlays, ${parallel} at a time: ${(rawMs / 1000).toFixed(1)} s`,
    target: '≤ 2× raw',
    met: ended!.failed === 0 && ended!.created === BENCH_USERS && ratio <= 2,
    load: loadCell(load),
  });
}

/** 500 users × 2 sockets; time from the request until each socket hears the event. */
async function fanOut(
  connect: (user: number) => Promise<Socket>,
  events: string[],
  trigger: () => Promise<void>,
  serverPid?: number,
): Promise<{ lat: Latencies; missed: number; bytes: number }> {
  const sockets = await pool(Array.from({ length: BENCH_USERS * 2 }, (_, i) => i), 50, (i) => connect(Math.floor(i / 2)));
  try {
    // The students have had their page open for a while when the teacher acts: the server has
    // finished with their sign-ins and connections (and the garbage they left) before the change.
    if (serverPid) await settle(serverPid);
    let t0 = 0;
    const got: number[] = [];
    let bytes = 0;
    let wake: () => void = () => {};
    for (const s of sockets) {
      let heard = false;
      const on = (raw: unknown) => {
        if (heard) return;
        heard = true;
        got.push(now() - t0);
        bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : 0;
        if (got.length === sockets.length) wake();
      };
      for (const e of events) s.on(e, on);
    }
    const all = new Promise<void>((r) => {
      wake = r;
      setTimeout(r, 30_000).unref();
    });
    t0 = now();
    await trigger();
    await all;
    return { lat: latencies(got), missed: sockets.length - got.length, bytes };
  } finally {
    for (const s of sockets) s.close();
  }
}

async function rowFanout(c: Ctx) {
  if (!c.deploymentId) await makeDeployment(c, false);
  say(`${c.mode}: live fan-out to ${BENCH_USERS} users × 2 sockets (and a bare socket.io server)`);
  const usernames = students(0, BENCH_USERS);
  const tokens = await tokensOf(c, usernames);
  const [admin] = await tokensOf(c, ['admin']);
  const toggle = async () => void (await api(c.portal.url, admin!, 'PUT', `/deployments/visible/${c.deploymentId}`, { stop_started_domains: false }));
  const watch = watchLoad(c.portal.pid);
  const portal = await fanOut((u) => socketOf(c.portal.url, { jwt: tokens[u]! }), ['desktop_add', 'desktop_delete'], toggle, c.portal.pid);
  const load = watch.stop();
  await settle(c.portal.pid);
  const rawServer = await startRaw('raw-socket.ts');
  let raw: Awaited<ReturnType<typeof fanOut>>;
  try {
    raw = await fanOut(
      (u) => socketOf(rawServer.url, { user: String(u) }),
      ['desktop_add'],
      async () => void (await fetch(`${rawServer.url}/emit?bytes=${portal.bytes}`, { method: 'POST' })),
      rawServer.proc.pid,
    );
    add({
      mode: c.mode,
      row: `live fan-out, ${BENCH_USERS} users × 2 sockets, one visibility change${c.mode === 'postgres' ? ' (one process, PostgreSQL adapter)' : ''}`,
      portal: `${fmtLat(portal.lat)}, ${portal.missed} missed`,
      raw: `bare socket.io, same sockets and payload: ${fmtLat(raw.lat)}, ${raw.missed} missed`,
      target: 'p99 < 150 ms',
      met: portal.missed === 0 && portal.lat.p99 < 150,
      load: loadCell(load),
    });
  } finally {
    await rawServer.stop();
  }
  if (c.mode === 'postgres') await rowFanoutProcesses(c, { portal, raw, toggle, tokens });
}

/** Server processes of the several-process fan-out rows (issue 26). */
const FANOUT_PROCESSES = 3;

/**
 * The same fan-out with the sockets spread over 3 server processes on one PostgreSQL (the two others
 * on the same database and storage), the change made through the first; and bare socket.io servers,
 * 3 processes, through socket.io's PostgreSQL adapter and through its Redis adapter (Debian's
 * redis-server, started here): what docs/decisions/0015-socket-adapter.md chose by.
 */
async function rowFanoutProcesses(
  c: Ctx,
  one: { portal: Awaited<ReturnType<typeof fanOut>>; raw: Awaited<ReturnType<typeof fanOut>>; toggle: () => Promise<void>; tokens: string[] },
) {
  const ratio = (x: Latencies, base: Latencies) => x.p99 / base.p99;
  const spread = (urls: string[], auth: (u: number) => Record<string, string>) => {
    let k = 0;
    return (u: number) => socketOf(urls[k++ % urls.length]!, auth(u));
  };
  const row = (name: string, got: Awaited<ReturnType<typeof fanOut>>, base: Awaited<ReturnType<typeof fanOut>>, baseName: string, load: string) =>
    add({
      mode: c.mode,
      row: name,
      portal: `${fmtLat(got.lat)}, ${got.missed} missed; p99 ${ratio(got.lat, base.lat).toFixed(2)}× one process`,
      raw: `${baseName}, same run: ${fmtLat(base.lat)}`,
      target: 'p99 ≤ 1.5× one process',
      met: got.missed === 0 && ratio(got.lat, base.lat) <= 1.5,
      load,
    });

  say(`${c.mode}: live fan-out over ${FANOUT_PROCESSES} server processes on one PostgreSQL`);
  const others: Awaited<ReturnType<typeof spawnServer>>[] = [];
  try {
    for (let i = 1; i < FANOUT_PROCESSES; i++) others.push(await spawnServer({ ...c.portal.env, PORT: String(await freePort()) }, c.portal.dataDir, `server-${i}.log`));
    const urls = [c.portal.url, ...others.map((o) => o.url)];
    const watch = watchLoad(c.portal.pid);
    const got = await fanOut(spread(urls, (u) => ({ jwt: one.tokens[u]! })), ['desktop_add', 'desktop_delete'], one.toggle, c.portal.pid);
    row(
      `live fan-out, ${BENCH_USERS} users × 2 sockets spread over ${FANOUT_PROCESSES} server processes (PostgreSQL adapter), one visibility change made on the first`,
      got, one.portal, 'the same on one process', `first process: ${loadCell(watch.stop())}`,
    );
  } finally {
    for (const o of others) await o.stop();
  }

  const ADAPTERS = { postgres: 'PostgreSQL adapter as it comes', 'postgres-batched': 'PostgreSQL adapter, NOTIFYs batched as the portal sends them', redis: 'Redis adapter' };
  const bare = async (adapter: keyof typeof ADAPTERS, url: string) => {
    const servers: Awaited<ReturnType<typeof startRaw>>[] = [];
    try {
      for (let i = 0; i < FANOUT_PROCESSES; i++) servers.push(await startRaw('raw-socket.ts', { ...process.env, RAW_ADAPTER: adapter, RAW_ADAPTER_URL: url }));
      const got = await fanOut(
        spread(servers.map((s) => s.url), (u) => ({ user: String(u) })),
        ['desktop_add'],
        async () => void (await fetch(`${servers[0]!.url}/emit?bytes=${one.portal.bytes}&users=${BENCH_USERS}`, { method: 'POST' })),
        servers[0]!.proc.pid,
      );
      row(`bare socket.io fan-out, ${BENCH_USERS} users × 2 sockets over ${FANOUT_PROCESSES} processes, ${ADAPTERS[adapter]}`, got, one.raw, 'bare socket.io on one process', '—');
    } finally {
      for (const s of servers) await s.stop();
    }
  };
  for (const adapter of ['postgres', 'postgres-batched'] as const) {
    say(`${c.mode}: bare socket.io over ${FANOUT_PROCESSES} processes, ${ADAPTERS[adapter]}`);
    await bare(adapter, c.portal.env.DATABASE_URL!);
  }
  const redis = await startRedis();
  if (!redis) {
    say(`${c.mode}: no redis-server here: the Redis adapter row is skipped`);
    return;
  }
  try {
    say(`${c.mode}: bare socket.io over ${FANOUT_PROCESSES} processes, Redis adapter`);
    await bare('redis', redis.url);
  } finally {
    await redis.stop();
  }
}

/** Debian's redis-server on a free loopback port, nothing saved (the Redis adapter's row), or null without it. */
async function startRedis(): Promise<{ url: string; stop(): Promise<void> } | null> {
  if (!existsSync('/usr/bin/redis-server')) return null;
  const port = await freePort();
  const proc = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const kill = () => proc.kill('SIGKILL');
  onInterrupt.add(kill);
  const deadline = Date.now() + 10_000;
  while (!(await new Promise<boolean>((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' }, () => s.end(() => resolve(true)));
    s.on('error', () => resolve(false));
  }))) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      onInterrupt.delete(kill);
      await stopChild(proc, 5_000);
    },
  };
}

// ---- the web's first load ----

function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const decode = (body: Buffer, encoding: string | undefined) =>
  encoding === 'br' ? brotliDecompressSync(body) : encoding === 'gzip' ? gunzipSync(body) : body;

/** The entry HTML's scripts and styles and their static imports: bytes on the wire and uncompressed, and how they are served. */
async function firstLoadAssets(base: string) {
  const enc = { 'accept-encoding': 'br, gzip' };
  const page = await rawGet(`${base}/login`, enc);
  if (page.status !== 200) throw new Error(`GET /login: ${page.status}`);
  const html = decode(page.body, page.headers['content-encoding'] as string | undefined).toString();
  const queue: string[] = [];
  for (const m of html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)) queue.push(m[1]!);
  for (const m of html.matchAll(/<link[^>]*\brel="(?:stylesheet|modulepreload)"[^>]*>/g)) {
    const href = /\bhref="([^"]+)"/.exec(m[0])?.[1];
    if (href) queue.push(href);
  }
  const seen = new Set<string>();
  let wire = 0;
  let plain = 0;
  let compressed = true;
  let immutable = true;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const url = new URL(next, `${base}/login`);
    if (url.origin !== base || seen.has(url.pathname)) continue;
    seen.add(url.pathname);
    const res = await rawGet(url.href, enc);
    if (res.status !== 200) throw new Error(`GET ${url.pathname}: ${res.status}`);
    const encoding = res.headers['content-encoding'] as string | undefined;
    const body = decode(res.body, encoding);
    wire += res.body.length;
    plain += body.length;
    if (encoding !== 'br' && encoding !== 'gzip') compressed = false;
    if (!/immutable/.test(String(res.headers['cache-control'] ?? ''))) immutable = false;
    if (url.pathname.endsWith('.js')) {
      // Static imports only (`import x from "./a.js"`, `import "./b.js"`, `export * from`), not `import("…")`.
      for (const m of body.toString().matchAll(/(?:\bimport|\bexport)\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"']+\.(?:js|css))["']/g)) {
        queue.push(new URL(m[1]!, url).pathname);
      }
    }
  }
  return { files: seen.size, wire, plain, compressed, immutable };
}

async function rowWeb(c: Ctx) {
  say(`${c.mode}: web /login first load (and a static page)`);
  const assets = await firstLoadAssets(c.portal.url);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    // Time to interactive: from navigation until the sign-in field is visible and editable, with a cold cache (a new context each time).
    const tti = async (url: string, testId: string) => {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      let browserBytes = 0;
      page.on('requestfinished', (req) => {
        if (['script', 'stylesheet'].includes(req.resourceType())) void req.sizes().then((s) => (browserBytes += s.responseBodySize), () => undefined);
      });
      const t0 = now();
      await page.goto(url, { waitUntil: 'commit' });
      await page.getByTestId(testId).waitFor({ state: 'visible', timeout: 30_000 });
      while (!(await page.getByTestId(testId).isEditable())) await new Promise((r) => setTimeout(r, 5));
      const ms = now() - t0;
      await ctx.close();
      return { ms, browserBytes };
    };
    const runs = quick ? 2 : 5;
    const watch = watchLoad(c.portal.pid);
    await tti(`${c.portal.url}/login`, 'login-username'); // warm the server's file cache, not measured
    const portal: number[] = [];
    let browserBytes = 0;
    for (let i = 0; i < runs; i++) {
      const r = await tti(`${c.portal.url}/login`, 'login-username');
      portal.push(r.ms);
      browserBytes = r.browserBytes;
    }
    const raw: number[] = [];
    for (let i = 0; i < runs; i++) raw.push((await tti(`${c.raw.url}/static`, 'static-input')).ms);
    const median = (xs: number[]) => latencies(xs).p50;
    add({
      mode: c.mode,
      row: 'web /login first load (JS+CSS, time to interactive)',
      portal:
        `${fmtBytes(assets.wire)} on the wire (${assets.files} files; browser fetched ${fmtBytes(browserBytes)}), ` +
        `${assets.compressed ? 'compressed' : 'NOT compressed'}, ${assets.immutable ? 'immutable' : 'NOT immutable'}; TTI ${fmtMs(median(portal))} ms (median of ${runs})`,
      raw: `bundle uncompressed ${fmtBytes(assets.plain)}; static page ${fmtMs(median(raw))} ms`,
      target: '≤ 250 kB compressed, immutable, TTI < 800 ms',
      met: assets.wire <= 250_000 && assets.compressed && assets.immutable && median(portal) < 800,
      load: loadCell(watch.stop()),
    });
  } finally {
    await browser.close();
  }
}

// ---- start to first VNC frame ----

/**
 * The owner starts a desktop and opens its browser viewer (the portal's websocket) until the first framebuffer update,
 * the page's way for "open" on a desktop at rest: the start, then the ticket at once (a start's ticket is given while it
 * starts) and the viewer's websocket, which the portal holds until the machine runs.
 */
async function startToFirstFrame(base: string, token: string, id: string) {
  const t = now();
  await api(base, token, 'GET', `/desktop/start/${id}`);
  if (process.env.VDI_TRACE) appendFileSync(process.env.VDI_TRACE, `start ${id.slice(0, 8)}: answered ${(now() - t).toFixed(0)}\n`);
  await firstFrameThroughPortal(base, token, id);
}

/** `startToFirstFrame` timed from the click, the owner's live socket opened (and closed) around it, untimed (the page has one). */
async function timedStart(base: string, token: string, id: string): Promise<number> {
  const socket = await socketOf(base, { jwt: token });
  try {
    const t0 = now();
    await startToFirstFrame(base, token, id);
    return now() - t0;
  } finally {
    socket.close();
  }
}

/** The browser viewer of a starting or running desktop: its ticket (once it is up; or the one given, as a pool's take
 *  gives it), then the websocket until the first framebuffer update. */
async function firstFrameThroughPortal(base: string, token: string, id: string, given?: { cookie: string }) {
  const t = now();
  let viewer: { cookie: string } | undefined = given;
  while (!viewer) {
    const r = await fetch(`${base}/api/v3/desktop/${id}/viewer/browser-vnc`, { headers: { authorization: `Bearer ${token}` } });
    if (r.status === 200) viewer = (await r.json()) as { cookie: string };
    else await new Promise((res) => setTimeout(res, 20));
  }
  const ticket = JSON.parse(Buffer.from(viewer.cookie, 'base64url').toString()) as { token: string; password: string };
  const t0 = now();
  const marks: FrameMarks = {};
  await firstFrameOverWebSocket(`${base.replace('http', 'ws')}/api/v3/vnc?token=${ticket.token}`, ticket.password, marks);
  if (process.env.VDI_TRACE) appendFileSync(process.env.VDI_TRACE, `  ws ${id.slice(0, 8)}: ticket ${(t0 - t).toFixed(0)} open ${marks.open} banner ${marks.banner} auth ${marks.auth} init ${marks.init} frame ${marks.frame}\n`);
}

/** Resolves when the owner's socket says the desktop runs (`desktop_update` with state Started), as the portal's page
 *  learns it before it offers the viewer; the socket is opened before the start. */
function startedOn(socket: Socket, id: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (raw: unknown) => {
      const d = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { id?: string; state?: string };
      if (d.id === id && d.state === 'Started') {
        socket.off('desktop_update', on);
        resolve();
      }
    };
    socket.on('desktop_update', on);
  });
}

/** Stop, then stop again (the force stop when the guest is slow to power off), until the owner's list says Stopped. A
 *  start whose machine is launched already cannot be called off: a stop refused while it still said `Starting` (its first
 *  frame may come before its `Started` is written) is asked again once it runs. */
async function stopDesktop(base: string, token: string, id: string) {
  const stop = async () => {
    await api(base, token, 'GET', `/desktop/stop/${id}`).catch(() => undefined);
    await api(base, token, 'GET', `/desktop/stop/${id}`).catch(() => undefined);
  };
  await stop();
  const deadline = Date.now() + 180_000;
  for (;;) {
    const state = (await api<{ id: string; state: string }[]>(base, token, 'GET', '/user/desktops')).find((d) => d.id === id)?.state;
    if (state === 'Stopped') return;
    if (Date.now() > deadline) throw new Error(`the desktop did not stop within 180 s (${state})`);
    if (state === 'Started' || state === 'WaitingIP') await stop();
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A unix socket QEMU is still setting up: connected as soon as it listens (retried every 2 ms, no slower than a person's tool). */
async function firstFrameWhenListening(sock: string, password: string, qemu?: ChildProcess) {
  const t0 = now();
  for (;;) {
    if (qemu && (qemu.exitCode !== null || qemu.signalCode !== null)) throw new Error(`QEMU by hand exited (${qemu.exitCode ?? qemu.signalCode}) before its VNC socket listened`);
    try {
      const marks: FrameMarks = {};
      const t1 = now();
      await firstFrameOverUnix(sock, password, marks);
      if (process.env.VDI_TRACE) appendFileSync(process.env.VDI_TRACE, `  by hand: connected ${(t1 - t0).toFixed(0)} banner ${marks.banner} auth ${marks.auth} init ${marks.init} frame ${marks.frame}\n`);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ECONNREFUSED') throw err;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

/**
 * QEMU's command line as the portal ran it (read from /proc while it runs), for the same machine by hand: the
 * run directory's files moved to `dir`, the disk to `disk` (an overlay of the same base), and the VNC password
 * given at launch from a file (as the portal does; a person starting QEMU by hand would too).
 */
function byHandArgs(portalArgs: string[], dir: string, disk: string, password: string): string[] {
  const qmp = portalArgs[portalArgs.indexOf('-qmp') + 1]!;
  const runDir = /^unix:(.*)\/qmp\.sock,/.exec(qmp)![1]!;
  const diskArg = portalArgs.find((a) => a.startsWith('if=none,id=disk0,file='))!;
  const portalDisk = /file=(.*?),format=/.exec(diskArg)![1]!;
  // A NIC on the guest network uses the portal's TAP (held by its machine): by hand, the same NIC on QEMU's own network.
  const out = portalArgs.map((a) => a.replaceAll(runDir, dir).replaceAll(portalDisk, disk).replace(/^tap,id=([^,]+),.*$/, 'user,id=$1'));
  const vnc = out.indexOf('-vnc');
  if (out[vnc + 1]!.includes('password=on')) {
    out[vnc + 1] = out[vnc + 1]!.replace('password=on', 'password-secret=vnc-pw');
    out.push('-object', `secret,id=vnc-pw,file=${join(dir, 'vnc.secret')}`);
  }
  const secretId = /password-secret=([^,]+)/.exec(out[vnc + 1]!)![1]!;
  const secretFile = /file=([^,]+)/.exec(out.find((a) => a.startsWith(`secret,id=${secretId},`))!)![1]!;
  writeFileSync(secretFile, password, { mode: 0o600 });
  // Files the portal writes before the launch (and deletes once QEMU is up).
  for (const a of out) for (const m of a.matchAll(/file=([^,]+)/g)) if (m[1]!.startsWith(dir) && !existsSync(m[1]!)) writeFileSync(m[1]!, 'YmVuY2g=\nYmVuY2g=\n', { mode: 0o600 });
  return out;
}

/** argv of the portal's QEMU running desktop `id` under `dataDir`. */
function portalQemuArgs(dataDir: string, id: string): string[] {
  for (const pid of qemuPidsUnder(dataDir)) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1, -1);
    if (argv.some((a) => a.includes(`/${id}/qmp.sock`))) return argv;
  }
  throw new Error(`no QEMU of desktop ${id} under ${dataDir}`);
}

async function rowVnc(c: Ctx) {
  say(`${c.mode}: start to first VNC frame (and QEMU started by hand with the same command line)`);
  const [token] = await tokensOf(c, ['manager']);
  const desktops = await api<{ id: string; name: string; state: string }[]>(c.portal.url, token!, 'GET', '/user/desktops');
  const desktop = desktops.find((d) => d.name === 'Demo desktop') ?? desktops[0]!;
  const runs = quick ? 1 : 9;
  const portal: number[] = [];
  const raw: number[] = [];
  // One start and stop untimed first (as the pool row signs in once): the server's first start compiles its path.
  await timedStart(c.portal.url, token!, desktop.id);
  await stopDesktop(c.portal.url, token!, desktop.id);
  const watch = watchLoad(c.portal.pid);
  for (let i = 0; i < runs; i++) {
    portal.push(await timedStart(c.portal.url, token!, desktop.id));
    const args = portalQemuArgs(c.portal.dataDir, desktop.id);
    await stopDesktop(c.portal.url, token!, desktop.id);

    // By hand: an overlay of the same base made beforehand (the portal's disk exists before its start too).
    const dir = join(c.work, `raw-${i}`);
    mkdirSync(dir, { mode: 0o700 });
    const disk = join(dir, 'disk.qcow2');
    await qemuImg(overlayArgs(c.portal.seeded.basePath, 'qcow2', disk));
    const byHand = byHandArgs(args, dir, disk, 'bench123');
    const t0 = now();
    const qemu = spawn('qemu-system-x86_64', byHand, { stdio: 'ignore' });
    try {
      await firstFrameWhenListening(join(dir, 'vnc.sock'), 'bench123', qemu);
      raw.push(now() - t0);
    } finally {
      qemu.kill('SIGKILL');
      await new Promise((r) => (qemu.exitCode !== null || qemu.signalCode !== null ? r(null) : qemu.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const p = latencies(portal).p50;
  const r = latencies(raw).p50;
  add({
    mode: c.mode,
    row: `start to first VNC frame (median of ${runs})`,
    portal: `${fmtMs(p)} ms; ${(p / r).toFixed(2)}× raw`,
    raw: `QEMU by hand, same command line, bare VNC socket: ${fmtMs(r)} ms`,
    target: '≤ 1.3× raw',
    met: p <= 1.3 * r,
    load: loadCell(watch.stop()),
  });
  await rowVncUsage(c, desktop.id, token!, runs, r);
}

// ---- desktop pools ----

/** A pool's counts, as its console page reads them. */
const poolCountsOf = async (base: string, token: string, id: string) =>
  (await api<{ counts: { prepared: number; preparing: number; in_use: number } }>(base, token, 'GET', `/desktop-pools/${id}`)).counts;

/**
 * Until the guest of every machine the portal runs (run directories under `dataDir`) said READY on its serial port
 * (booted), or its kernel gave up (said, and counted as over: its first frame is its console).
 */
async function guestsBooted(dataDir: string, limitMs: number) {
  const deadline = Date.now() + limitMs;
  const run = join(dataDir, 'run');
  const serialOf = (id: string) => {
    try {
      return readFileSync(join(run, id, 'serial.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const over = (id: string) => /READY|Kernel panic/.test(serialOf(id));
  while (!readdirSync(run).every(over)) {
    if (Date.now() > deadline) throw new Error(`the pool's guests had not booted after ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const panicked = readdirSync(run).filter((id) => serialOf(id).includes('Kernel panic')).length;
  if (panicked) say(`  (${panicked} guest kernel(s) panicked while booting under this load)`);
}

async function untilPrepared(base: string, token: string, id: string, n: number, limitMs: number) {
  const deadline = Date.now() + limitMs;
  while ((await poolCountsOf(base, token, id)).prepared < n) {
    if (Date.now() > deadline) throw new Error(`the pool did not have ${n} prepared desktops within ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Issue 30's pool rows. A pool of the demo template for N students, all prepared (POOL_BOOT_SECONDS 0 for the
 * bench: prepared as soon as the machine runs; a real guest's boot is the operator's setting) and their boots over
 * (the server's processes, its machines included, quiet), then:
 * - click to screen: the N sign in at once, each takes a desktop and reads its first frame in the browser viewer's
 *   websocket (the take gives the ticket, as the page asks it); beside the same N signing in again and opening the
 *   viewers of those (now running) desktops (a ticket, then the websocket);
 *   Both rounds are rehearsed first (untimed; the desktops given back and prepared again), so that neither meets code
 *   the server runs for the first time; then POOL_PAIRS pairs of rounds, each after the same untimed burst of sign-ins
 *   and the server settled, the desktops given back and prepared again between pairs; the row reads each side's median p95;
 * - return to template: a given desktop stopped (a fresh-each-time pool's desktop goes back), until the pool has N
 *   prepared again; beside `qemu-img create -b` and the same QEMU command line started by hand until its first frame.
 */
async function rowPool(c: Ctx) {
  const n = quick ? 5 : 30;
  say(`${c.mode}: desktop pools (${n} people at once; return to template)`);
  // 30 small guests on a 2-core machine are more vCPUs than the default overcommit (8 per CPU) lets a host hand out.
  await c.portal.restart({ POOL_BOOT_SECONDS: '0', VCPU_OVERCOMMIT: '32' });
  c.tokens.clear();
  const [admin] = await tokensOf(c, ['admin']);
  const people = students(450, n);
  const base = c.portal.url;
  const made = await api<{ id: string }>(base, admin!, 'POST', '/desktop-pools', {
    name: 'Bench pool', template_id: c.portal.seeded.templateId, allowed: { users: people.map((_, i) => `bench-user-${450 + i}`) },
    max_desktops: n, prepared: n, persistent: false,
    give_back: { on_sign_out: false, viewer_closed_minutes: null, at: null }, permissions: { viewers: ['browser-vnc'], may_restart: true },
  });
  try {
    // Click to screen from the pool: sign in, take (its answer brings the browser viewer's ticket, as the pool's card
    // asks), first frame; all at once.
    const poolRound = () =>
      Promise.all(people.map(async (u) => {
        const t0 = now();
        const token = await signIn(base, u);
        const t1 = now();
        const got = await api<{ kind: string; desktop_id?: string; viewer?: { cookie: string } }>(base, token, 'POST', `/desktop-pools/${made.id}/take`, { viewer: 'browser-vnc' });
        const t2 = now();
        if (got.kind !== 'desktop') throw new Error(`${u} was queued: the pool had fewer prepared desktops than people`);
        if (!got.viewer) throw new Error(`${u}'s take came without its viewer's ticket`);
        await firstFrameThroughPortal(base, token, got.desktop_id!, got.viewer);
        if (process.env.VDI_TRACE) appendFileSync(process.env.VDI_TRACE, `pool ${u}: sign-in ${(t1 - t0).toFixed(0)} take+ticket ${(t2 - t1).toFixed(0)} frame ${(now() - t2).toFixed(0)}\n`);
        return { ms: now() - t0, token, id: got.desktop_id! };
      }));
    // The same people on the same (running) desktops: sign in (one session per person: the earlier ends), ticket, first frame.
    const runningRound = (fromPool: { token: string; id: string }[]) =>
      Promise.all(people.map(async (u, i) => {
        const t0 = now();
        const token = await signIn(base, u);
        const t1 = now();
        await firstFrameThroughPortal(base, token, fromPool[i]!.id);
        if (process.env.VDI_TRACE) appendFileSync(process.env.VDI_TRACE, `running ${u}: sign-in ${(t1 - t0).toFixed(0)} frame ${(now() - t1).toFixed(0)}\n`);
        fromPool[i]!.token = token;
        return now() - t0;
      }));
    // Prepared means booted and waiting: the guests' boots (all at once here) are over, and the work that follows a
    // boot too, before the class signs in (as the running round's guests are: a pool prepares ahead of its timetable).
    const ready = async () => {
      await untilPrepared(base, admin!, made.id, n, 600_000);
      await guestsBooted(c.portal.dataDir, 900_000);
      const each = await guestsQuiet();
      if (process.env.VDI_TRACE) appendFileSync(process.env.VDI_TRACE, `guests quiet: ${(each * 100).toFixed(1)}% of a core each\n`);
    };
    await ready();
    // A rehearsal, untimed: both rounds, then every desktop given back and prepared again. Without it the first round
    // met code the server had never run (the take, the viewer's ticket and bridge: compiled and warmed during the round,
    // its garbage collected there) and the second profited from it; a server in use has run both before.
    const rehearsed = await poolRound();
    await runningRound(rehearsed);
    const giveBack = (given: { token: string; id: string }[]) => pool(given, 6, (x) => api(base, x.token, 'GET', `/desktop/stop/${x.id}`));
    await giveBack(rehearsed);
    await ready();
    const watch = watchLoad(c.portal.pid);
    // (VDI_TRACE: the server process's own CPU time in each round, its machines and helpers left out)
    const ownCpu = () => {
      try {
        const f = readFileSync(`/proc/${c.portal.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(f[11]) + Number(f[12])) * 10;
      } catch {
        return 0;
      }
    };
    const round = (name: string, cpu0: number, t0: number) =>
      process.env.VDI_TRACE && appendFileSync(process.env.VDI_TRACE, `round ${name}: server ${ownCpu() - cpu0} ms CPU in ${(now() - t0).toFixed(0)} ms (epoch ms ${Math.round(Date.now() - (now() - t0))}–${Date.now()}: VDI_SQL_TRACE's times)\n`);
    // (BENCH_PROFILE_DIR with BENCH_SERVER_NODE_ARGS=--inspect=127.0.0.1:PORT and BENCH_INSPECT_PORT: a CPU profile of each round)
    const inspectPort = Number(process.env.BENCH_INSPECT_PORT ?? 9339);
    // Pairs of rounds (the pool's, then the running desktops'), each round after the same untimed burst of the class's
    // sign-ins and the server settled: the pool round came minutes after the last sign-ins (its guests booting) and the
    // running round seconds after the pool round's, and both share the sign-in. One burst's p95 is nearly its slowest
    // person, so the row reads the median of a few pairs; between pairs every desktop is given back and prepared again.
    const signInsBefore = async () => {
      await Promise.all(people.map((u) => signIn(base, u)));
      await settle(c.portal.pid);
    };
    const pairs: { pool: number; running: number }[] = [];
    let fromPool: { ms: number; token: string; id: string }[] = [];
    for (let k = 0; k < POOL_PAIRS; k++) {
      if (k > 0) {
        await giveBack(fromPool);
        await ready();
      }
      await signInsBefore();
      let profile = await profileServer(inspectPort, `pool-${c.mode}-pool-${k}`);
      let [cpu0, t0] = [ownCpu(), now()];
      fromPool = await poolRound();
      round(`pool ${k}`, cpu0, t0);
      await profile.stop();
      await signInsBefore();
      profile = await profileServer(inspectPort, `pool-${c.mode}-running-${k}`);
      [cpu0, t0] = [ownCpu(), now()];
      const running = await runningRound(fromPool);
      round(`running ${k}`, cpu0, t0);
      await profile.stop();
      pairs.push({ pool: latencies(fromPool.map((x) => x.ms)).p95, running: latencies(running).p95 });
    }
    const p = median(pairs.map((x) => x.pool));
    const r = median(pairs.map((x) => x.running));
    const byPair = pairs.length > 1 ? ` (pairs: ${pairs.map((x) => `${fmtMs(x.pool)}/${fmtMs(x.running)} ms ${(x.pool / x.running).toFixed(2)}×`).join(', ')})` : '';
    add({
      mode: c.mode,
      row: `click to screen from a pool (${n} people at once, p95, median of ${pairs.length})`,
      portal: `${fmtMs(p)} ms; ${(p / r).toFixed(2)}× raw${byPair}`,
      raw: `the same ${n} on running desktops: ${fmtMs(r)} ms`,
      target: '≤ 1.2×',
      met: p / r <= 1.2,
      load: loadCell(watch.stop()),
    });

    // Return to template, one desktop at a time.
    const runs = quick ? 1 : 3;
    const back: number[] = [];
    const raw: number[] = [];
    const watch2 = watchLoad(c.portal.pid);
    for (let i = 0; i < runs; i++) {
      const given = fromPool[i]!;
      const t0 = now();
      await api(base, given.token, 'GET', `/desktop/stop/${given.id}`);
      await untilPrepared(base, admin!, made.id, 1, 300_000);
      back.push(now() - t0);
      // Taken again, so that the next round starts from none prepared.
      const again = await api<{ kind: string; desktop_id?: string }>(base, given.token, 'POST', `/desktop-pools/${made.id}/take`);
      if (again.kind !== 'desktop' || !again.desktop_id) throw new Error(`taken again after its give-back, ${given.id.slice(0, 8)}'s person was answered ${JSON.stringify(again)}`);
      fromPool[i] = { ...given, id: again.desktop_id };

      // By hand: the same machine (the portal's QEMU command line for a pool desktop, read while it runs), its overlay
      // made with qemu-img, then QEMU until its first frame.
      const args = portalQemuArgs(c.portal.dataDir, fromPool[i]!.id);
      const dir = join(c.work, `pool-${i}`);
      mkdirSync(dir, { mode: 0o700 });
      const disk = join(dir, 'disk.qcow2');
      const byHand = byHandArgs(args, dir, disk, 'bench123');
      // Its SPICE display on a port of its own (the pool's desktop holds the portal's).
      const spice = byHand.indexOf('-spice');
      if (spice >= 0) byHand[spice + 1] = byHand[spice + 1]!.replace(/port=\d+/, `port=${await freePort()}`);
      const t1 = now();
      await qemuImg(overlayArgs(c.portal.seeded.basePath, 'qcow2', disk));
      const qemu = spawn('qemu-system-x86_64', byHand, { stdio: ['ignore', 'ignore', 'pipe'] });
      let said = '';
      qemu.stderr!.on('data', (b: Buffer) => (said += b.toString()));
      try {
        await firstFrameWhenListening(join(dir, 'vnc.sock'), 'bench123', qemu).catch((err: Error) => {
          throw new Error(`${err.message}: ${said.trim().slice(-300)}`);
        });
        raw.push(now() - t1);
      } finally {
        qemu.kill('SIGKILL');
        await new Promise((r) => (qemu.exitCode !== null || qemu.signalCode !== null ? r(null) : qemu.once('exit', r)));
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const b = latencies(back).p50;
    const rr = latencies(raw).p50;
    add({
      mode: c.mode,
      row: `return to template: a given-back desktop's place prepared again (median of ${runs})`,
      portal: `${fmtMs(b)} ms; ${(b / rr).toFixed(2)}× raw`,
      raw: `qemu-img create -b + the same QEMU by hand to its first frame: ${fmtMs(rr)} ms`,
      target: '≤ 1.3×',
      met: b / rr <= 1.3,
      load: loadCell(watch2.stop()),
    });
  } finally {
    await api(base, admin!, 'DELETE', `/desktop-pools/${made.id}`).catch(() => undefined);
    await c.portal.restart({ POOL_BOOT_SECONDS: undefined, VCPU_OVERCOMMIT: undefined });
    c.tokens.clear();
  }
}

/**
 * What recording usage (modules/usage/record.ts: an interval opened at `started`, closed at `stopped`) adds
 * to the same start, on the same data: the server restarted with it, then without it (VDI_BENCH_NO_USAGE, a
 * switch for the bench only), then with it again — A–B–A, each block `runs` starts right after a restart, so
 * that a drift of the shared machine and a process's first start weigh on both sides (docs/decisions/0032).
 */
async function rowVncUsage(c: Ctx, id: string, token: string, runs: number, rawMs: number) {
  const timed = async (into: number[]) => {
    await settle(c.portal.pid);
    for (let i = 0; i < runs; i++) {
      into.push(await timedStart(c.portal.url, token, id));
      await stopDesktop(c.portal.url, token, id);
    }
  };
  say(`${c.mode}: the same start with usage recorded, not recorded (server restarted with VDI_BENCH_NO_USAGE=1), recorded again`);
  // (The machine's load only: the server's process changes.)
  const watch = watchLoad(undefined);
  const off: number[] = [];
  const on: number[] = [];
  await c.portal.restart({ VDI_BENCH_NO_USAGE: undefined });
  await timed(on);
  try {
    await c.portal.restart({ VDI_BENCH_NO_USAGE: '1' });
    await timed(off);
  } finally {
    await c.portal.restart({ VDI_BENCH_NO_USAGE: undefined });
  }
  await timed(on);
  const pOn = latencies(on).p50;
  const pOff = latencies(off).p50;
  const added = (pOn / pOff - 1) * 100;
  add({
    mode: c.mode,
    row: `start to first VNC frame, usage recorded vs not (median of ${on.length} vs ${off.length}, A–B–A)`,
    portal: `recorded ${fmtMs(pOn)} ms, not recorded ${fmtMs(pOff)} ms: ${added >= 0 ? '+' : ''}${added.toFixed(1)} %`,
    raw: `QEMU by hand, bare VNC socket: ${fmtMs(rawMs)} ms`,
    target: 'recording adds ≤ 5 %',
    met: added <= 5,
    load: loadCell(watch.stop()),
  });
}

// ---- usage reports and backups (issue 29) ----

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** `n` answers of `call`, one after the other (a person at the console), their latencies. */
async function sequential(n: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await call(i);
    out.push(now() - t0);
  }
  return out;
}

/**
 * The console's usage report over the last year (365 days) of the generated history (seed.ts: 5,000 people),
 * as an admin asks it: by organisation, group, user and template, all organisations and one; one request at
 * a time. Beside it, the same number of the signed-in GET /api/v3/user on the same portal.
 */
async function rowUsage(c: Ctx) {
  if (!c.portal.seeded.usageRows) throw new Error('no usage history was generated');
  const [token] = await tokensOf(c, ['admin']);
  // Two shapes of "a year": the 365 days to yesterday (its first and last months partly, read from the hours)
  // and the 12 whole months before this one (read from the monthly sums only).
  const yesterday = new Date(Date.now() - 86_400_000);
  const today = new Date();
  const periods = [
    { label: '365 days', from: isoDay(new Date(yesterday.getTime() - 364 * 86_400_000)), to: isoDay(yesterday) },
    { label: '12 months', from: isoDay(new Date(Date.UTC(today.getUTCFullYear() - 1, today.getUTCMonth(), 1))), to: isoDay(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 0))) },
  ];
  const kinds = periods.flatMap((p) =>
    ['organisation', 'group', 'user', 'template'].flatMap((g) => [
      { label: `${p.label} by ${g}`, q: `from=${p.from}&to=${p.to}&group_by=${g}` },
      { label: `${p.label} by ${g} of one org`, q: `from=${p.from}&to=${p.to}&group_by=${g}&category=bench-org-3` },
    ]),
  );
  const path = (i: number) => `/admin/reports/usage?${kinds[i % kinds.length]!.q}`;
  const n = quick ? kinds.length : kinds.length * 3;
  say(`${c.mode}: usage report over a year of ${c.portal.seeded.usageRows} hourly rows, ${n} requests one at a time (and as many GET /api/v3/user)`);
  const check = await api<{ totals: { desktop_hours: number } }>(c.portal.url, token!, 'GET', path(0));
  if (!(check.totals.desktop_hours > 0)) throw new Error('the report over the generated year is empty');
  for (let i = 1; i < kinds.length; i++) await api(c.portal.url, token!, 'GET', path(i));
  await settle(c.portal.pid);
  const watch = watchLoad(c.portal.pid);
  const times = await sequential(n, (i) => api(c.portal.url, token!, 'GET', path(i)));
  const report = latencies(times);
  const load = watch.stop();
  // The slowest kind of report (its median), to know where the time goes.
  const byKind = kinds.map((k, j) => ({ k: k.label, p50: median(times.filter((_, i) => i % kinds.length === j)) })).sort((a, b) => b.p50 - a.p50);
  const byPeriod = periods.map((p) => `${p.label} p50 ${fmtMs(median(times.filter((_, i) => kinds[i % kinds.length]!.label.startsWith(p.label))))} ms`).join(', ');
  const raw = latencies(await sequential(n, () => api(c.portal.url, token!, 'GET', '/user')));
  add({
    mode: c.mode,
    row: `usage report, one year, ${USAGE_PEOPLE} people (${(c.portal.seeded.usageRows / 1e6).toFixed(2)} M hourly rows): 365 days and 12 months, by org/group/user/template, all and one org (${n} requests, one at a time)`,
    portal: `${fmtLat(report)}; ${byPeriod}; slowest: ${byKind[0]!.k} (${fmtMs(byKind[0]!.p50)} ms), fastest: ${byKind.at(-1)!.k} (${fmtMs(byKind.at(-1)!.p50)} ms)`,
    raw: `GET /api/v3/user: ${fmtLat(raw)}`,
    target: 'p95 < 500 ms',
    met: report.p95 < 500,
    load: loadCell(load),
  });
}

/**
 * A backup of the bench's database as the console (or `npm run backup`) makes it: the job, started and
 * followed through the API, until its archive is whole. Beside it, a raw copy of the same data in the
 * same run: pg_dump of the database (PostgreSQL), a copy of the embedded database's folder (PGlite).
 */
async function rowBackup(c: Ctx) {
  const [token] = await tokensOf(c, ['admin']);
  say(`${c.mode}: a backup of the bench's database through the API (and the raw copy)`);
  const watch = watchLoad(c.portal.pid);
  const t0 = now();
  const job = await api<{ id: string }>(c.portal.url, token!, 'POST', '/admin/backups', { disks: false });
  let state: { status: string; error: string | null; name: string | null };
  for (;;) {
    state = await api<typeof state>(c.portal.url, token!, 'GET', `/admin/backups/job/${job.id}`);
    if (!['queued', 'running'].includes(state.status)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const took = now() - t0;
  const load = watch.stop();
  if (state.status !== 'done') throw new Error(`the backup ${state.status}: ${state.error}`);
  const listed = await api<{ items: { name: string; size: number }[] }>(c.portal.url, token!, 'GET', '/admin/backups');
  const size = listed.items.find((b) => b.name === state.name)?.size ?? 0;
  const archive = join(c.portal.dataDir, 'backups', state.name!);
  const manifest = await new Promise<string>((resolve, reject) => {
    const p = spawn('tar', ['xzOf', archive, 'manifest.json'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.on('error', reject);
    p.on('exit', () => resolve(out));
  });
  const tables = (JSON.parse(manifest) as { database: { tables: Record<string, number> } }).database.tables;
  const rows = Object.values(tables).reduce((a, b) => a + b, 0);
  // The raw copy of the same data.
  await settle(c.portal.pid);
  let raw: string;
  if (c.portal.env.DATABASE_URL) {
    const file = join(c.work, 'raw.sql');
    const r0 = now();
    await new Promise<void>((resolve, reject) => {
      const p = spawn('pg_dump', ['--no-owner', '-f', file, c.portal.env.DATABASE_URL!], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (b: Buffer) => (err += b.toString()));
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_dump exited ${code}: ${err.slice(0, 200)}`))));
    });
    raw = `pg_dump (plain SQL): ${fmtMs(now() - r0)} ms, ${fmtBytes(statSync(file).size)}`;
  } else {
    const copy = join(c.work, 'raw-db');
    const r0 = now();
    await new Promise<void>((resolve, reject) => {
      const p = spawn('cp', ['-a', join(c.portal.dataDir, 'db'), copy], { stdio: 'ignore' });
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`cp exited ${code}`))));
    });
    raw = `cp -a of the database's folder (not consistent while it runs): ${fmtMs(now() - r0)} ms`;
    rmSync(copy, { recursive: true, force: true });
  }
  add({
    mode: c.mode,
    row: `backup through the API (${tables.domains ?? '?'} desktops, ${tables.users ?? '?'} users, ${(rows / 1e6).toFixed(2)} M rows in all)`,
    portal: `${fmtMs(took)} ms, ${fmtBytes(size)}`,
    raw,
    target: '< 30 s',
    met: took < 30_000,
    load: loadCell(load),
  });
}

// ---- start to the first RDP screen ----

/** FreeRDP's screen shows the RDP guest's session: its terminal's white over a large part of it. */
const rdpSessionDrawn = (rgb: Buffer) => countPixels(rgb, (r, g, b) => r > 240 && g > 240 && b > 240) > 150_000;

/** FreeRDP until the session is drawn (a guest whose xrdp is not listening yet: tried again), in ms from `t0`. */
async function firstRdpScreen(work: string, t0: number, connect: () => Promise<{ file: string | null; args: string[] }>): Promise<number> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { file, args } = await connect();
    const shot = await xfreerdpScreen(file, { work, args, waitMs: 60_000, drawn: rdpSessionDrawn });
    if (shot.drawn) return now() - t0;
    if (Date.now() > deadline) throw new Error(`no RDP screen within 300 s: ${shot.log.slice(-300)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function rowRdp(c: Ctx) {
  say(`${c.mode}: start to the first RDP screen, FreeRDP through the RD Gateway (and the same guest by hand, FreeRDP direct)`);
  const skip = (why: string) => add({ mode: c.mode, row: 'start to the first RDP screen', portal: `skipped: ${why}`, raw: '—', target: '— (kept for reference)', met: null, load: '—' });
  if (!['/usr/bin/xfreerdp', '/usr/bin/xvfb-run', '/usr/bin/xwd', '/usr/bin/xwdtopnm'].every((f) => existsSync(f))) return skip('FreeRDP, Xvfb, xwd or netpbm missing');
  // The guest is the same in both modes: measured once.
  if (c.mode !== 'pglite') return skip('measured in the pglite mode (no database on this path)');
  const [token] = await tokensOf(c, ['manager']);
  const allowed = await api<{ interfaces: { id: string }[] }>(c.portal.url, token!, 'GET', '/user/hardware/allowed');
  if (!allowed.interfaces.some((i) => i.id === 'wireguard')) return skip('no guest network on this machine');
  const { id } = await api<{ id: string }>(c.portal.url, token!, 'POST', '/persistent_desktop', { template_id: RDP_TEMPLATE_ID, name: `RDP bench ${Date.now()}` });
  const stateOf = async () => (await api<{ id: string; state: string }[]>(c.portal.url, token!, 'GET', '/user/desktops')).find((d) => d.id === id)?.state;
  const until = async (what: string, ok: () => Promise<boolean>) => {
    const deadline = Date.now() + 300_000;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`${what} not within 300 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await until('the RDP desktop made', async () => (await stateOf()) === 'Stopped');
  const runs = quick ? 1 : 3;
  const portal: number[] = [];
  const raw: number[] = [];
  const accel = decideAccel('auto').accel;
  const watch = watchLoad(c.portal.pid);
  const rdpDisk = join(process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'images'), 'rdp-disk.qcow2');
  for (let i = 0; i < runs; i++) {
    // Through the portal: started, its address learnt, its .rdp file (gateway, one-time token) opened by FreeRDP.
    let t0 = now();
    await api(c.portal.url, token!, 'GET', `/desktop/start/${id}`);
    const file = join(c.work, `rdp-${i}.rdp`);
    portal.push(
      await firstRdpScreen(c.work, t0, async () => {
        for (;;) {
          const r = await fetch(`${c.portal.url}/api/v3/desktop/${id}/viewer/file-rdpgw`, { headers: { authorization: `Bearer ${token}` } });
          if (r.status === 200) {
            writeFileSync(file, ((await r.json()) as { content: string }).content);
            return { file, args: [] };
          }
          await new Promise((res) => setTimeout(res, 100));
        }
      }),
    );
    for (let k = 0; k < 2; k++) await api(c.portal.url, token!, 'GET', `/desktop/stop/${id}`).catch(() => undefined);
    await until('the RDP desktop stopped', async () => (await stateOf()) === 'Stopped');

    // By hand: the same guest image, QEMU with a forwarded port, FreeRDP straight to its xrdp (the guest's default user).
    const disk = join(c.work, `rdp-${i}.qcow2`);
    await qemuImg(overlayArgs(rdpDisk, 'qcow2', disk));
    const port = await freePort();
    t0 = now();
    const qemu = spawn('qemu-system-x86_64', ['-accel', accel, '-machine', 'q35', '-m', '512', '-nodefaults', '-display', 'none', '-vga', 'std',
      '-drive', `file=${disk},format=qcow2,if=virtio`, '-netdev', `user,id=n0,hostfwd=tcp:127.0.0.1:${port}-:3389`, '-device', 'virtio-net-pci,netdev=n0'], { stdio: 'ignore' });
    try {
      raw.push(await firstRdpScreen(c.work, t0, async () => ({ file: null, args: [`/v:127.0.0.1:${port}`, '/u:isard', '/p:pirineus'] })));
    } finally {
      qemu.kill('SIGKILL');
    }
  }
  await api(c.portal.url, token!, 'DELETE', `/desktop/${id}`).catch(() => undefined);
  const p = latencies(portal).p50;
  const r = latencies(raw).p50;
  add({
    mode: c.mode,
    row: `start to the first RDP screen (median of ${runs})`,
    portal: `${fmtMs(p)} ms through the RD Gateway; ${(p / r).toFixed(2)}× raw`,
    raw: `QEMU by hand, FreeRDP direct: ${fmtMs(r)} ms`,
    target: '— (kept for reference)',
    met: null,
    load: loadCell(watch.stop()),
  });
}

// ---- the cluster: desktops on three lab hypervisors ----

/** Desktops of the boot storm (30 in the issue; BENCH_STORM changes it, e.g. on a smaller machine). */
const STORM = Number(process.env.BENCH_STORM ?? (quick ? 6 : 30));

/**
 * The cluster rows, on a portal of their own (the server's default start concurrency, not the other rows'
 * 1) with three lab hypervisors added through the admin API and this server's own host taking no new
 * starts: creation on the shared pool beside `qemu-img create -b` on a host, the boot storm beside the
 * same domains `virsh create`d by hand, the placement spread, and one desktop's start on a lab host
 * beside the same desktop on this server's QEMU driver.
 */
async function rowsCluster(mode: Mode, raw: { url: string }, work: string, databaseUrl: string | undefined) {
  say(`${mode}: the cluster rows (a portal of their own, three lab hypervisors)`);
  // BENCH_CLUSTER_START_CONCURRENCY: the portal's START_CONCURRENCY (starts at once per host), to compare.
  const portal = await startPortal(mode, databaseUrl, { START_CONCURRENCY: process.env.BENCH_CLUSTER_START_CONCURRENCY });
  const c: Ctx = { mode, portal, raw, tokens: new Map(), work };
  let lab: Awaited<ReturnType<typeof startBenchLab>> | undefined;
  try {
    lab = await startBenchLab(portal.dataDir);
    const [admin] = await tokensOf(c, ['admin']);
    const call = async (method: string, path: string, body?: unknown) => ({ status: 200, body: await api(portal.url, admin!, method, path, body) });
    const hostIds: string[] = [];
    for (const h of lab.hosts) hostIds.push((await addLabHost(call, h, fingerprintOf)).id);
    await untilOnline(call, hostIds, 120_000);
    const setStarts = async (id: string, enabled: boolean) => call('PUT', `/admin/hypervisors/${id}`, { enabled });
    await setStarts(LOCAL_HYPERVISOR, false);
    currentKey = 'cluster';

    // Creation on the pool the hosts share, beside qemu-img run on the first host (its own namespaces).
    const poolDir = join(portal.dataDir, 'storage', 'bench-raw');
    mkdirSync(poolDir, { recursive: true });
    const host1 = lab.hosts[0]!;
    await warmCreate(c, 4, 200);
    await rowCreate(c, 25, 0, {
      row: '25 desktops created at once on the hosts\' shared pool',
      raw: { where: `on ${host1.name}`, create: (args) => qemuImgOnHost(host1, args), dir: poolDir },
    });

    // The storm's desktops: one each of STORM people (made by the creation rounds, more when needed).
    const people = students(0, STORM);
    const tokens = await tokensOf(c, people);
    const desks: { token: string; id: string }[] = [];
    for (const token of tokens) {
      let mine = (await api<{ id: string; name: string; state: string }[]>(portal.url, token, 'GET', '/user/desktops')).find((d) => d.name.startsWith('Bench created'));
      if (!mine) {
        await api(portal.url, token, 'POST', '/persistent_desktop', { name: 'Bench created storm', template_id: portal.seeded.templateId });
        mine = (await api<{ id: string; name: string; state: string }[]>(portal.url, token, 'GET', '/user/desktops')).find((d) => d.name.startsWith('Bench created'))!;
      }
      desks.push({ token, id: mine.id });
    }
    const stateOf = async (d: { token: string; id: string }) => (await api<{ id: string; state: string; hypervisor: string | null }[]>(portal.url, d.token, 'GET', '/user/desktops')).find((x) => x.id === d.id)!;
    for (const d of desks) while ((await stateOf(d)).state !== 'Stopped') await new Promise((r) => setTimeout(r, 200));
    await settle(portal.pid);

    say(`${mode}: boot storm: ${STORM} desktops started at once through the portal`);
    let watch = watchLoad(portal.pid);
    let t0 = now();
    // A viewer whose connection closes before the first frame (the server's bridge gives a VNC server 5 s
    // per handshake step) opens again, as the browser's does: counted, for at most 10 minutes.
    // Each owner waits for the socket's word that the desktop runs, then opens the viewer (the page's way).
    let reopened = 0;
    const sockets = await Promise.all(desks.map((d) => socketOf(portal.url, { jwt: d.token })));
    t0 = now();
    const deadline = Date.now() + 600_000;
    const portalEach = await Promise.all(desks.map(async (d, i) => {
      const started = startedOn(sockets[i]!, d.id);
      await api(portal.url, d.token, 'GET', `/desktop/start/${d.id}`);
      await started;
      for (;;) {
        try {
          await firstFrameThroughPortal(portal.url, d.token, d.id);
          return now() - t0;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          reopened++;
        }
      }
    }));
    const portalLoad = watch.stop();
    for (const s of sockets) s.close();
    say(`${mode}: the portal's storm: ${fmtMs(Math.max(...portalEach))} ms until the last first frame (${fmtLoad(portalLoad)})`);
    const placed = await Promise.all(desks.map(async (d) => (await stateOf(d)).hypervisor ?? 'none'));
    const byHost = new Map<string, number>(lab.hosts.map((h) => [h.name, 0]));
    for (const p of placed) byHost.set(p, (byHost.get(p) ?? 0) + 1);
    const counts = [...byHost.values()];
    // The same domains by hand afterwards: their definitions read now, while they run where placement put them.
    const hostOf = new Map(lab.hosts.map((h) => [h.name, h]));
    const vncPassword = 'bench123';
    const byHand = await Promise.all(desks.map(async (d, i) => {
      const host = hostOf.get(placed[i]!)!;
      return { host, id: d.id, xml: await domainXmlByHand(host, d.id, vncPassword), vncPassword };
    }));
    await pool(desks, 6, (d) => stopDesktop(portal.url, d.token, d.id));
    for (const h of lab.hosts) while ((await domainsOn(h)).length > 0) await new Promise((r) => setTimeout(r, 200));
    await settle(portal.pid);
    say(`${mode}: boot storm by hand: the same ${STORM} domains, virsh create on their hosts at once`);
    watch = watchLoad(portal.pid);
    const hand = await stormByHand(work, byHand);
    const handLoad = watch.stop();
    const portalMs = Math.max(...portalEach);
    add({
      mode,
      row: `boot storm: ${STORM} desktops started at once over 3 hosts, until every VNC screen's first frame`,
      portal: `${fmtMs(portalMs)} ms (median desktop ${fmtMs(latencies(portalEach).p50)} ms; ${reopened} viewer(s) reopened); ${(portalMs / hand.ms).toFixed(2)}× raw`,
      raw: `virsh create of the same XML on the same hosts: ${fmtMs(hand.ms)} ms (median ${fmtMs(latencies(hand.each).p50)} ms; load then ${fmtLoad(handLoad)})`,
      target: '≤ 1.3× raw',
      met: portalMs / hand.ms <= 1.3,
      load: loadCell(portalLoad),
    });
    add({
      mode,
      row: 'placement spread after the storm',
      portal: [...byHost].map(([h, n]) => `${h} ${n}`).join(', '),
      raw: '—',
      target: 'most loaded ≤ least + 1',
      met: Math.max(...counts) - Math.min(...counts) <= 1 && !byHost.has('none'),
      load: '—',
    });

    // One desktop: on a lab host (libvirt over SSH), then on this server (the QEMU driver), in turns.
    await settle(portal.pid);
    say(`${mode}: one desktop's start to first frame, on a lab host and on this server`);
    const one = desks[0]!;
    const runs = quick ? 1 : 3;
    const remote: number[] = [];
    const local: number[] = [];
    const byHandOne: number[] = [];
    watch = watchLoad(portal.pid);
    for (let i = 0; i < runs; i++) {
      for (const where of ['remote', 'local', 'by hand'] as const) {
        if (where === 'by hand') {
          // libvirt's own share: the same domain `virsh create`d on the host it ran on, until its first frame.
          const [d] = byHand.filter((b) => b.id === one.id);
          byHandOne.push((await stormByHand(work, [d!])).ms);
          continue;
        }
        await setStarts(LOCAL_HYPERVISOR, where === 'local');
        for (const id of hostIds) await setStarts(id, where === 'remote');
        await settle(portal.pid);
        (where === 'remote' ? remote : local).push(await timedStart(portal.url, one.token, one.id));
        await stopDesktop(portal.url, one.token, one.id);
      }
    }
    const r = latencies(remote).p50;
    const l = latencies(local).p50;
    const h = latencies(byHandOne).p50;
    add({
      mode,
      row: `start to first VNC frame of one desktop on a lab host (median of ${runs})`,
      portal: `${fmtMs(r)} ms through libvirt (qemu+ssh); ${(r / l).toFixed(2)}× local, ${(r / h).toFixed(2)}× virsh create by hand`,
      raw: `the same desktop on this server's QEMU driver: ${fmtMs(l)} ms; its domain \`virsh create\`d on its host by hand: ${fmtMs(h)} ms`,
      target: '≤ 1.2× local',
      met: r / l <= 1.2,
      load: loadCell(watch.stop()),
    });
  } finally {
    await portal.stop();
    await lab?.stop();
    lab?.removeDir();
  }
}

// ---- a mode ----

async function postgresDatabase() {
  const admin = process.env.BENCH_PG_ADMIN_URL;
  return admin ? createScratchDatabase(admin, 'vdi_bench') : undefined;
}

async function runMode(mode: Mode, raw: { url: string }) {
  let database: Awaited<ReturnType<typeof postgresDatabase>>;
  if (mode === 'postgres') {
    database = await postgresDatabase();
    if (!database) {
      say('postgres: no PostgreSQL here (BENCH_PG_ADMIN_URL unset): skipped');
      return;
    }
  }
  countDatabaseProcesses(database?.name);
  const work = mkdtempSync(join(tmpdir(), 'vbw-'));
  try {
    // The cluster rows run on a portal of their own (a database of their own in the PostgreSQL mode), after the others.
    if ([...only].some((k) => k !== 'cluster' && k !== 'processes')) await rowsOfOnePortal(mode, raw, database?.url, work);
    // Several server processes on one PostgreSQL behind HAProxy: PostgreSQL only (PGlite is one process's).
    if (only.has('processes') && mode === 'postgres') {
      currentKey = 'processes';
      await rowsProcesses({ adminUrl: process.env.BENCH_PG_ADMIN_URL!, windowS: WINDOW_S, say, add: (r) => add({ mode, ...r, met: null }) }).catch((err: Error) => {
        crashed = true;
        add({ mode, row: 'processes', portal: `failed: ${err.message.split('\n')[0]!.slice(0, 200)}`, raw: '—', target: '—', met: false, load: '—' });
      });
    }
    if (only.has('cluster')) {
      currentKey = 'cluster';
      const clusterDb = mode === 'postgres' ? await postgresDatabase() : undefined;
      await rowsCluster(mode, raw, work, clusterDb?.url)
        .catch((err: Error) => {
          crashed = true;
          add({ mode, row: 'cluster', portal: `failed: ${err.message.split('\n')[0]!.slice(0, 200)}`, raw: '—', target: '—', met: false, load: '—' });
        })
        .finally(() => clusterDb?.drop().catch((err) => say(`postgres: dropping the cluster's database failed: ${(err as Error).message}`)));
    }
  } finally {
    await database?.drop().catch((err) => say(`postgres: dropping the bench database failed: ${(err as Error).message}`));
    rmSync(work, { recursive: true, force: true });
  }
}

/** The rows of one portal (every row but the cluster's). */
async function rowsOfOnePortal(mode: Mode, raw: { url: string }, databaseUrl: string | undefined, work: string) {
  let portal: Portal | undefined;
  try {
    portal = await startPortal(mode, databaseUrl);
    const c: Ctx = { mode, portal, raw, tokens: new Map(), work };
    const step = async (key: RowKey, fn: () => Promise<void>) => {
      if (!only.has(key)) return;
      currentKey = key;
      try {
        await settle(portal!.pid);
        await fn();
      } catch (err) {
        crashed = true;
        add({ mode, row: key, portal: `failed: ${(err as Error).message.split('\n')[0]!.slice(0, 200)}`, raw: '—', target: '—', met: false, load: '—' });
      }
    };
    // The load rows last: a saturated server keeps working through its backlog for a while,
    // which would weigh on the rows after them (the table shows them in the issue's order).
    await step('create', async () => {
      await warmCreate(c, 10, 125);
      await rowCreate(c, 25, 0);
      await settle(portal!.pid);
      await rowCreate(c, 100, 25);
    });
    await step('deployment', () => makeDeployment(c, true));
    await step('fanout', () => rowFanout(c));
    await step('web', () => rowWeb(c));
    await step('vnc', () => rowVnc(c));
    await step('pool', () => rowPool(c));
    await step('rdp', () => rowRdp(c));
    await step('user', () => rowUser(c));
    await step('desktops', () => rowDesktops(c));
    await step('admin-desktops', () => rowAdminDesktops(c));
    await step('usage', () => rowUsage(c));
    await step('backup', () => rowBackup(c));
  } finally {
    await portal?.stop();
  }
}

const t0 = now();
const rawHttp = await startRaw('raw-http.ts');
try {
  const modes: Mode[] = modeArg === 'both' ? ['pglite', 'postgres'] : [modeArg as Mode];
  for (const mode of modes) {
    try {
      await runMode(mode, rawHttp);
    } catch (err) {
      crashed = true;
      add({ mode, row: 'set-up', portal: `failed: ${(err as Error).message.split('\n')[0]!.slice(0, 300)}`, raw: '—', target: '—', met: false, load: '—' });
    }
  }
} finally {
  await rawHttp.stop();
}
printTable();
process.stdout.write(`(${((now() - t0) / 1000).toFixed(0)} s; the targets are informational: the bench never fails on them)\n`);
process.exit(crashed ? 1 : 0);
