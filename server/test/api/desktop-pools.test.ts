import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, isNull } from 'drizzle-orm';
import { formatBookingDate, ZPool, ZPoolTakeAnswer, ZUserPool, type TPool, type TPoolTake, type TPoolTakeAnswer } from '@vdi/contracts';
import { schema } from '../../src/db';
import { createDesktopFromTemplate } from '../../src/modules/desktops/create';
import { createPoolEvents } from '../../src/modules/desktop-pools/live';
import { call, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';
import { openViewerSession } from '../helpers/viewer-session';

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
  // Booted 2 s after the machine started (the demo guest's own boot is about that on KVM; the default is 30 s);
  // a stop forces the machine off after 5 s (the demo guest may not answer the ACPI button that early).
  server = await startTestServer({ env: { POOL_BOOT_SECONDS: '2', SHUTDOWN_TIMEOUT_SECONDS: '5' } });
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
const take = async (token: string, id: string, body?: TPoolTake): Promise<TPoolTakeAnswer> =>
  json(await call(server, `/api/v3/desktop-pools/${id}/take`, { token, method: 'POST', ...(body && { body }) }), (v) => ZPoolTakeAnswer.parse(v));
const myPools = async (token: string) => json(await call(server, '/api/v3/user/desktop-pools', { token }), (v) => ZUserPool.array().parse(v));

describe('a desktop pool', () => {
  let pool: string;

  it('refuses a size the hypervisors cannot hold, with the numbers', async () => {
    const r = await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'Too big', template_id: template, allowed: { groups: ['default-students-1a'] }, max_desktops: 500, prepared: 1 } });
    const body = (await r.clone().json()) as { description_code: string; params?: { fits?: number } };
    expect(await codeOf(r)).toBe('409 desktop_pool_too_large');
    expect(body.params?.fits).toBeLessThan(500);
    // A disabled pool holds nothing: kept as it is, its size checked when it is enabled.
    const off = await json(
      await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'Too big, off', template_id: template, allowed: { groups: ['default-students-1a'] }, max_desktops: 500, prepared: 1, enabled: false } }),
      (v) => ZPool.parse(v),
    );
    expect(await codeOf(await call(server, `/api/v3/desktop-pools/${off.id}`, { token: advanced, method: 'PUT', body: { enabled: true } }))).toBe('409 desktop_pool_too_large');
    expect((await call(server, `/api/v3/desktop-pools/${off.id}`, { token: advanced, method: 'DELETE' })).status).toBe(200);
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
    // Their desktops screens are open (a live socket each).
    const socks = await Promise.all([socketOf(server, pau), socketOf(server, uma)]);
    const told = socks.map((x) => recordEvents(x, ['desktop_add']));
    // As the pool's card asks: the browser viewer's ticket with the desktop (one the pool allows; RDP it does not).
    const [a, b] = await Promise.all([take(pau, pool, { viewer: 'browser-vnc' }), take(uma, pool, { viewer: 'browser-rdp' })]);
    expect(a.kind).toBe('desktop');
    expect(b.kind).toBe('desktop');
    expect((a as { desktop_id: string }).desktop_id).not.toBe((b as { desktop_id: string }).desktop_id);
    // Each list hears of its own desktop, running, and of nobody else's (givings close together are announced as one).
    await until('both lists told', async () => told.every((t) => t.length > 0), 10_000);
    expect(told.map((t) => t.map((e) => [e.payload.id, e.payload.state]))).toEqual([
      [[(a as { desktop_id: string }).desktop_id, 'Started']],
      [[(b as { desktop_id: string }).desktop_id, 'Started']],
    ]);
    for (const x of socks) x.close();
    const ticket = a.kind === 'desktop' && a.viewer ? (JSON.parse(Buffer.from(a.viewer.cookie, 'base64url').toString()) as { token: string; password: string }) : undefined;
    expect(ticket, 'the take brings the ticket').toBeDefined();
    expect((await openViewerSession(server.url, ticket!, { auth: true })).authOk).toBe(true);
    expect(b.kind === 'desktop' && b.viewer).toBeFalsy();
    // The pool allows the browser's VNC only: its desktops offer no other viewer, and one asked anyway is refused.
    const mine = (b as { desktop_id: string }).desktop_id;
    const listed = ((await (await call(server, '/api/v3/user/desktops', { token: uma })).json()) as { id: string; viewers: string[] }[]).find((d) => d.id === mine);
    expect(listed?.viewers).toEqual(['browser-vnc']);
    expect(await codeOf(await call(server, `/api/v3/desktop/${mine}/viewer/file-spice`, { token: uma }))).toBe('404 unable_to_get_viewer');
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

