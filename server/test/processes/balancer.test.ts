// Three real server processes on one PostgreSQL behind HAProxy (the shipped deploy/haproxy/haproxy.cfg):
// people use the API without knowing which process answers; a process killed with -9 is left out within
// seconds and open sessions go on; a rolling restart under a steady load fails no request.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, expect } from 'vitest';
import { SOCKET_NAMESPACE, SOCKET_PATH } from '@vdi/contracts';
import { haproxyConfig, startHaproxy } from '../../../scripts/lib/haproxy.mjs';
import { describeIf, firstMissing, itIf, missingPrograms } from '../helpers/can-run';
import { failover, openSessions, probe, startProcesses, type ProcessCluster } from '../helpers/processes';
import { api, signIn } from '../helpers/process';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const adminUrl = process.env.TEST_DATABASE_URL;
const missing = firstMissing(adminUrl ? undefined : 'needs TEST_DATABASE_URL', missingPrograms('haproxy'));
const describe = describeIf(missing);
const it = itIf(missing);

const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.max(0, Math.ceil(ms.length * 0.99) - 1)]!;

describe('three server processes behind HAProxy', () => {
  let cluster: ProcessCluster;
  let admin: string;
  /** One session per demo user (a second sign-in ends the first). */
  let tokens: string[];

  beforeAll(async () => {
    // The three start at the same moment on a fresh database: one migrates and seeds, the others wait.
    cluster = await startProcesses({ adminUrl: adminUrl!, n: 3, firstPort: 19560 });
    const users = ['admin', 'manager', 'advanced', 'user', 'student01', 'student02', 'student03', 'student04'];
    tokens = await Promise.all(users.map((u) => signIn(cluster.url, u)));
    admin = tokens[0]!;
  }, scaled(120_000));

  afterAll(async () => {
    await cluster?.close();
  }, scaled(30_000));

  it('signs in and uses the API through the balancer, answered by more than one process', async () => {
    const desktops = await api<unknown[]>(cluster.url, admin, '/user/desktops');
    expect(desktops.status).toBe(200);
    const templates = await api<{ id: string }[]>(cluster.url, admin, '/user/templates');
    expect(templates.status).toBe(200);
    const created = await api<{ id: string }>(cluster.url, admin, '/persistent_desktop', { body: { name: 'Through the balancer', template_id: templates.body[0]!.id } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // The new desktop is listed whichever process answers.
    for (let i = 0; i < 3; i++) {
      const again = await api<{ id: string }[]>(cluster.url, admin, '/user/desktops');
      expect(again.body.map((d) => d.id)).toContain(created.body.id);
    }
    const servers = new Set<string | null>();
    for (let i = 0; i < 12; i++) servers.add((await probe(cluster.url, admin)).server);
    expect(servers.size, [...servers].join(', ')).toBeGreaterThan(1);
    expect([...servers].every((s) => s && cluster.ids.includes(s))).toBe(true);
    // The live socket as the web client opens it (websocket transport only: no stickiness needed) goes through the upgrade.
    const socket = io(`${cluster.url}${SOCKET_NAMESPACE}`, { path: SOCKET_PATH, transports: ['websocket'], auth: { jwt: admin }, reconnection: false });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('connect_error', reject);
      });
    } finally {
      socket.close();
    }
  }, scaled(30_000));

  it("what the balancer answers itself when no process can (503) is the portal's error body, not HAProxy's page", async () => {
    // The shipped configuration in front of a port nobody listens on.
    const dir = mkdtempSync(join(tmpdir(), 'i26procs-nobody-'));
    const lone = startHaproxy({
      dir,
      config: haproxyConfig({ bind: '127.0.0.1:19598', stats: '127.0.0.1:19599', servers: [{ name: 'p1', address: '127.0.0.1:19597' }] }),
    });
    try {
      const res = await until('HAProxy answers', async () => fetch('http://127.0.0.1:19598/api/v3/user').catch(() => undefined), 10_000);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toMatchObject({ error: 'service_unavailable', description_code: 'server_stopping' });
    } finally {
      await lone.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kill -9 of a process: left out within seconds, 50 open sessions answered, and it rejoins when started again', async () => {
    // 50 open sessions: clients with a connection of their own each (the demo users' sessions, shared).
    const sessions = openSessions(tokens, 50);
    // Every session answered before the kill.
    expect((await Promise.all(sessions.clients.map((c) => probe(cluster.url, c.token, 5_000, c.agent)))).map((r) => r.status)).toEqual(sessions.clients.map(() => 200));
    const { firstAnswers, leftOutMs } = await failover(cluster, 0, sessions.clients, scaled(20_000));
    sessions.close();
    expect(firstAnswers.every((a) => a.server !== cluster.ids[0])).toBe(true);
    expect(p99(firstAnswers.map((a) => a.ms))).toBeLessThan(scaled(5_000));
    expect(leftOutMs).toBeLessThan(scaled(5_000));

    await cluster.start(0);
    await cluster.untilBalancer(0, 'UP');
    // It takes requests again.
    await until('the restarted process to answer through the balancer', async () => (await probe(cluster.url, admin)).server === cluster.ids[0], 15_000);
  }, scaled(90_000));

  it('a rolling restart (SIGTERM, start, next) under 20 requests/s fails no request', async () => {
    const results: number[] = [];
    let loading = true;
    const load = (async () => {
      const inFlight: Promise<void>[] = [];
      while (loading) {
        inFlight.push(probe(cluster.url, admin, 10_000).then((r) => void results.push(r.status)));
        await new Promise((r) => setTimeout(r, 50));
      }
      await Promise.all(inFlight);
    })();
    try {
      for (let i = 0; i < cluster.ids.length; i++) {
        const code = await cluster.stop(i);
        expect(code, `${cluster.ids[i]} stopped gracefully`).toBe(0);
        await cluster.start(i);
        await cluster.untilBalancer(i, 'UP');
      }
    } finally {
      loading = false;
      await load;
    }
    const failed = results.filter((s) => s !== 200);
    expect(results.length).toBeGreaterThan(100);
    expect(failed, `${failed.length} of ${results.length} failed: ${[...new Set(failed)].join(', ')}`).toEqual([]);
  }, scaled(120_000));
});
