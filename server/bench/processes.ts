// The bench rows of several server processes behind HAProxy (docs/decisions/0016-*): three real
// processes on one scratch PostgreSQL database with the shipped deploy/haproxy/haproxy.cfg in front
// (server/test/helpers/processes.ts, the tests' own helper), each figure beside one process's from
// the same run. Informational: no row passes or fails.
import { failover, openSessions, probe, startProcesses } from '../test/helpers/processes';
import { signIn } from '../test/helpers/process';
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
}
