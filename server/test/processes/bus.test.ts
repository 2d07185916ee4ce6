import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Socket } from 'socket.io-client';
import { schema } from '../../src/db';
import { startPeerInstances, type PeerInstance } from '../helpers/peer-instances';
import { call, loginToken } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

// Two server processes on one PostgreSQL database, as two app instances in this test process (each
// with its own pool, engine, socket.io server and peers): live events, session endings and settings
// made on A reach B (socket/peers.ts, docs/decisions/0015-socket-adapter.md).

type Instance = PeerInstance;
let a: Instance;
let b: Instance;
let peers: Awaited<ReturnType<typeof startPeerInstances>> | undefined;
const sockets: Socket[] = [];

beforeAll(async () => {
  peers = await startPeerInstances({ tmpPrefix: 'vt-', config: { SESSION_TOKEN_SECONDS: String(scaled(300)) } });
  ({ a, b } = peers);
}, scaled(120_000));

afterAll(async () => {
  for (const s of sockets) s.close();
  await peers?.close();
});

const api = (i: Instance, path: string, opts: { token?: string; method?: string; body?: unknown } = {}) => call(i.server, `/api/v3${path}`, opts);
const listen = async (i: Instance, token: string) => {
  const s = await socketOf(i.server, token);
  sockets.push(s);
  return s;
};
const userId = async (username: string) =>
  (await a.database.db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.username, username)))[0]!.id;
/** The reason the socket was disconnected with, or a failure after 10 s (a quiet machine's bound). */
const disconnected = (s: Socket) =>
  new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the socket was not disconnected')), scaled(10_000));
    s.once('disconnect', (reason) => {
      clearTimeout(timer);
      resolve(reason);
    });
  });

