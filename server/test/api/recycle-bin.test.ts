import { scaled } from '../helpers/slowdown';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import { schema } from '../../src/db';
import { createOverlay } from '../../src/engine/disks';
import { createDesktopFromTemplate } from '../../src/modules/desktops/create';
import { purgeExpired } from '../../src/modules/recycle-bin/purge';
import { call, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';


let server: TestServer;
let uma: string; // role user, Students 1A
let sara: string; // student01
let pau: string; // student02
let nora: string; // student03
let marta: string; // manager of Default
let ada: string; // admin
let teo: string; // advanced

beforeAll(async () => {
  // The retention job runs every second here (the default is every five minutes).
  server = await startTestServer({ startConcurrency: 1, env: { RECYCLE_BIN_PURGE_SECONDS: '1' } });
  [uma, sara, pau, nora, marta, ada, teo] = await Promise.all(
    ['user', 'student01', 'student02', 'student03', 'manager', 'admin', 'advanced'].map((u) => loginToken(server, u)),
  );
}, scaled(240_000));
// Sockets a failed test left open would hold the server's close.
const sockets: Socket[] = [];
afterAll(async () => {
  for (const s of sockets) s.close();
  await server?.close();
});

type Desktop = { id: string; name: string; state: string; storage: string[] };
type Item = Record<string, unknown> & { id: string; item_name: string; status: string };
const desktops = async (token: string): Promise<Desktop[]> => (await call(server, '/api/v3/user/desktops', { token })).json();
const bin = async (token: string): Promise<Item[]> => (await call(server, '/api/v3/recycle_bin/item_count/user', { token })).json();
const count = async (token: string): Promise<number> => (await call(server, '/api/v3/recycle_bin/count', { token })).json();
const del = (token: string, path: string) => call(server, `/api/v3${path}`, { token, method: 'DELETE' });
const restore = (token: string, id: string) => call(server, `/api/v3/recycle_bin/restore/${id}`, { token, method: 'PUT' });
const codeOf = async (r: Response) => ((await r.json()) as { description_code: string }).description_code;
const storageRow = async (id: string) => (await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, id)))[0];
const entryRow = async (id: string) => (await server.ctx.db.select().from(schema.recycleBin).where(eq(schema.recycleBin.id, id)))[0]!;
const used = async (token: string) => (await (await call(server, '/api/v3/user', { token })).json()).used as Record<string, number>;

const listen = (token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    sockets.push(s);
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });
function collect(socket: Socket, events: string[]) {
  const seen: { event: string; payload: Record<string, unknown> }[] = [];
  for (const event of events) socket.on(event, (raw: string) => seen.push({ event, payload: JSON.parse(raw) }));
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

/** A person of their own (and, when asked, their own group or category) with one desktop from the demo template. */
async function personWithDesktop(name: string, opts: { group?: string; category?: string; templateId?: string } = {}) {
  const db = server.ctx.db;
  const categoryId = opts.category ?? 'default';
  if (opts.category) {
    await db.insert(schema.categories).values({ id: categoryId, name: `Category ${name}`, customUrlName: categoryId });
  }
  const groupId = opts.group ?? (opts.category ? `${categoryId}-default` : 'default-students-1a');
  if (opts.group || opts.category) await db.insert(schema.groups).values({ id: groupId, uid: groupId, name: `Group ${name}`, categoryId });
  const [user] = await db
    .insert(schema.users)
    .values({ id: randomUUID(), uid: name, username: name, provider: 'local', categoryId, groupId, roleId: 'user', name: `Person ${name}` })
    .returning();
  const [template] = opts.templateId
    ? await db.select().from(schema.domains).where(eq(schema.domains.id, opts.templateId))
    : await db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.name, 'Demo Linux')));
  const desktop = await createDesktopFromTemplate(db, server.ctx.engine, template!, user!, { name: `Desk ${name}`, persistent: true, status: 'Stopped' });
  return { user: user!, desktop };
}
/** Admin deletes it (admins may delete anyone's desktop): the entry is the owner's. */
async function binned(desktopId: string) {
  expect((await del(ada, `/desktop/${desktopId}`)).status).toBe(200);
  const all = await server.ctx.db.select().from(schema.recycleBin);
  const entry = all.find((e) => e.items.desktops.some((d) => d.id === desktopId))!;
  expect(entry).toMatchObject({ status: 'recycled', agentName: 'Ada Admin' });
  return entry;
}

