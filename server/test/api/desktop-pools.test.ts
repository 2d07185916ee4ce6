import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { ZPool, ZPoolTakeAnswer, ZUserPool, type TPool, type TPoolTakeAnswer } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';

// Desktop pools (issue 30): prepared desktops of a template, given at one click, taken back, a queue when none is left.
// Real guests (the demo template) on this machine's QEMU.

let server: TestServer;
let advanced: string; // a teacher: makes the pool
let sara: string; // student01, Students 1A
let pau: string; // student02, Students 1A
let uma: string; // user, Students 1A
let nora: string; // student03, Students 1B: not in the pool's group
let admin: string;
let template: string;

beforeAll(async () => {
  // Booted 2 s after the machine started (the demo guest's own boot is about that on KVM; the default is 30 s).
  server = await startTestServer({ env: { POOL_BOOT_SECONDS: '2' } });
  [advanced, sara, pau, uma, nora, admin] = await Promise.all(['advanced', 'student01', 'student02', 'user', 'student03', 'admin'].map((u) => loginToken(server, u)));
  const [t] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.name, 'Demo Linux')));
  template = (t ?? (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template')))[0])!.id;
}, scaled(120_000));
afterAll(async () => server?.close(), scaled(120_000));

const json = async <T>(r: Response, parse: (v: unknown) => T): Promise<T> => {
  expect(r.status, await r.clone().text()).toBe(200);
  return parse(await r.json());
};
const codeOf = async (r: Response) => `${r.status} ${((await r.json()) as { description_code?: string }).description_code ?? ''}`;
const poolOf = async (id: string): Promise<TPool> => json(await call(server, `/api/v3/desktop-pools/${id}`, { token: advanced }), (v) => ZPool.parse(v));
const take = async (token: string, id: string): Promise<TPoolTakeAnswer> => json(await call(server, `/api/v3/desktop-pools/${id}/take`, { token, method: 'POST' }), (v) => ZPoolTakeAnswer.parse(v));
const myPools = async (token: string) => json(await call(server, '/api/v3/user/desktop-pools', { token }), (v) => ZUserPool.array().parse(v));

describe('a desktop pool', () => {
  let pool: string;

  it('refuses a size the hypervisors cannot hold, with the numbers', async () => {
    const r = await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'Too big', template_id: template, allowed: { groups: ['default-students-1a'] }, max_desktops: 500, prepared: 1 } });
    const body = (await r.clone().json()) as { description_code: string; params?: { fits?: number } };
    expect(await codeOf(r)).toBe('409 desktop_pool_too_large');
    expect(body.params?.fits).toBeLessThan(500);
  });

  it('keeps its prepared desktops booted, in nobody’s list', async () => {
    const made = await json(
      await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'Class pool', template_id: template, allowed: { groups: ['default-students-1a'] }, max_desktops: 3, prepared: 2 } }),
      (v) => ZPool.parse(v),
    );
    pool = made.id;
    const ready = await until('two prepared desktops', async () => ((await poolOf(pool)).counts.prepared === 2 ? poolOf(pool) : undefined), 90_000);
    expect(ready.counts).toMatchObject({ prepared: 2, in_use: 0, waiting: 0, target: 2 });
    expect(ready.counts.by_host.reduce((n, h) => n + h.prepared, 0)).toBe(2);
    const advList = (await (await call(server, '/api/v3/user/desktops', { token: advanced })).json()) as { name: string }[];
    expect(advList.map((d) => d.name)).not.toContain('Class pool');
    expect((await myPools(sara)).find((x) => x.id === pool)).toMatchObject({ state: 'ready', prepared: 2, desktop_id: null });
    expect((await myPools(nora)).find((x) => x.id === pool)).toBeUndefined();
  });

  it('gives one at a click: running, the person’s own, its screen opens; the pool prepares the next', async () => {
    const got = await take(sara, pool);
    expect(got.kind).toBe('desktop');
    const id = (got as { desktop_id: string }).desktop_id;
    const list = (await (await call(server, '/api/v3/user/desktops', { token: sara })).json()) as { id: string; state: string }[];
    expect(list.find((d) => d.id === id)?.state).toBe('Started');
    expect((await call(server, `/api/v3/desktop/${id}/viewer/browser-vnc`, { token: sara })).status).toBe(200);
    expect((await call(server, `/api/v3/desktop/${id}/viewer/browser-vnc`, { token: pau })).status).toBe(403);
    // Again: the same desktop, not a second one.
    expect(await take(sara, pool)).toEqual({ kind: 'desktop', desktop_id: id });
    expect((await myPools(sara)).find((x) => x.id === pool)).toMatchObject({ state: 'mine', desktop_id: id });
    await until('the pool back at two prepared', async () => {
      const c = (await poolOf(pool)).counts;
      return c.prepared === 2 && c.in_use === 1;
    }, 90_000);
    // Not counted as the person's own desktop (the pool holds it).
    const quota = (await (await call(server, '/api/v3/user', { token: sara })).json()) as { used: { desktops: number; running: number } };
    expect(quota.used.running).toBe(0);
    expect(await codeOf(await call(server, `/api/v3/desktop-pools/${pool}/take`, { token: nora, method: 'POST' }))).toBe('404 desktop_pool_not_found');
  });

  it('two people on the last prepared ones at once: each gets their own; the next waits in the queue', async () => {
    const [a, b] = await Promise.all([take(pau, pool), take(uma, pool)]);
    expect(a.kind).toBe('desktop');
    expect(b.kind).toBe('desktop');
    expect((a as { desktop_id: string }).desktop_id).not.toBe((b as { desktop_id: string }).desktop_id);
    // Three given, the pool full: the admin (who may use any pool) waits.
    const queued = await take(admin, pool);
    expect(queued).toMatchObject({ kind: 'queued', place: 1 });
    expect((queued as { wait_seconds: number }).wait_seconds).toBeGreaterThan(0);
    expect((await poolOf(pool)).counts).toMatchObject({ in_use: 3, waiting: 1, prepared: 0 });
  });

  it('a desktop given back goes away with its disk, and a fresh one goes to the first waiting', async () => {
    const sock = await socketOf(server, admin);
    const events = recordEvents(sock, ['desktop_pool_given']);
    try {
      const mine = (await myPools(sara)).find((x) => x.id === pool)!.desktop_id!;
      // Shut down in the guest (or stopped): a non-persistent pool's desktop goes back to the template's state.
      expect((await call(server, `/api/v3/desktop/stop/${mine}`, { token: sara })).status).toBe(200);
      await until('the desktop gone', async () => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, mine))).length === 0, 60_000);
      const given = await until('a desktop given to the admin', async () => events.find((e) => e.event === 'desktop_pool_given')?.payload, 90_000);
      expect(given.pool_id).toBe(pool);
      expect(given.desktop_id).not.toBe(mine);
      expect(await take(admin, pool)).toEqual({ kind: 'desktop', desktop_id: given.desktop_id });
      expect((await poolOf(pool)).counts.waiting).toBe(0);
    } finally {
      sock.close();
    }
  });

  it('deleted: its prepared desktops go, given ones stay with their people', async () => {
    const before = (await myPools(pau)).find((x) => x.id === pool)!.desktop_id!;
    expect((await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced, method: 'DELETE' })).status).toBe(200);
    expect(await server.ctx.db.$count(schema.domains, eq(schema.domains.poolId, pool))).toBe(0);
    const [kept] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, before));
    expect(kept?.poolId).toBeNull();
  });
});