describe('a persistent pool: chosen for sign-in, a crashed prepared desktop, a server restart', () => {
  let pool: string;
  const free = async () => server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.poolId, pool), isNull(schema.domains.poolAssignedAt)));
  const signInOpens = async (token: string) => ((await (await call(server, '/api/v3/user/sign-in-desktop', { token })).json()) as { opens: unknown }).opens;

  it('a person chooses the pool for their sign-in; one it is not shared with cannot', async () => {
    const made = await json(
      await call(server, '/api/v3/desktop-pools', {
        token: advanced, method: 'POST',
        body: { name: 'Own desktops', template_id: template, allowed: { groups: ['default-students-1a'] }, max_desktops: 3, prepared: 1, persistent: true },
      }),
      (v) => ZPool.parse(v),
    );
    pool = made.id;
    await until('one prepared desktop', async () => (await poolOf(pool)).counts.prepared === 1, 90_000);
    const chosen = await call(server, '/api/v3/user/sign-in-desktop', { token: sara, method: 'PUT', body: { open: { pool_id: pool } } });
    expect(chosen.status, await chosen.clone().text()).toBe(200);
    expect(((await chosen.json()) as { open: unknown; opens: unknown })).toMatchObject({ open: { pool_id: pool }, opens: { pool_id: pool, desktop_id: null, name: 'Own desktops', viewer: 'browser-vnc' } });
    expect(await codeOf(await call(server, '/api/v3/user/sign-in-desktop', { token: nora, method: 'PUT', body: { open: { pool_id: pool } } }))).toBe('400 sign_in_desktop_invalid');
  });

  it('a prepared desktop whose machine dies is never given: the pool prepares it again', async () => {
    const [prepared] = await free();
    const pid = Number(readFileSync(join(server.config.dataDir, 'run', prepared!.id, 'qemu.pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await until('the dead machine seen', async () => (await poolOf(pool)).counts.prepared === 0, 60_000);
    // A person asking now waits (or, if the fresh one is ready already, gets it): never the dead one.
    await take(pau, pool);
    const given = await until('a fresh prepared desktop given to the person', async () => {
      const mine = (await myPools(pau)).find((x) => x.id === pool);
      return mine?.state === 'mine' ? mine.desktop_id : undefined;
    }, 120_000);
    expect(given).not.toBe(prepared!.id);
    expect(await server.ctx.db.$count(schema.domains, eq(schema.domains.id, prepared!.id))).toBe(0);
    const list = (await (await call(server, '/api/v3/user/desktops', { token: pau })).json()) as { id: string; state: string }[];
    expect(list.find((d) => d.id === given)?.state).toBe('Started');
    await until('the pool prepared again', async () => (await poolOf(pool)).counts.prepared === 1, 120_000);
  });

  it('after a server restart: the prepared and the given desktops run on, adopted; the assignment and the sign-in choice hold', async () => {
    const got = await take(sara, pool);
    expect(got.kind).toBe('desktop');
    const mine = (got as { desktop_id: string }).desktop_id;
    await until('the pool prepared again', async () => (await poolOf(pool)).counts.prepared === 1, 120_000);
    const before = (await free()).map((r) => r.id);
    expect(before).toHaveLength(1);
    await server.restart();
    const after = await until('the pool counted after the restart', async () => {
      const c = (await poolOf(pool)).counts;
      return c.in_use === 2 && c.prepared === 1 ? c : undefined;
    }, 60_000);
    expect(after).toMatchObject({ in_use: 2, prepared: 1, preparing: 0 });
    // The same machines: adopted, not made again.
    expect((await free()).map((r) => r.id)).toEqual(before);
    const list = (await (await call(server, '/api/v3/user/desktops', { token: sara })).json()) as { id: string; state: string }[];
    expect(list.find((d) => d.id === mine)?.state).toBe('Started');
    expect(await take(sara, pool)).toEqual({ kind: 'desktop', desktop_id: mine });
    expect(await signInOpens(sara)).toMatchObject({ pool_id: pool, desktop_id: mine });
  });

  it('a persistent desktop stopped stays its person’s, and taking it again starts the same one', async () => {
    const mine = (await myPools(sara)).find((x) => x.id === pool)!.desktop_id!;
    expect((await call(server, `/api/v3/desktop/stop/${mine}`, { token: sara })).status).toBe(200);
    await until('stopped and kept', async () => (await poolOf(pool)).counts.kept === 1, 90_000);
    expect(await take(sara, pool)).toEqual({ kind: 'desktop', desktop_id: mine });
    await until('running again', async () => {
      const list = (await (await call(server, '/api/v3/user/desktops', { token: sara })).json()) as { id: string; state: string }[];
      return list.find((d) => d.id === mine)?.state === 'Started';
    }, 90_000);
    expect((await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced, method: 'DELETE' })).status).toBe(200);
  });
});

