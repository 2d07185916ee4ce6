import { scaled } from '../helpers/slowdown';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import { GB } from '@vdi/contracts';
import { schema } from '../../src/db';
import { info } from '../../src/engine/disks';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

let server: TestServer;
let teo: string; // advanced, group Teachers (no quota)
let uma: string; // role user
let marta: string; // manager of Default
let ada: string; // admin
let rui: string; // advanced, another category

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1 });
  [teo, uma, marta, ada] = await Promise.all(['advanced', 'user', 'manager', 'admin'].map((u) => loginToken(server, u)));
  const { token } = await login(server, 'researcher', DEMO_PASSWORD, 'lab');
  rui = token!;
}, scaled(240_000));
// Sockets a failed test left open would hold the server's close.
const sockets: Socket[] = [];
afterAll(async () => {
  for (const s of sockets) s.close();
  await server?.close();
});

type Disk = {
  id: string;
  user_id: string;
  type: string;
  status: string;
  domains: { id: string; name: string; status: string }[];
  actual_size: number;
  virtual_size: number;
  last: number | null;
  path: string;
  operation: { job_id: string; user_id: string; priority: string } | null;
};
const disks = async (token: string): Promise<Disk[]> => (await call(server, '/api/v3/storage/ready', { token })).json();
const increase = (token: string, id: string, by: number | string, priority = 'low') =>
  call(server, `/api/v3/storage/${id}/priority/${priority}/increase/${by}`, { token, method: 'PUT' });
const abort = (token: string, id: string) => call(server, `/api/v3/storage/${id}/abort_operations`, { token, method: 'PUT' });
const codeOf = async (r: Response) => ((await r.json()) as { description_code: string }).description_code;
const storageRow = async (id: string) => (await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, id)))[0]!;
const domainRow = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!;

const listen = (token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    sockets.push(s);
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });
function collect(socket: Socket, event: string) {
  const seen: Record<string, unknown>[] = [];
  socket.on(event, (raw: string) => seen.push(JSON.parse(raw)));
  return seen;
}
async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + scaled(ms);
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('storage list', () => {
  it('lists the user\'s disks with the desktops on them and sizes read from qemu-img', async () => {
    const list = await disks(teo);
    expect(list).toHaveLength(1);
    const [d] = list;
    expect(d).toMatchObject({ type: 'desktop', status: 'ready', operation: null, user_id: await userIdOf(server, 'advanced') });
    expect(d!.domains.map((x) => x.name)).toEqual(['Demo desktop']);
    expect(d!.path).toMatch(/^desktops\/[\w-]+\.qcow2$/);
    const real = await info((await storageRow(d!.id)).path);
    expect(d!.virtual_size).toBe(real.virtualSize);
    expect(d!.actual_size).toBe(real.actualSize);
    expect(d!.last).toBeGreaterThan(0);
    // The user role sees its disks too (growing them is what it may not do).
    expect((await disks(uma)).map((x) => x.domains[0]!.name).sort()).toEqual(['Demo desktop', 'GPU desktop', 'Lab desktop']);
    // An administrator owns the template's disk as well.
    expect((await disks(ada)).map((x) => x.type).sort()).toEqual(['desktop', 'template']);
  });

  it('tells administrators and managers how much room the storage pool has', async () => {
    const r = await call(server, '/api/v3/admin/storage_pool/availability', { token: marta });
    expect(r.status).toBe(200);
    const pool = await r.json();
    expect(pool.available).toBe(true);
    expect(pool.total).toBeGreaterThan(pool.free);
    expect(pool.free).toBeGreaterThan(0);
    expect((await call(server, '/api/v3/admin/storage_pool/availability', { token: teo })).status).toBe(403);
  });
});