describe('two server processes on one PostgreSQL', () => {
  it("a deployment made visible on A reaches a student's socket on B", async () => {
    const teacher = await loginToken(a.server, 'advanced');
    const [template] = await a.database.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
    const created = await api(a, '/deployments', {
      token: teacher,
      body: { name: 'Cross-process lab', template_id: template!.id, desktop_name: 'Lab desktop', visible: false, allowed: { groups: ['default-students-1a'], users: false } },
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    await until('creation job done', async () => {
      const jobs = await a.database.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
      return jobs.length > 0 && jobs.every((j) => j.status !== 'running' && j.status !== 'queued');
    });
    const student = await loginToken(b.server, 'student01');
    const events = recordEvents(await listen(b, student), ['desktop_add']);
    expect((await api(a, `/deployments/visible/${id}`, { token: teacher, method: 'PUT', body: { stop_started_domains: false } })).status).toBe(200);
    const studentId = await userId('student01');
    const mine = (await a.database.db.select().from(schema.domains).where(eq(schema.domains.tag, id))).find((d) => d.userId === studentId)!;
    await until('desktop_add on B', async () => events.some((e) => e.payload.id === mine.id), 10_000);
  });

  it('events published on A reach B in their order, equal ones as often as sent', async () => {
    const token = await loginToken(b.server, 'user');
    const events = recordEvents(await listen(b, token), ['desktop_delete']);
    const id = await userId('user');
    const sent = [...Array.from({ length: 50 }, (_, i) => `d-${i}`), 'same', 'same'];
    for (const d of sent) a.server.ctx.bus.toUser(id, 'desktop_delete', { id: d });
    await until('every event on B', async () => events.length >= sent.length, 10_000);
    expect(events.map((e) => e.payload.id)).toEqual(sent);
  });

  it('one delivery to several people on A reaches each of their sockets on B once, and nobody else', async () => {
    const [uma, sara, pau] = await Promise.all(['user', 'student01', 'manager'].map((u) => loginToken(b.server, u)));
    const got = [await listen(b, uma), await listen(b, uma), await listen(b, sara), await listen(b, pau)].map((s) => recordEvents(s, ['desktop_pool_changed']));
    a.server.ctx.bus.toUsers([await userId('user'), await userId('student01')], 'desktop_pool_changed', { pool_id: 'several' });
    // Then a marker to everyone: once it is on a socket, anything sent before it is too (one socket keeps the order).
    a.server.ctx.bus.toUsers([await userId('user'), await userId('student01'), await userId('manager')], 'desktop_pool_changed', { pool_id: 'marker' });
    await until('the marker on every socket', async () => got.every((g) => g.some((e) => e.payload.pool_id === 'marker')), 10_000);
    expect(got.map((g) => g.filter((e) => e.payload.pool_id === 'several').length)).toEqual([1, 1, 1, 0]);
  });

  it('a logout on A disconnects the socket on B, and B refuses the token', async () => {
    const token = await loginToken(b.server, 'student02');
    const socket = await listen(b, token);
    const logout = recordEvents(socket, ['logout']);
    const gone = disconnected(socket);
    expect((await call(a.server, '/authentication/logout', { token, method: 'POST' })).status).toBeLessThan(300);
    expect(await gone).toBe('io server disconnect');
    expect(logout.map((e) => e.payload)).toEqual([{ reason: 'session_ended' }]);
    expect((await api(b, '/user', { token })).status).toBe(401);
  });

  it('a user disabled on A loses the socket on B and is refused by B', async () => {
    const admin = await loginToken(a.server, 'admin');
    const token = await loginToken(b.server, 'student03');
    const socket = await listen(b, token);
    const gone = disconnected(socket);
    const id = await userId('student03');
    expect((await api(a, `/admin/user/${id}/active`, { token: admin, method: 'PUT', body: { active: false } })).status).toBe(200);
    expect(await gone).toBe('io server disconnect');
    expect((await api(b, '/user', { token })).status).toBe(401);
    await api(a, `/admin/user/${id}/active`, { token: admin, method: 'PUT', body: { active: true } });
  });

  it('the sessions setting changed on A applies to the next sign-in on B', async () => {
    const admin = await loginToken(a.server, 'admin');
    const lifeOf = async () => {
      const token = await loginToken(b.server, 'student04');
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number; iat: number };
      return claims.exp - claims.iat;
    };
    expect(await lifeOf()).toBe(b.server.config.session.tokenSeconds);
    expect((await api(a, '/admin/settings/sessions', { token: admin, method: 'PUT', body: { token_seconds: 120 } })).status).toBe(200);
    // Applied on A before the answer; B hears it through the database (no wait for a restart or a cache's end).
    await until('B applies the setting', async () => (await lifeOf()) === 120, 5_000);
    await api(a, '/admin/settings/sessions', { token: admin, method: 'PUT', body: { token_seconds: null } });
    await until('B applies the reset', async () => (await lifeOf()) === b.server.config.session.tokenSeconds, 5_000);
  });

  it('a hypervisor stored through A is connected on B too, and one removed through A is let go on B', async () => {
    const admin = await loginToken(a.server, 'admin');
    // Added as the console's route stores it (a host nobody answers at: it stays offline, with its reason).
    const id = 'i26-peer-host';
    await a.server.ctx.db.insert(schema.hypervisors).values({ id, name: 'peer host', uri: 'qemu+ssh://vdi@127.0.0.1:1/system', hostKeyFingerprint: 'SHA256:none' });
    await a.server.ctx.peers.publish('hypervisors', { added: id });
    await until('B holds the host', async () => (await b.engine.hosts.status(id)) !== null, 5_000);
    expect((await b.engine.hosts.status(id))?.online).toBe(false);
    expect((await api(a, `/admin/hypervisors/${id}`, { token: admin, method: 'DELETE' })).status).toBe(204);
    await until('B lets it go', async () => (await b.engine.hosts.status(id)) === null, 5_000);
    expect(await a.engine.hosts.status(id)).toBeNull();
  });
});