describe('a pool of a GPU template', () => {
  it('prepares nothing outside its bookings, and prepares within one; its bookings go with it', async () => {
    const db = server.ctx.db;
    // A GPU template: the demo template's disk with the NVIDIA A40 2Q profile the demo plan offers now.
    const [demo] = await db.select().from(schema.domains).where(eq(schema.domains.id, template));
    const gpuTemplate = randomUUID();
    await db.insert(schema.domains).values({ ...demo!, id: gpuTemplate, name: 'GPU template for a pool', hardware: { ...demo!.hardware, reservables: { ...demo!.hardware.reservables, vgpus: ['NVIDIA-A40-2Q'] } } });
    const disks = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, template));
    await db.insert(schema.domainDisks).values(disks.map((x) => ({ ...x, domainId: gpuTemplate })));

    const made = await json(
      await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'GPU lesson', template_id: gpuTemplate, allowed: { groups: ['default-students-1a'] }, max_desktops: 1, prepared: 1 } }),
      (v) => ZPool.parse(v),
    );
    expect(made.stalled).toBe('not_booked');
    await server.app.desktopPools.kick(made.id);
    expect(await db.$count(schema.domains, eq(schema.domains.poolId, made.id))).toBe(0);
    expect(await codeOf(await call(server, `/api/v3/desktop-pools/${made.id}/take`, { token: sara, method: 'POST' }))).toBe('409 desktop_pool_unavailable');

    // The teacher books the pool's GPUs for the lesson, starting now: the pool prepares.
    const now = new Date();
    const booked = await call(server, '/api/v3/booking/event', {
      token: advanced,
      body: { element_id: made.id, element_type: 'pool', start: formatBookingDate(now), end: formatBookingDate(new Date(now.getTime() + 60 * 60_000)), now: true },
    });
    expect(booked.status, await booked.clone().text()).toBe(200);
    expect((await poolOf(made.id)).stalled).toBeNull();
    await server.app.desktopPools.kick(made.id);
    await until('the GPU desktop prepared', async () => (await poolOf(made.id)).counts.prepared === 1, 120_000);
    expect((await take(sara, made.id)).kind).toBe('desktop');

    expect((await call(server, `/api/v3/desktop-pools/${made.id}`, { token: advanced, method: 'DELETE' })).status).toBe(200);
    expect(await db.$count(schema.bookings, eq(schema.bookings.itemId, made.id))).toBe(0);
  });
});

describe('a deleted pool', () => {
  it('leaves no desktop behind that a pass in another process was making', async () => {
    const db = server.ctx.db;
    const [demo] = await db.select().from(schema.domains).where(eq(schema.domains.id, template));
    const [owner] = await db.select().from(schema.users).where(eq(schema.users.username, 'advanced'));
    const orphan = await createDesktopFromTemplate(db, server.ctx.engine, demo!, owner!, { name: 'Of a gone pool', persistent: false, status: 'Stopped', poolId: randomUUID() });
    await server.app.desktopPools.sweepOrphans();
    expect(await db.$count(schema.domains, eq(schema.domains.id, orphan.id))).toBe(0);
  });
});