describe('disk increase refusals', () => {
  it('refuses the user role (403)', async () => {
    const [d] = await disks(uma);
    const r = await increase(uma, d!.id, 1);
    expect(r.status).toBe(403);
    expect(await codeOf(r)).toBe('forbidden');
  });

  it('refuses a new size that is not larger than the current one', async () => {
    const [d] = await disks(teo);
    for (const by of [0, -1]) {
      const r = await increase(teo, d!.id, by);
      expect(r.status).toBe(400);
      expect(await codeOf(r)).toBe('storage_size_too_small');
    }
    expect((await increase(teo, d!.id, 'x')).status).toBe(400);
    expect((await increase(teo, d!.id, 1, 'medium')).status).toBe(400);
  });

  it('refuses template disks and disks other disks are built on', async () => {
    const template = (await disks(ada)).find((d) => d.type === 'template')!;
    const r = await increase(ada, template.id, 1);
    expect(r.status).toBe(428);
    expect(await codeOf(r)).toBe('storage_has_derivatives');

    const [d] = await disks(teo);
    const child = randomUUID();
    await server.ctx.db.insert(schema.storage).values({ id: child, userId: d!.user_id, kind: 'desktop', path: `/nonexistent/${child}.qcow2`, parentId: d!.id });
    try {
      const r2 = await increase(teo, d!.id, 1);
      expect(r2.status).toBe(428);
      expect(await codeOf(r2)).toBe('storage_has_derivatives');
    } finally {
      await server.ctx.db.delete(schema.storage).where(eq(schema.storage.id, child));
    }
  });

  it('refuses someone else\'s disk outside their category (403), and unknown disks (404)', async () => {
    const [d] = await disks(teo);
    expect((await increase(rui, d!.id, 1)).status).toBe(403);
    expect((await abort(rui, d!.id)).status).toBe(403);
    expect((await increase(teo, 'no-such-disk', 1)).status).toBe(404);
  });

  it('refuses a growth over the desktops_disk_size quota (428)', async () => {
    const [d] = await disks(teo);
    const quota = { desktops: 10, volatile: 5, templates: 5, isos: 5, deployments_total: 5, deployment_desktops: 50, started_deployment_desktops: 20, running: 3, memory: 8, vcpus: 8, desktops_disk_size: 1, total_size: 100, total_soft_size: 80, storage_size: 100, media_size: 50, personal_drive: 0 };
    await server.ctx.db.update(schema.users).set({ quota }).where(eq(schema.users.username, 'advanced'));
    try {
      const r = await increase(teo, d!.id, 1);
      expect(r.status).toBe(428);
      const body = await r.json();
      expect(body.description_code).toBe('desktops_disk_size_quota_exceeded');
      expect(body.params).toEqual({ desktops_disk_size: 1 });
    } finally {
      await server.ctx.db.update(schema.users).set({ quota: null }).where(eq(schema.users.username, 'advanced'));
    }
  });

  it('refuses while a desktop on the disk is running', async () => {
    const [d] = await disks(teo);
    const desktopId = d!.domains[0]!.id;
    expect((await call(server, `/api/v3/desktop/start/${desktopId}`, { token: teo })).status).toBe(200);
    try {
      await until(() => domainRow(desktopId), (row) => row.status === 'Started');
      const r = await increase(teo, d!.id, 1);
      expect(r.status).toBe(428);
      expect(await codeOf(r)).toBe('desktops_not_stopped');
      // Nothing was left half-marked.
      expect((await storageRow(d!.id)).status).toBe('ready');
      expect((await domainRow(desktopId)).status).toBe('Started');
    } finally {
      await call(server, `/api/v3/desktop/stop/${desktopId}`, { token: teo });
      await call(server, `/api/v3/desktop/stop/${desktopId}`, { token: teo });
      await until(() => domainRow(desktopId), (row) => row.status === 'Stopped', 30_000);
    }
  }, scaled(120_000));
});

