// The bench's instruments: an open-loop HTTP load generator, percentiles, and the machine's load
// (load average, the server's CPU from /proc, the whole machine's busy share) over a window.
import http from 'node:http';
import { loadavg } from 'node:os';
import { readFileSync, readdirSync } from 'node:fs';

export const now = () => performance.now();

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export type Latencies = { p50: number; p95: number; p99: number; n: number };
export const latencies = (xs: number[]): Latencies => ({ p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), n: xs.length });

export const fmtMs = (v: number) => (Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
export const fmtLat = (l: Latencies) => `p50 ${fmtMs(l.p50)} p95 ${fmtMs(l.p95)} p99 ${fmtMs(l.p99)} ms`;
export const fmtBytes = (b: number) => (b >= 1e6 ? `${(b / 1e6).toFixed(2)} MB` : `${(b / 1e3).toFixed(1)} kB`);

// ---- the machine's load over a window ----

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

let databaseMatch: string | undefined;
/** PostgreSQL mode: its backends (command line naming the bench's database) are counted as the database's CPU. */
export const countDatabaseProcesses = (databaseName: string | undefined) => (databaseMatch = databaseName);

/** CPU ticks per process: a difference between two readings counts only the processes alive at the second (one that ended meanwhile never makes it negative). */
type Ticks = Map<number, number>;
const ticksSince = (before: Ticks, after: Ticks) => {
  let total = 0;
  for (const [pid, t] of after) total += t - (before.get(pid) ?? 0);
  return total;
};

/** Every process now: its command name, parent and CPU ticks (user + system); one that ends meanwhile is left out. */
function processes(): Map<number, { comm: string; ppid: number; ticks: number }> {
  const all = new Map<number, { comm: string; ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name (field 2) may hold spaces: parse after its closing parenthesis.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      all.set(Number(name), { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // gone meanwhile
    }
  }
  return all;
}

function databaseTicks(): Ticks {
  const total: Ticks = new Map();
  if (!databaseMatch) return total;
  for (const [pid, p] of processes()) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(databaseMatch)) total.set(pid, p.ticks);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU ticks (user + system) of a process and all its descendants (PGlite or PostgreSQL children, qemu-img…). */
function treeTicks(rootPid: number): Ticks {
  const procs = processes();
  const total: Ticks = new Map();
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = procs.get(p)?.ppid ?? 0, hops++) if (p === rootPid) return true;
    return false;
  };
  for (const [pid, p] of procs) if (inTree(pid)) total.set(pid, p.ticks);
  return total;
}

function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

/** CPU ticks of each thread of one process: its main thread (tid = pid) and the others (workers, GC, compiler). */
export function threadTicks(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]);
      if (Number(tid) === pid) main += ticks;
      else others += ticks;
    } catch {
      // ended meanwhile
    }
  }
  return { main, others };
}

/** CPU milliseconds per operation of a process's main thread and its other threads since `before`. */
export function cpuPerOp(pid: number, before: { main: number; others: number }, ops: number) {
  const after = threadTicks(pid);
  const ms = (ticks: number) => (ticks * 1000) / TICKS_PER_SECOND / Math.max(ops, 1);
  return { main: ms(after.main - before.main), others: ms(after.others - before.others) };
}

export type Load = { loadavg1: number; serverCpu: number; databaseCpu?: number; machineBusy: number };
export const fmtLoad = (l: Load) =>
  `load ${l.loadavg1.toFixed(2)}, server ${l.serverCpu.toFixed(0)}%` +
  (l.databaseCpu !== undefined ? ` + PostgreSQL ${l.databaseCpu.toFixed(0)}%` : '') +
  ` CPU, machine ${l.machineBusy.toFixed(0)}% busy`;

/** Starts watching; `stop()` answers the load over the time since. `serverCpu` is % of one core. */
export function watchLoad(serverPid: number | undefined) {
  const t0 = now();
  const s0: Ticks = serverPid ? treeTicks(serverPid) : new Map();
  const d0: Ticks = serverPid ? databaseTicks() : new Map();
  const m0 = machineTicks();
  return {
    stop(): Load {
      const seconds = (now() - t0) / 1000;
      const s1: Ticks = serverPid ? treeTicks(serverPid) : new Map();
      const d1: Ticks = serverPid ? databaseTicks() : new Map();
      const m1 = machineTicks();
      const share = (ticks: number) => (seconds > 0 ? (ticks / TICKS_PER_SECOND / seconds) * 100 : 0);
      return {
        loadavg1: loadavg()[0]!,
        serverCpu: share(ticksSince(s0, s1)),
        databaseCpu: serverPid && databaseMatch ? share(ticksSince(d0, d1)) : undefined,
        machineBusy: m1.total > m0.total ? ((m1.busy - m0.busy) / (m1.total - m0.total)) * 100 : 0,
      };
    },
  };
}

/**
 * Waits until the server is quiet (under 10% of a core over half a second, at most 3 minutes), so a
 * row does not pay for the backlog the previous one left behind.
 */
export async function settle(serverPid: number, maxMs = 180_000) {
  const deadline = now() + maxMs;
  while (now() < deadline) {
    const t0 = now();
    const [s0, d0] = [treeTicks(serverPid), databaseTicks()];
    await new Promise((r) => setTimeout(r, 500));
    const used = ticksSince(s0, treeTicks(serverPid)) + ticksSince(d0, databaseTicks());
    if ((used / TICKS_PER_SECOND / ((now() - t0) / 1000)) * 100 < 10) return;
  }
}