describe('the pools live: desktop_pool_changed', () => {
  type Got = { pool_id: string; at: number };

  it('tells the owner, the admins, its organisation’s managers and the people it is shared with as it prepares a desktop; nobody else', async () => {
    const manager = await loginToken(server, 'manager');
    const researcher = (await login(server, 'researcher', undefined, 'lab')).token!; // an advanced user of another organisation
    const who = { advanced, admin, manager, sara, nora, researcher };
    const socks = Object.fromEntries(await Promise.all(Object.entries(who).map(async ([k, t]) => [k, await socketOf(server, t)] as const)));
    const got: Record<string, Got[]> = {};
    for (const [k, sock] of Object.entries(socks)) {
      got[k] = [];
      sock.on('desktop_pool_changed', (raw: string) => got[k]!.push({ ...(JSON.parse(raw) as { pool_id: string }), at: Date.now() }));
    }
    const seeing = ['advanced', 'admin', 'manager', 'sara'];
    const of = (k: string, id: string) => got[k]!.filter((e) => e.pool_id === id);
    /** Nothing of the pool reached the socket of `k` (a marker sent to them after it arrives: a socket's events keep their order). */
    const nothingReached = async (k: 'nora' | 'researcher', id: string) => {
      const marker = randomUUID();
      server.ctx.bus.toUser(await userIdOf(server, k === 'nora' ? 'student03' : 'researcher'), 'desktop_pool_changed', { pool_id: marker });
      await until(`the marker at ${k}`, async () => of(k, marker).length === 1, 10_000);
      expect(of(k, id), k).toEqual([]);
    };
    let pool = '';
    try {
      const made = await json(
        await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'Live pool', template_id: template, allowed: { groups: ['default-students-1a'] }, max_desktops: 1, prepared: 1 } }),
        (v) => ZPool.parse(v),
      );
      pool = made.id;
      await until('the desktop prepared', async () => (await poolOf(pool)).counts.prepared === 1, 90_000);
      const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.poolId, pool));
      const readyAt = row!.poolReadyAt!.getTime();
      // Its desktop became prepared: everyone who may see the pool is told after that, without asking.
      for (const k of seeing) await until(`${k} told of the prepared desktop`, async () => of(k, pool).some((e) => e.at >= readyAt), 10_000);
      await nothingReached('nora', pool);
      await nothingReached('researcher', pool);
      // A burst is coalesced: a pool that made and started one desktop sent a handful of events, not one per write.
      expect(of('advanced', pool).length).toBeLessThanOrEqual(8);

      // Shared with another group instead: those who could see it and those who can now are told (the list changes for both).
      const before = { sara: of('sara', pool).length, nora: of('nora', pool).length };
      expect((await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced, method: 'PUT', body: { allowed: { groups: ['default-students-1b'] } } })).status).toBe(200);
      await until('sara told it left her list', async () => of('sara', pool).length > before.sara, 10_000);
      await until('nora told it joined hers', async () => of('nora', pool).length > before.nora, 10_000);
      await nothingReached('researcher', pool);

      // Deleted: those who saw it are told (their screens drop it).
      const gone = of('nora', pool).length;
      expect((await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced, method: 'DELETE' })).status).toBe(200);
      pool = '';
      await until('nora told the pool went', async () => of('nora', made.id).length > gone, 10_000);
      await until('the owner told the pool went', async () => of('advanced', made.id).some((e) => e.at >= Date.now() - scaled(10_000)), 10_000);
    } finally {
      if (pool) await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced, method: 'DELETE' });
      for (const sock of Object.values(socks)) sock.close();
    }
  });

  it('coalesces a burst: thirty changes of a pool within the coalescing time are one event', async () => {
    const sock = await socketOf(server, advanced);
    const got = recordEvents(sock, ['desktop_pool_changed']);
    const events = createPoolEvents(server.ctx);
    let pool = '';
    const of = (id: string) => got.filter((e) => e.payload.pool_id === id).length;
    try {
      // A disabled pool: nothing of its own happens after the event of its creation.
      const made = await json(
        await call(server, '/api/v3/desktop-pools', { token: advanced, method: 'POST', body: { name: 'Quiet pool', template_id: template, allowed: { users: [] }, max_desktops: 1, prepared: 0, enabled: false } }),
        (v) => ZPool.parse(v),
      );
      pool = made.id;
      await until('the event of its creation', async () => of(pool) === 1, 10_000);
      await server.app.desktopPools.kick(pool);
      for (let i = 0; i < 30; i++) events.changed(pool);
      await until('the burst’s event', async () => of(pool) === 2, 10_000);
      // A marker after it: once it arrives, everything sent before it has (one socket keeps the order).
      const marker = randomUUID();
      server.ctx.bus.toUser(await userIdOf(server, 'advanced'), 'desktop_pool_changed', { pool_id: marker });
      await until('the marker', async () => of(marker) === 1, 10_000);
      expect(of(pool)).toBe(2);
    } finally {
      await events.close();
      sock.close();
      if (pool) await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced, method: 'DELETE' });
    }
  });
});