describe('disk increase', () => {
  it('grows the disk with qemu-img as a job: maintenance meanwhile, live progress, the new size after', async () => {
    const [d] = await disks(teo);
    const desktopId = d!.domains[0]!.id;
    const before = await info((await storageRow(d!.id)).path);
    const socket = await listen(teo);
    const events = collect(socket, 'storage');
    const desktopStates: string[] = [];
    socket.on('desktop_update', (raw: string) => {
      const p = JSON.parse(raw);
      if (p.id === desktopId) desktopStates.push(`${p.state}:${p.current_action}`);
    });
    // A non-admin asking for "high" gets "low".
    const r = await increase(teo, d!.id, 1, 'high');
    expect(r.status).toBe(200);
    const { task_id } = await r.json();
    await until(() => events, (e) => e.some((x) => x.outcome === 'done'));
    const done = events.find((x) => x.outcome === 'done')!;
    expect(done).toMatchObject({ id: d!.id, status: 'ready', job_id: task_id, operation: 'increase', progress: 100, virtual_size: before.virtualSize + GB });
    expect(events[0]).toMatchObject({ outcome: 'running', status: 'maintenance' });
    await until(() => desktopStates, (s) => s.includes('Stopped:null'));
    expect(desktopStates[0]).toBe('Maintenance:increase');

    const after = await info((await storageRow(d!.id)).path);
    expect(after.virtualSize).toBe(before.virtualSize + GB);
    expect(after.backingFile).toBe(before.backingFile);
    const [listed] = await disks(teo);
    expect(listed).toMatchObject({ virtual_size: after.virtualSize, status: 'ready', operation: null });
    const [job] = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.id, task_id));
    expect(job).toMatchObject({ kind: 'disk_resize', status: 'done', progress: 100, userId: await userIdOf(server, 'advanced') });
    expect((job!.params as { priority: string }).priority).toBe('low');
    socket.close();
  });

  it('lets an administrator choose the priority', async () => {
    const desktop = (await disks(ada)).find((x) => x.type === 'desktop')!;
    const r = await increase(ada, desktop.id, 1, 'high');
    expect(r.status).toBe(200);
    const { task_id } = await r.json();
    const job = await until(
      async () => (await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.id, task_id)))[0]!,
      (j) => j.status === 'done',
    );
    expect((job.params as { priority: string }).priority).toBe('high');
  });

  it('only the person who started an operation may cancel it; cancelling puts everything back', async () => {
    server.ctx.config.diskOperationDelayMs = 4000;
    try {
      const [d] = await disks(teo);
      const desktopId = d!.domains[0]!.id;
      const before = await info((await storageRow(d!.id)).path);
      const socket = await listen(teo);
      const events = collect(socket, 'storage');
      // The manager of the category starts it on Teo's disk...
      const r = await increase(marta, d!.id, 2);
      expect(r.status).toBe(200);
      const { task_id } = await r.json();
      const [listed] = await disks(teo);
      expect(listed).toMatchObject({ status: 'maintenance', operation: { job_id: task_id, user_id: await userIdOf(server, 'manager'), priority: 'low' } });
      expect((await domainRow(desktopId))).toMatchObject({ status: 'Maintenance', currentAction: 'increase' });
      // ...a second operation is refused meanwhile, and the desktop cannot start...
      const again = await increase(teo, d!.id, 1);
      expect(again.status).toBe(428);
      expect(await codeOf(again)).toBe('storage_not_ready');
      expect((await call(server, `/api/v3/desktop/start/${desktopId}`, { token: teo })).status).toBe(409);
      // ...Teo, the owner, may not cancel what Marta started...
      const notMine = await abort(teo, d!.id);
      expect(notMine.status).toBe(403);
      expect(await codeOf(notMine)).toBe('operation_not_owned');
      // ...Marta may.
      const ok = await abort(marta, d!.id);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ task_id });
      await until(() => events, (e) => e.some((x) => x.outcome === 'aborted'));
      await until(() => storageRow(d!.id), (s) => s.status === 'ready');
      expect((await domainRow(desktopId))).toMatchObject({ status: 'Stopped', currentAction: null });
      expect((await info((await storageRow(d!.id)).path)).virtualSize).toBe(before.virtualSize);
      const [job] = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.id, task_id));
      expect(job!.status).toBe('aborted');
      // Nothing to cancel any more.
      const none = await abort(teo, d!.id);
      expect(none.status).toBe(409);
      expect(await codeOf(none)).toBe('storage_no_operation');
      socket.close();
    } finally {
      server.ctx.config.diskOperationDelayMs = 0;
    }
  });

  it('counts the user\'s disks in used storage_size and total_size', async () => {
    const user = await (await call(server, '/api/v3/user', { token: teo })).json();
    const [d] = await disks(teo);
    const gb = d!.actual_size / GB;
    expect(user.used.storage_size).toBeCloseTo(gb, 3);
    expect(user.used.total_size).toBeGreaterThanOrEqual(user.used.storage_size);
  });
});

