import { scaled } from './slowdown';
import { copyFile, chmod } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { and, desc, eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import type { UserRow } from '../../src/auth/sessions';
import { createDesktopFromTemplate, randomMac } from '../../src/modules/desktops/create';
import { NOT_SHARED } from '../../src/modules/access/permissions';
import type { Db } from '../../src/db';
import type { Engine } from '../../src/engine';
import { call, DEMO_PASSWORD, login } from './server';

// Cheap objects for suites generated from the registered routes (authorisation matrix, bad
// input): rows and thin qcow2 overlays made directly, no machine started, no download.

/** Where the objects are made: the URL people use, and the installation's database and disks (an in-process test server, or a test's own view of the processes' installation). */
export type FixtureServer = { url: string; ctx: { db: Db; engine: Engine } };

/** `:name` segments of a registered URL pattern filled from `values` (every one must be given). */
export function fillPath(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no value for :${name} in ${pattern}`);
    return encodeURIComponent(v);
  });
}

/** "METHOD url" as registered (the key of tables over `app.registeredRoutes`). */
export const routeKey = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

export const userRow = async (server: FixtureServer, username: string, categoryId = 'default'): Promise<UserRow> => {
  const [u] = await server.ctx.db.select().from(schema.users).where(and(eq(schema.users.username, username), eq(schema.users.categoryId, categoryId)));
  if (!u) throw new Error(`no user ${username} in ${categoryId}`);
  return u;
};

/** A copy of a demo user (same password) under a new name: another teacher, another student… */
export async function copyUser(server: FixtureServer, from: { username: string; categoryId?: string }, username: string): Promise<UserRow> {
  const base = await userRow(server, from.username, from.categoryId);
  const [row] = await server.ctx.db
    .insert(schema.users)
    .values({ ...base, id: `${username}-id`, uid: username, username, name: `${username} (test)`, email: '' })
    .returning();
  return row!;
}

/** A session token of a user (demo password). */
export async function tokenOf(server: FixtureServer, username: string, categoryId = 'default'): Promise<string> {
  const { res, token } = await login(server, username, DEMO_PASSWORD, categoryId);
  if (!token) throw new Error(`login ${username}@${categoryId} failed: ${res.status} ${await res.text()}`);
  return token;
}

export const demoTemplate = async (server: FixtureServer) => {
  const [t] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.name, 'Demo Linux')));
  if (!t) throw new Error('no demo template');
  return t;
};

/** A stopped desktop of `owner` on a thin overlay of the demo template (optionally a deployment's). */
export async function makeDesktop(server: FixtureServer, owner: UserRow, opts: { name?: string; tag?: string; status?: string; persistent?: boolean } = {}) {
  const template = await demoTemplate(server);
  const row = await createDesktopFromTemplate(server.ctx.db, server.ctx.engine, template, owner, {
    name: opts.name ?? `Desktop ${randomUUID().slice(0, 8)}`,
    persistent: opts.persistent ?? true,
    status: 'Stopped',
    tag: opts.tag,
    tagVisible: opts.tag ? true : undefined,
  });
  if (opts.status) await server.ctx.db.update(schema.domains).set({ status: opts.status }).where(eq(schema.domains.id, row.id));
  return row;
}

/** A template of `owner`, not shared, on its own copy of the demo base disk (so that deleting it is harmless). */
export async function makeTemplate(server: FixtureServer, owner: UserRow, name = `Template ${randomUUID().slice(0, 8)}`) {
  const { db, engine } = server.ctx;
  const demo = await demoTemplate(server);
  const [disk] = await db
    .select({ path: schema.storage.path, actualSize: schema.storage.actualSize, virtualSize: schema.storage.virtualSize })
    .from(schema.domainDisks)
    .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
    .where(eq(schema.domainDisks.domainId, demo.id));
  const id = randomUUID();
  const storageId = randomUUID();
  const path = join(engine.dirs.storage, 'templates', `${storageId}.qcow2`);
  await copyFile(disk!.path, path);
  await chmod(path, 0o444);
  await db.insert(schema.storage).values({ id: storageId, userId: owner.id, kind: 'template', path, actualSize: disk!.actualSize, virtualSize: disk!.virtualSize });
  const [row] = await db
    .insert(schema.domains)
    .values({
      ...demo, id, name, userId: owner.id, categoryId: owner.categoryId, groupId: owner.groupId, allowed: NOT_SHARED,
      hardware: { ...demo.hardware, interfaces: [{ id: 'default', mac: randomMac() }] }, createdAt: new Date(),
    })
    .returning();
  await db.insert(schema.domainDisks).values({ domainId: id, storageId, position: 0 });
  return row!;
}

/** A media row of `owner` whose download failed (no file): every route can name it, none downloads. */
export async function makeMedia(server: FixtureServer, owner: UserRow, name = `Media ${randomUUID().slice(0, 8)}`) {
  const [row] = await server.ctx.db
    .insert(schema.media)
    .values({
      id: randomUUID(), name, url: 'http://127.0.0.1:9/none.iso', kind: 'iso', status: 'DownloadFailed', userId: owner.id,
      categoryId: owner.categoryId, groupId: owner.groupId, allowed: NOT_SHARED, size: 0, progress: null,
    })
    .returning();
  return row!;
}

/** A deployment made through the API by `token` (its creation job is awaited), for the users named. */
export async function makeDeployment(server: FixtureServer, token: string, users: string[], opts: { name?: string; coOwners?: string[] } = {}) {
  const template = await demoTemplate(server);
  const res = await call(server, '/api/v3/deployments', {
    token,
    body: {
      name: opts.name ?? `Deployment ${randomUUID().slice(0, 8)}`, template_id: template.id, desktop_name: 'Lab desktop', visible: true,
      allowed: { groups: false, users }, user_permissions: ['recreate'],
    },
  });
  if (res.status !== 200) throw new Error(`deployment not created: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  await creationEnded(server, id);
  if (opts.coOwners?.length) {
    const r = await call(server, `/api/v3/deployment/co-owners/${id}`, { token, method: 'PUT', body: { co_owners: opts.coOwners } });
    if (r.status !== 200) throw new Error(`co-owners not set: ${r.status} ${await r.text()}`);
  }
  return id;
}

/** Waits until no creation job of the target runs. */
export async function creationEnded(server: FixtureServer, targetId: string, ms = 60_000) {
  const end = Date.now() + scaled(ms);
  for (;;) {
    const jobs = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, targetId));
    if (jobs.every((j) => j.status !== 'running' && j.status !== 'queued')) return;
    if (Date.now() > end) throw new Error(`job of ${targetId} still running`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A recycle-bin entry of `owner`: a fresh desktop of theirs deleted through the API. */
export async function makeBinEntry(server: FixtureServer, owner: UserRow, ownerToken: string) {
  const desktop = await makeDesktop(server, owner);
  const res = await call(server, `/api/v3/desktop/${desktop.id}`, { token: ownerToken, method: 'DELETE' });
  if (res.status !== 200) throw new Error(`desktop not recycled: ${res.status} ${await res.text()}`);
  const [entry] = await server.ctx.db.select().from(schema.recycleBin)
    .where(and(eq(schema.recycleBin.ownerId, owner.id), eq(schema.recycleBin.status, 'recycled'))).orderBy(desc(schema.recycleBin.createdAt)).limit(1);
  return entry!;
}

/** `%Y-%m-%dT%H:%M+0000` of a date (the booking calls' format). */
export const bookingDate = (d: Date) => `${d.toISOString().slice(0, 16)}+0000`;

/** A future booking (tomorrow, 30 min) of `owner`'s GPU desktop, through the API; an earlier one is dropped. */
export async function makeBooking(server: FixtureServer, owner: UserRow, ownerToken: string, desktopId: string, hourOffset = 26) {
  await server.ctx.db.delete(schema.bookings).where(eq(schema.bookings.userId, owner.id));
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + hourOffset * 3_600_000);
  const end = new Date(start.getTime() + 30 * 60_000);
  const res = await call(server, '/api/v3/booking/event', {
    token: ownerToken,
    body: { element_id: desktopId, element_type: 'desktop', title: 'Matrix', start: bookingDate(start), end: bookingDate(end) },
  });
  if (res.status !== 200) throw new Error(`booking not created: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}
