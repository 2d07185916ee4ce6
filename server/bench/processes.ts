// The bench rows of several server processes behind HAProxy (docs/decisions/0016-*): three real
// processes on one scratch PostgreSQL database with the shipped deploy/haproxy/haproxy.cfg in front
// (server/test/helpers/processes.ts, the tests' own helper), each figure beside one process's from
// the same run. Informational: no row passes or fails.
import { failover, openSessions, probe, startProcesses } from '../test/helpers/processes';
import { signIn } from '../test/helpers/process';
import { holdViewer, reconnectViewer, startViewerCluster, type HeldViewer } from '../test/helpers/viewer-failover';
import { decideAccel } from '../src/engine/accel';
import { fmtLoad, fmtLoadResult, fmtMs, latencies, openLoop, settle } from './measure';

type ProcessRow = { row: string; portal: string; raw: string; target: string; load: string };

/** Ports 19570… (the balancer, its stats, three processes). */
const FIRST_PORT = 19570;
const USERS = ['admin', 'manager', 'advanced', 'user', 'student01', 'student02', 'student03', 'student04'];

export async function rowsProcesses(opts: { adminUrl: string; windowS: number; say: (msg: string) => void; add: (row: ProcessRow) => void }) {
  const { say, add } = opts;
  say('postgres: three server processes behind HAProxy (and one of them directly)');
  const cluster = await startProcesses({ adminUrl: opts.adminUrl, n: 3, firstPort: FIRST_PORT });
  try {
    // One session per demo user (a second sign-in ends the first).
    const tokens = await Promise.all(USERS.map((u) => signIn(cluster.url, u)));
    // Each load starts once the processes are quiet again (a saturated one works through its backlog for a while).
    const settled = () => Promise.all(cluster.ids.map((_, i) => settle(cluster.process(i)!.child.pid!)));
    const load = async (url: string) => {
      await settled();
      return openLoop({ url: `${url}/api/v3/user`, rate: 200, seconds: opts.windowS, headers: (i) => ({ authorization: `Bearer ${tokens[i % tokens.length]}` }) });
    };
    say(`postgres: GET /api/v3/user 200/s for ${opts.windowS} s, to one process directly then through the balancer`);
    // Every process warmed first (its first requests compile the hot paths): the measured loads compare warm processes.
    await openLoop({ url: `${cluster.url}/api/v3/user`, rate: 100, seconds: 5, headers: (i) => ({ authorization: `Bearer ${tokens[i % tokens.length]}` }) });
    const one = await load(cluster.direct(0));
    const balanced = await load(cluster.url);
    add({
      row: `GET /api/v3/user 200/s × ${opts.windowS} s through HAProxy over 3 processes`,
      portal: `${fmtLoadResult(balanced)}; p99 ${(balanced.lat.p99 / one.lat.p99).toFixed(2)}× one process`,
      raw: `one process directly: ${fmtLoadResult(one)}`,
      target: '≤ 1.5× one process\'s p99 (informational)',
      load: fmtLoad(balanced.load),
    });

    say('postgres: failover: kill -9 of one process under 50 open sessions');
    const sessions = openSessions(tokens, 50);
    try {
      // The same sessions' answer with every process up: the baseline.
      const before = await Promise.all(sessions.clients.map(async (c) => {
        const t0 = Date.now();
        const r = await probe(cluster.url, c.token, 5_000, c.agent);
        if (r.status !== 200) throw new Error(`a session's answer before the kill: ${r.status}`);
        return Date.now() - t0;
      }));
      const { firstAnswers, leftOutMs } = await failover(cluster, 0, sessions.clients, 30_000);
      const after = latencies(firstAnswers.map((a) => a.ms));
      const failed = firstAnswers.filter((a) => a.ms === Infinity).length;
      add({
        row: 'failover: kill -9 of 1 of 3 processes → first good answer of each of 50 open sessions',
        portal: `p50 ${fmtMs(after.p50)} ms, p99 ${fmtMs(after.p99)} ms, ${failed} without an answer in 30 s; HAProxy held it down after ${leftOutMs} ms`,
        raw: `the same 50 sessions, all processes up: p50 ${fmtMs(latencies(before).p50)} ms, p99 ${fmtMs(latencies(before).p99)} ms`,
        target: 'p99 < 5 s (informational)',
        load: '—',
      });
    } finally {
      sessions.close();
    }
  } finally {
    await cluster.close();
  }
  await rowViewerReconnection(opts);
}