describe('check_quota for one more item', () => {
  const check = (token: string, kind: string) => call(server, `/api/v3/${kind}/new/check_quota`, { token });
  const setQuota = async (where: { user?: string; group?: string; category?: string }, patch: Record<string, number> | null) => {
    const base = { desktops: 10, volatile: 5, templates: 5, isos: 5, deployments_total: 5, deployment_desktops: 50, started_deployment_desktops: 20, running: 3, memory: 8, vcpus: 8, desktops_disk_size: 50, total_size: 100, total_soft_size: 80, storage_size: 100, media_size: 50, personal_drive: 0 };
    const value = patch ? { ...base, ...patch } : null;
    if (where.user) await server.ctx.db.update(schema.users).set({ quota: value }).where(eq(schema.users.username, where.user));
    if (where.group) await server.ctx.db.update(schema.groups).set({ limits: value && { ...value, users: 100 } }).where(eq(schema.groups.id, where.group));
    if (where.category) await server.ctx.db.update(schema.categories).set({ limits: value && { ...value, users: 100 } }).where(eq(schema.categories.id, where.category));
  };

  it('answers {} when one more fits', async () => {
    for (const kind of ['desktops', 'templates', 'media', 'deployments']) {
      const r = await check(uma, kind);
      expect(r.status, kind).toBe(200);
      expect(await r.json()).toEqual({});
    }
  });

  it('answers the user quota codes (428)', async () => {
    // Uma has three desktops.
    await setQuota({ user: 'user' }, { desktops: 3, templates: 0, isos: 0, deployments_total: 0 });
    try {
      const expected: Record<string, string> = {
        desktops: 'desktop_new_user_quota_exceeded',
        templates: 'template_new_user_quota_exceeded',
        media: 'media_new_user_quota_exceeded',
        deployments: 'deployment_new_user_quota_exceeded',
      };
      for (const [kind, code] of Object.entries(expected)) {
        const r = await check(uma, kind);
        expect(r.status, kind).toBe(428);
        expect(await codeOf(r), kind).toBe(code);
      }
      await setQuota({ user: 'user' }, { total_size: 0 });
      const r = await check(uma, 'media');
      expect(await codeOf(r)).toBe('total_size_quota_exceeded');
    } finally {
      await setQuota({ user: 'user' }, null);
    }
  });

  it('answers the group and category limit codes (428)', async () => {
    // Students 1A: user (3 desktops), student01 and student02 (1 each).
    await setQuota({ group: 'default-students-1a' }, { desktops: 5 });
    try {
      const r = await check(uma, 'desktops');
      expect(r.status).toBe(428);
      expect(await codeOf(r)).toBe('desktop_new_group_limit_exceeded');
    } finally {
      await setQuota({ group: 'default-students-1a' }, null);
    }
    // Default: ten demo desktops in all.
    await setQuota({ category: 'default' }, { desktops: 10 });
    try {
      const r = await check(teo, 'desktops');
      expect(r.status).toBe(428);
      expect(await codeOf(r)).toBe('desktop_new_category_limit_exceeded');
      expect((await check(teo, 'templates')).status).toBe(200);
    } finally {
      await setQuota({ category: 'default' }, null);
    }
  });
});