describe('deleting a desktop puts it in the recycle bin', () => {
  let entryId: string;
  let lab: Desktop;

  it('moves the desktop and its disk into one entry, tells it live, and keeps counting the disk', async () => {
    lab = (await desktops(uma)).find((d) => d.name === 'Lab desktop')!;
    const disk = (await storageRow(lab.storage[0]!))!;
    const before = await used(uma);
    const socket = await listen(uma);
    const seen = collect(socket, ['add_recycle_bin', 'desktop_delete']);

    const gone = await del(uma, `/desktop/${lab.id}`);
    expect(gone.status).toBe(200);
    // The entry it went to (the portal's "Undo" restores it).
    const { recycle_bin_id: answered } = (await gone.json()) as { recycle_bin_id?: string };
    expect((await desktops(uma)).map((d) => d.name)).toEqual(['Demo desktop', 'GPU desktop']);
    expect(await storageRow(disk.id)).toMatchObject({ status: 'recycled' });
    expect(existsSync(disk.path)).toBe(true);

    const [item] = await bin(uma);
    entryId = item!.id;
    expect(answered).toBe(entryId);
    expect(item).toMatchObject({
      item_type: 'desktop',
      item_name: 'Lab desktop',
      status: 'recycled',
      agent_name: 'Uma User',
      agent_id: await userIdOf(server, 'user'),
      owner_name: 'Uma User',
      owner_category_name: 'Default',
      owner_group_name: 'Students 1A',
      desktops: 1,
      templates: 0,
      deployments: 0,
      storages: 1,
      last: { action: 'recycled', agent_name: 'Uma User' },
    });
    expect(item!.size).toBe(disk.actualSize);
    expect(item!.expires).toBe((item!.accessed as number) + 3600);
    expect(await count(uma)).toBe(1);
    // The bin's disk still counts against the storage quota.
    const after = await used(uma);
    expect(after.storage_size).toBe(before.storage_size);
    expect(after.storage_size).toBeGreaterThan(0);
    expect(after.desktops).toBe(before.desktops - 1);

    await until(() => seen, (s) => s.some((x) => x.event === 'add_recycle_bin'));
    expect(seen.find((x) => x.event === 'add_recycle_bin')!.payload).toMatchObject({ id: entryId, item_name: 'Lab desktop', desktops: 1 });
    expect(seen.find((x) => x.event === 'desktop_delete')!.payload).toEqual({ id: lab.id });
    socket.close();
  });

  it('shows the entry in detail to its owner, an admin and the category\'s manager only', async () => {
    const r = await call(server, `/api/v3/recycle_bin/${entryId}`, { token: uma });
    expect(r.status).toBe(200);
    const detail = await r.json();
    expect(detail.desktops).toHaveLength(1);
    expect(detail.desktops[0]).toMatchObject({ id: lab.id, name: 'Lab desktop', category: { name: 'Default' }, group: { name: 'Students 1A' }, username: 'Uma User' });
    expect(detail.storages).toHaveLength(1);
    // Disks as the original answers them (its portal reads user and domains as text, the sizes from qemu-img-info).
    expect(detail.storages[0]).toMatchObject({
      id: lab.storage[0],
      directory_path: 'desktops',
      status: 'recycled',
      type: 'desktop',
      user: 'Uma User',
      category: { name: 'Default' },
      domains: ['Lab desktop'],
    });
    expect(detail.storages[0]['qemu-img-info']['virtual-size']).toBe(64 * 1024 * 1024);
    expect(detail.storages[0]['qemu-img-info']['actual-size']).toBeGreaterThan(0);
    expect(detail.logs).toHaveLength(1);
    expect((await call(server, `/api/v3/recycle_bin/${entryId}`, { token: ada })).status).toBe(200);
    expect((await call(server, `/api/v3/recycle_bin/${entryId}`, { token: marta })).status).toBe(200);
    expect((await call(server, `/api/v3/recycle_bin/${entryId}`, { token: sara })).status).toBe(403);
    expect((await call(server, `/api/v3/recycle_bin/${entryId}`, { token: teo })).status).toBe(403);
    expect((await restore(sara, entryId)).status).toBe(403);
    expect((await del(sara, `/recycle_bin/${entryId}`)).status).toBe(403);
    expect((await call(server, '/api/v3/recycle_bin/no-such-entry', { token: uma })).status).toBe(404);
    // Managers and admins list the bin of their category (everyone's); users may not.
    const all = await (await call(server, '/api/v3/recycle_bin/item_count', { token: marta })).json();
    expect(all.map((i: Item) => i.id)).toContain(entryId);
    expect((await call(server, '/api/v3/recycle_bin/item_count', { token: uma })).status).toBe(403);
  });

  it('restores the desktop with its disk, live, and the restored desktop boots', async () => {
    const socket = await listen(uma);
    const seen = collect(socket, ['update_recycle_bin', 'desktop_add']);
    const r = await restore(uma, entryId);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ recycle_bin_ids: [entryId] });
    const back = (await desktops(uma)).find((d) => d.id === lab.id)!;
    expect(back).toMatchObject({ name: 'Lab desktop', state: 'Stopped', storage: lab.storage });
    expect(await storageRow(lab.storage[0]!)).toMatchObject({ status: 'ready' });
    expect(await count(uma)).toBe(0);
    expect((await entryRow(entryId)).status).toBe('restored');
    await until(() => seen, (s) => s.length >= 2);
    expect(seen.find((x) => x.event === 'update_recycle_bin')!.payload).toEqual({ id: entryId, status: 'restored' });
    expect(seen.find((x) => x.event === 'desktop_add')!.payload).toMatchObject({ id: lab.id, state: 'Stopped' });
    // Restoring twice is refused.
    const twice = await restore(uma, entryId);
    expect(twice.status).toBe(409);
    expect(await codeOf(twice)).toBe('recycle_bin_not_recycled');

    // It boots from its own disk again: QEMU runs and the guest reaches its READY marker.
    expect((await call(server, `/api/v3/desktop/start/${lab.id}`, { token: uma })).status).toBe(200);
    await until(() => desktops(uma), (l) => l.find((d) => d.id === lab.id)?.state === 'Started', 30_000);
    expect(await server.ctx.engine.driver.status(lab.id)).toBe('running');
    const ready = await server.ctx.engine.driver.waitForSerial(lab.id, /DEMO-DESKTOP READY ip=(\S+) boot=(\d+)/, scaled(60_000));
    expect(Number(ready[2])).toBeGreaterThanOrEqual(1);
    await call(server, `/api/v3/desktop/stop/${lab.id}`, { token: uma });
    await call(server, `/api/v3/desktop/stop/${lab.id}`, { token: uma });
    await until(() => desktops(uma), (l) => l.find((d) => d.id === lab.id)?.state === 'Stopped', 30_000);
    socket.close();
  }, scaled(120_000));

  it('deletes an entry for good: its disk file and row go, the storage quota frees', async () => {
    const disk = (await storageRow(lab.storage[0]!))!;
    expect((await del(uma, `/desktop/${lab.id}`)).status).toBe(200);
    const [item] = await bin(uma);
    const withBin = await used(uma);
    const socket = await listen(uma);
    const seen = collect(socket, ['update_recycle_bin', 'delete_recycle_bin']);
    expect((await del(uma, `/recycle_bin/${item!.id}`)).status).toBe(200);
    expect(existsSync(disk.path)).toBe(false);
    expect(await storageRow(disk.id)).toBeUndefined();
    expect(await bin(uma)).toEqual([]);
    expect((await entryRow(item!.id)).status).toBe('deleted');
    expect((await used(uma)).storage_size).toBeLessThan(withBin.storage_size);
    await until(() => seen, (s) => s.some((x) => x.event === 'delete_recycle_bin'));
    expect(seen.map((x) => [x.event, x.payload.status])).toEqual([
      ['update_recycle_bin', 'deleting'],
      ['delete_recycle_bin', 'deleted'],
    ]);
    const again = await restore(uma, item!.id);
    expect(again.status).toBe(409);
    expect((await del(uma, `/recycle_bin/${item!.id}`)).status).toBe(409);
    socket.close();
  });

  it('empties the bin: every entry of mine goes for good', async () => {
    const [demo] = await desktops(sara);
    const disk = (await storageRow(demo!.storage[0]!))!;
    expect((await del(sara, `/desktop/${demo!.id}`)).status).toBe(200);
    expect(await count(sara)).toBe(1);
    expect((await del(sara, '/recycle_bin/empty')).status).toBe(200);
    expect(await count(sara)).toBe(0);
    expect(existsSync(disk.path)).toBe(false);
    // Other people's bins are not touched.
    expect((await del(pau, '/recycle_bin/empty')).status).toBe(200);
  });

  it('deletes for good at once when asked (/permanent)', async () => {
    const { desktop } = await personWithDesktop('permanent01');
    const disk = (await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, desktop.id)))[0]!;
    const path = (await storageRow(disk.storageId))!.path;
    const before = (await server.ctx.db.select().from(schema.recycleBin)).length;
    const gone = await del(ada, `/desktop/${desktop.id}/permanent`);
    expect(gone.status).toBe(200);
    expect(await gone.json()).toEqual({});
    expect(existsSync(path)).toBe(false);
    expect(await storageRow(disk.storageId)).toBeUndefined();
    expect((await server.ctx.db.select().from(schema.recycleBin)).length).toBe(before);
  });
});