// What the hypervisors hold counts their vCPUs (VCPU_OVERCOMMIT per CPU, here 1) as placement does, and a pool whose
// start is refused for lack of room waits before it tries again (it once made and destroyed a desktop every few ms).
describe('a desktop pool and the room on the hypervisors', () => {
  let small: TestServer;
  let teacher: string;
  let root: string;
  let tpl: string;
  beforeAll(async () => {
    small = await startTestServer({ env: { POOL_BOOT_SECONDS: '0', VCPU_OVERCOMMIT: '1', SHUTDOWN_TIMEOUT_SECONDS: '5' } });
    [teacher, root] = await Promise.all(['advanced', 'admin'].map((u) => loginToken(small, u)));
    const [t] = await small.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.name, 'Demo Linux')));
    tpl = (t ?? (await small.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template')))[0])!.id;
  }, scaled(120_000));
  afterAll(async () => small?.close(), scaled(120_000));

  it('refuses a size beyond the vCPUs the hosts may hand out, and shows a refused start as no room, without making desktops in a loop', async () => {
    const [t] = await small.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, tpl));
    const cpus = (await small.ctx.engine.hosts.status('local'))!.cpus;
    const byVcpus = Math.floor(cpus / t!.hardware.vcpus);
    const studentId = await userIdOf(small, 'student01');
    const body = (max: number) => ({ name: 'Room pool', template_id: tpl, allowed: { users: [studentId] }, max_desktops: max, prepared: 1 });
    const big = await call(small, '/api/v3/desktop-pools', { token: teacher, method: 'POST', body: body(byVcpus + 1) });
    expect(((await big.clone().json()) as { params?: { fits?: number } }).params?.fits).toBeLessThanOrEqual(byVcpus);
    expect(await codeOf(big)).toBe('409 desktop_pool_too_large');

    const made = await json(await call(small, '/api/v3/desktop-pools', { token: teacher, method: 'POST', body: body(Math.min(2, byVcpus)) }), (v) => ZPool.parse(v));
    const view = async () => json(await call(small, `/api/v3/desktop-pools/${made.id}`, { token: teacher }), (v) => ZPool.parse(v));
    try {
      await until('one prepared', async () => (await view()).counts.prepared === 1, 90_000);
      // This machine takes no new starts: the desktop the pool makes after one is taken cannot start.
      expect((await call(small, '/api/v3/admin/hypervisors/local/drain', { token: root, method: 'PUT', body: { draining: true } })).status).toBe(200);
      const student = await loginToken(small, 'student01');
      expect((await json(await call(small, `/api/v3/desktop-pools/${made.id}/take`, { token: student, method: 'POST' }), (v) => ZPoolTakeAnswer.parse(v))).kind).toBe('desktop');
      await until('no room shown', async () => (await view()).stalled === 'no_room', 30_000);
      // For two seconds, the pool's desktops: the given one, and no stream of new ones made and destroyed.
      const seen = new Set<string>();
      const end = Date.now() + 2000;
      while (Date.now() < end) {
        for (const r of await small.ctx.db.select({ id: schema.domains.id }).from(schema.domains).where(eq(schema.domains.poolId, made.id))) seen.add(r.id);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(seen.size).toBeLessThanOrEqual(2);
      expect((await view()).counts).toMatchObject({ in_use: 1, preparing: 0, prepared: 0 });
    } finally {
      await call(small, '/api/v3/admin/hypervisors/local/drain', { token: root, method: 'PUT', body: { draining: false } });
      await call(small, `/api/v3/desktop-pools/${made.id}`, { token: teacher, method: 'DELETE' });
    }
  });
});