/** CPU ticks (user + system) of every QEMU guest on the machine, and how many run. */
function guestTicks(): { ticks: Ticks; count: number } {
  const ticks: Ticks = new Map();
  for (const [pid, p] of processes()) if (p.comm.startsWith('qemu-system')) ticks.set(pid, p.ticks);
  return { ticks, count: ticks.size };
}

/**
 * Waits until the machine's guests are quiet: over 3 s, under `perGuest` of a core each on average (at most `maxMs`).
 * A guest whose boot has just ended (its READY line) still works for a minute or more (30 small guests under TCG:
 * 1.9 cores for the next 40 s, 1.2 in the 20 s after, 0.2 once idle); "prepared" means booted and waiting.
 * Answers the guests' share of a core each when it returned.
 */
export async function guestsQuiet(perGuest = 0.02, maxMs = 300_000): Promise<number> {
  const deadline = now() + maxMs;
  for (;;) {
    const t0 = now();
    const before = guestTicks();
    await new Promise((r) => setTimeout(r, 3000));
    const after = guestTicks();
    const each = after.count ? ticksSince(before.ticks, after.ticks) / TICKS_PER_SECOND / ((now() - t0) / 1000) / after.count : 0;
    if (each <= perGuest || now() > deadline) return each;
  }
}

// ---- open-loop HTTP load ----

export type LoadResult = {
  offered: number;
  /** Share of the offered requests answered 2xx by the end of the window (+1 s grace). */
  achieved: number;
  errors: number;
  errorSample?: string;
  lat: Latencies;
  load: Load;
  bodyBytes: number;
};
export const fmtLoadResult = (r: LoadResult) =>
  `${fmtLat(r.lat)}, ${(r.achieved * 100).toFixed(1)}% achieved, ${r.errors} err${r.errorSample ? ` (${r.errorSample})` : ''}`;

const GRACE_MS = 1000;
const DRAIN_MS = 15_000;

/**
 * Constant arrival rate: request i is due at start + i/rate and is sent then, whatever the earlier
 * answers' latency (keep-alive sockets, as many as needed). Latency counts from the due time, so a
 * lagging generator cannot hide the server's queueing.
 */
export async function openLoop(opts: {
  url: string;
  rate: number;
  seconds: number;
  /** Headers of request i (e.g. a different user's token each). */
  headers?: (i: number) => Record<string, string>;
  serverPid?: number;
}): Promise<LoadResult> {
  const u = new URL(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  const total = Math.round(opts.rate * opts.seconds);
  const lat: number[] = [];
  let okInWindow = 0;
  let errors = 0;
  let errorSample: string | undefined;
  let bodyBytes = 0;
  let outstanding = 0;
  let wakeDrained: (() => void) | null = null;
  const start = now() + 50;
  const windowEnd = start + opts.seconds * 1000 + GRACE_MS;
  const fail = (why: string) => {
    errors++;
    errorSample ??= why;
  };
  const done = () => {
    outstanding--;
    if (outstanding === 0) wakeDrained?.();
  };
  const send = (i: number, due: number) => {
    outstanding++;
    let settled = false;
    const finish = (ok: boolean, why?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const t = now();
      if (ok) {
        lat.push(t - due);
        if (t <= windowEnd) okInWindow++;
      } else fail(why ?? 'error');
      done();
    };
    const req = http.request(
      { agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'GET', headers: opts.headers?.(i) ?? {} },
      (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => {
          const ok = !!res.statusCode && res.statusCode >= 200 && res.statusCode < 300;
          if (ok) bodyBytes = n;
          finish(ok, `HTTP ${res.statusCode}`);
        });
        res.on('error', (e) => finish(false, e.message));
      },
    );
    // No answer within 15 s of its due time (waiting for a socket included) is an error.
    const timer = setTimeout(() => {
      finish(false, 'timeout');
      req.destroy();
    }, Math.max(0, due + DRAIN_MS - now()));
    req.on('error', (e) => finish(false, e.message));
    req.end();
  };
  const watch = watchLoad(opts.serverPid);
  let load: Load | undefined;
  await new Promise<void>((resolve) => {
    let i = 0;
    const tick = () => {
      const t = now();
      while (i < total && start + (i * 1000) / opts.rate <= t) {
        send(i, start + (i * 1000) / opts.rate);
        i++;
      }
      if (i < total) setTimeout(tick, Math.max(0, start + (i * 1000) / opts.rate - now()));
      else resolve();
    };
    setTimeout(tick, Math.max(0, start - now()));
  });
  // The window's load is taken at its end (+ grace); stragglers are then waited for (up to 15 s).
  await new Promise((r) => setTimeout(r, Math.max(0, windowEnd - now())));
  load = watch.stop();
  if (outstanding > 0) {
    await new Promise<void>((r) => {
      wakeDrained = r;
      setTimeout(r, DRAIN_MS + 1000).unref();
    });
  }
  if (outstanding > 0) {
    errors += outstanding;
    errorSample ??= 'no answer';
  }
  agent.destroy();
  return { offered: total, achieved: total ? okInWindow / total : 0, errors, errorSample, lat: latencies(lat), load, bodyBytes };
}

/** Runs `fn` over `items` with at most `parallel` at once. */
export async function pool<T, R>(items: T[], parallel: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
    }),
  );
  return out;
}