describe('retention', () => {
  it('answers the cutoff in hours (category value over the system one) and the default of "delete permanently"', async () => {
    const cutoff = async () => (await (await call(server, '/api/v3/recycle-bin/user/cutoff-time', { token: uma })).json()).recycle_bin_cuttoff_time;
    expect(await cutoff()).toBe(1);
    await server.ctx.db.update(schema.categories).set({ recycleBinCutoffHours: 48 }).where(eq(schema.categories.id, 'default'));
    expect(await cutoff()).toBe(48);
    await server.ctx.db.update(schema.categories).set({ recycleBinCutoffHours: null }).where(eq(schema.categories.id, 'default'));
    expect(await (await call(server, '/api/v3/recycle_bin/config/default-delete', { token: uma })).json()).toBe(false);
    expect((await call(server, '/api/v3/admin/settings/recycle_bin', { token: ada, method: 'PUT', body: { default_delete: true } })).status).toBe(200);
    expect(await (await call(server, '/api/v3/recycle_bin/config/default-delete', { token: uma })).json()).toBe(true);
    await call(server, '/api/v3/admin/settings/recycle_bin', { token: ada, method: 'PUT', body: { default_delete: false } });
  });

  it('with a cutoff of 0 hours deletes at once, without an entry', async () => {
    expect((await call(server, '/api/v3/admin/settings/recycle_bin', { token: ada, method: 'PUT', body: { cutoff_hours: 0 } })).status).toBe(200);
    try {
      const [demo] = await desktops(pau);
      const disk = (await storageRow(demo!.storage[0]!))!;
      expect((await del(pau, `/desktop/${demo!.id}`)).status).toBe(200);
      expect(await count(pau)).toBe(0);
      expect(existsSync(disk.path)).toBe(false);
      expect(await storageRow(disk.id)).toBeUndefined();
    } finally {
      await call(server, '/api/v3/admin/settings/recycle_bin', { token: ada, method: 'PUT', body: { cutoff_hours: 1 } });
    }
  });

  it('the periodic purge deletes entries older than the cutoff, and only those', async () => {
    const [demo] = await desktops(nora);
    const disk = (await storageRow(demo!.storage[0]!))!;
    expect((await del(nora, `/desktop/${demo!.id}`)).status).toBe(200);
    const [item] = await bin(nora);
    // A fresh entry survives the job (it runs every second here).
    await new Promise((r) => setTimeout(r, 1500));
    expect((await entryRow(item!.id)).status).toBe('recycled');
    // Two hours old: over the one hour cutoff.
    await server.ctx.db.update(schema.recycleBin).set({ createdAt: new Date(Date.now() - 2 * 3600_000) }).where(eq(schema.recycleBin.id, item!.id));
    await until(() => entryRow(item!.id), (e) => e.status === 'deleted', 10_000);
    expect(existsSync(disk.path)).toBe(false);
    expect(await count(nora)).toBe(0);
    expect(await purgeExpired(server.ctx)).toBe(0);
  });
});