/** Viewers of the reconnection row (30 in the issue; BENCH_VIEWERS changes it, e.g. on a smaller machine), over three desktops. */
const VIEWERS = Number(process.env.BENCH_VIEWERS ?? 30);
const VIEWER_OWNERS = ['user', 'advanced', 'manager'];

/**
 * Viewer reconnection: VIEWERS raw RFB viewers open through the balancer on three desktops running on a
 * lab host (10.238.43.0/24, ports 19580…); the process holding most of them is killed (-9), and each
 * of its viewers reconnects as the web's page does (a fresh ticket, a new websocket, a short backoff):
 * the time from the kill to its first frame again, beside the same viewers' first open with every process up.
 */
async function rowViewerReconnection(opts: { adminUrl: string; say: (msg: string) => void; add: (row: ProcessRow) => void }) {
  const { say, add } = opts;
  say(`postgres: viewer reconnection: ${VIEWERS} viewers through the balancer on ${VIEWER_OWNERS.length} desktops of a lab host, then kill -9 of a process`);
  const vc = await startViewerCluster({
    adminUrl: opts.adminUrl,
    firstPort: FIRST_PORT + 10,
    prefix: 'vdi_bench_viewers',
    subnet: '10.238.43.0/24',
    tag: `bv${Math.floor(Math.random() * 0xffff).toString(36)}`.slice(0, 6),
    owners: VIEWER_OWNERS,
    kvm: decideAccel('auto').accel === 'kvm',
    timeoutMs: 180_000,
  });
  const viewers: HeldViewer[] = [];
  try {
    const of = (i: number) => vc.desktops[i % vc.desktops.length]!;
    // The baseline: the same viewers' first open (ticket, websocket, first frame), every process up. A viewer
    // closed before its first frame (a guest's VNC slow to greet at the start) opens again, as the page's would: counted.
    let reopened = 0;
    const opened = await Promise.all(Array.from({ length: VIEWERS }, async (_, i) => {
      const t0 = performance.now();
      for (;;) {
        try {
          viewers[i] = await holdViewer(vc.cluster.url, of(i).token, of(i).id, 60_000);
          return performance.now() - t0;
        } catch (err) {
          if (performance.now() - t0 > 120_000) throw err;
          reopened++;
        }
      }
    }));
    const gone = viewers.map((v) => {
      const flag = { ended: false };
      void v.ended.then(() => (flag.ended = true));
      return flag;
    });
    const held = vc.cluster.ids.map((id) => viewers.filter((v) => v.server === id).length);
    const victim = held.indexOf(Math.max(...held));
    const dropped = viewers.map((v, i) => ({ v, i })).filter(({ v }) => v.server === vc.cluster.ids[victim]);
    const t0 = performance.now();
    await vc.cluster.kill(victim);
    const again = await Promise.all(dropped.map(async ({ v, i }) => {
      await v.ended;
      try {
        viewers[i] = await reconnectViewer(vc.cluster.url, of(i).token, of(i).id, 30_000);
        return performance.now() - t0;
      } catch {
        return Infinity;
      }
    }));
    const stillOpen = gone.filter((g, i) => !g.ended && !dropped.some((d) => d.i === i)).length;
    const after = latencies(again);
    const first = latencies(opened);
    add({
      row: `viewer reconnection: kill -9 of 1 of 3 processes under ${VIEWERS} open viewers → each dropped viewer's first frame again`,
      portal: `${dropped.length} dropped (held by ${vc.cluster.ids[victim]}; held ${held.join('/')}): p50 ${fmtMs(after.p50)} ms, p99 ${fmtMs(after.p99)} ms, ${again.filter((ms) => ms === Infinity).length} not back in 30 s; ${stillOpen} on the other processes stayed open`,
      raw: `the same ${VIEWERS} viewers' first open at once, all processes up: p50 ${fmtMs(first.p50)} ms, p99 ${fmtMs(first.p99)} ms (${reopened} reopened)`,
      target: 'p99 < 10 s (informational)',
      load: '—',
    });
  } finally {
    for (const v of viewers) v?.close();
    await vc.close();
  }
}