describe('restore is blocked when what the items belong to is gone', () => {
  it('by a deleted owner', async () => {
    const { user, desktop } = await personWithDesktop('gone01');
    const entry = await binned(desktop.id);
    const adminId = await userIdOf(server, 'admin');
    // Deleting a person takes their disks elsewhere first (the entry keeps its copies).
    await server.ctx.db.update(schema.storage).set({ userId: adminId }).where(eq(schema.storage.userId, user.id));
    await server.ctx.db.delete(schema.users).where(eq(schema.users.id, user.id));
    const r = await restore(ada, entry.id);
    expect(r.status).toBe(428);
    const body = await r.json();
    expect(body.description_code).toBe('unable_to_restore_user');
    expect(body.params).toEqual({ user: 'Person gone01' });
    expect((await entryRow(entry.id)).status).toBe('recycled');
  });

  it('by a deleted group', async () => {
    const { user, desktop } = await personWithDesktop('gone02', { group: 'default-gone02' });
    const entry = await binned(desktop.id);
    await server.ctx.db.update(schema.users).set({ groupId: 'default-default' }).where(eq(schema.users.id, user.id));
    await server.ctx.db.delete(schema.groups).where(eq(schema.groups.id, 'default-gone02'));
    const r = await restore(ada, entry.id);
    expect(r.status).toBe(428);
    const body = await r.json();
    expect(body.description_code).toBe('unable_to_restore_group');
    expect(body.params).toEqual({ group: 'Group gone02' });
  });

  it('by a deleted category', async () => {
    const { user, desktop } = await personWithDesktop('gone03', { category: 'gone03' });
    const entry = await binned(desktop.id);
    await server.ctx.db.update(schema.users).set({ categoryId: 'default', groupId: 'default-default' }).where(eq(schema.users.id, user.id));
    await server.ctx.db.delete(schema.groups).where(eq(schema.groups.categoryId, 'gone03'));
    await server.ctx.db.delete(schema.categories).where(eq(schema.categories.id, 'gone03'));
    const r = await restore(ada, entry.id);
    expect(r.status).toBe(428);
    const body = await r.json();
    expect(body.description_code).toBe('unable_to_restore_category');
    expect(body.params).toEqual({ category: 'Category gone03' });
  });

  it('by a missing parent template', async () => {
    const db = server.ctx.db;
    // A second template, on its own base disk (an overlay of the demo one).
    const [demo] = await db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.name, 'Demo Linux')));
    const [demoDisk] = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, demo!.id));
    const base = (await storageRow(demoDisk!.storageId))!;
    const templateId = randomUUID();
    const storageId = randomUUID();
    const path = join(server.ctx.engine.dirs.storage, 'templates', `${storageId}.qcow2`);
    const disk = await createOverlay(base.path, path);
    await db.insert(schema.storage).values({ id: storageId, userId: demo!.userId, kind: 'template', path, parentId: base.id, actualSize: disk.actualSize, virtualSize: disk.virtualSize });
    await db.insert(schema.domains).values({ ...demo!, id: templateId, name: 'Short-lived template', createdAt: new Date() });
    await db.insert(schema.domainDisks).values({ domainId: templateId, storageId, position: 0 });
    const { desktop } = await personWithDesktop('orphan01', { templateId });
    const entry = await binned(desktop.id);
    await db.delete(schema.domains).where(eq(schema.domains.id, templateId));
    await db.delete(schema.storage).where(eq(schema.storage.id, storageId));
    const r = await restore(ada, entry.id);
    expect(r.status).toBe(428);
    expect(await codeOf(r)).toBe('parent_template_not_found');
  });
});
