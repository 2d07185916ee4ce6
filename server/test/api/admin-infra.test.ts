import { scaled } from '../helpers/slowdown';
import { existsSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import {
  ADMIN_SOCKET_NAMESPACE,
  SOCKET_PATH,
  ZAdminDashboard,
  ZAdminHypervisorList,
  ZAdminJobList,
  ZAdminStorageCheck,
  ZAdminStorageList,
  ZAdminStoragePools,
  type TAdminHypervisor,
} from '@vdi/contracts';
import { schema } from '../../src/db';
import { CREATING_DESKTOP } from '../../src/modules/desktops/create';
import { checkStorage } from '../../src/modules/storage/sweep';
import { call, startTestServer, type TestServer } from '../helpers/server';
import { copyUser, demoTemplate, makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { until } from '../helpers/wait';

// The infrastructure part of the administration console (issue 13): storage, jobs, hypervisors,
// dashboard. Callers: admin, manager of Default, a manager of Research Lab ("labmanager"),
// advanced, user. Disk and deployment jobs pause before their work (DISK_OPERATION_DELAY_MS) so
// that they can be seen running and cancelled.

const A = '/api/v3/admin';
type Caller = 'admin' | 'manager' | 'labmanager' | 'advanced' | 'user';
const CALLERS: Caller[] = ['admin', 'manager', 'labmanager', 'advanced', 'user'];

let server: TestServer;
const tok = {} as Record<Caller, string>;

beforeAll(async () => {
  server = await startTestServer({ env: { DISK_OPERATION_DELAY_MS: '3000' } });
  const lab = await copyUser(server, { username: 'manager' }, 'labmanager');
  await server.ctx.db.update(schema.users).set({ categoryId: 'lab', groupId: (await userRow(server, 'researcher', 'lab')).groupId }).where(eq(schema.users.id, lab.id));
  for (const c of CALLERS) tok[c] = await tokenOf(server, c, c === 'labmanager' ? 'lab' : 'default');
}, scaled(120_000));
afterAll(async () => server?.close());

const json = async (path: string, token: string, opts: { method?: string; body?: unknown } = {}) => {
  const r = await call(server, `${A}${path}`, { token, ...opts });
  return { status: r.status, body: await r.json().catch(() => null) };
};

describe('who may call what', () => {
  it('storage, jobs and the dashboard: admins and managers; hypervisors: admins only; others 403', async () => {
    for (const c of CALLERS) {
      const staff = c === 'admin' || c === 'manager' || c === 'labmanager';
      for (const path of ['/storage', '/storage/check', '/jobs', '/dashboard']) expect((await json(path, tok[c])).status, `${c} ${path}`).toBe(staff ? 200 : 403);
      for (const path of ['/hypervisors', '/storage/pools']) expect((await json(path, tok[c])).status, `${c} ${path}`).toBe(c === 'admin' ? 200 : 403);
      const put = await json('/hypervisors/local', tok[c], { method: 'PUT', body: { enabled: true } });
      expect(put.status, `${c} PUT hypervisor`).toBe(c === 'admin' ? 200 : 403);
      const remove = await json('/storage/check/remove', tok[c], { method: 'POST', body: { paths: ['desktops/x.qcow2'] } });
      expect(remove.status, `${c} remove orphans`).toBe(c === 'admin' ? 200 : 403);
    }
    expect((await call(server, `${A}/dashboard`)).status).toBe(401);
  });

  it('bad input is a 400 with a description_code', async () => {
    for (const [path, body] of [
      ['/hypervisors/local', {}],
      ['/hypervisors/local', { enabled: 'yes' }],
      ['/storage/check/remove', { paths: [] }],
    ] as const) {
      const r = await json(path, tok.admin, { method: path.includes('remove') ? 'POST' : 'PUT', body });
      expect(r.status, path).toBe(400);
      expect(r.body.description_code).toBe('validation_error');
    }
    expect((await json('/storage?status=purple', tok.admin)).status).toBe(400);
    expect((await json('/hypervisors/elsewhere', tok.admin, { method: 'PUT', body: { enabled: false } })).status).toBe(404);
  });
});

describe('storage', () => {
  it('lists every disk with its chain, owner and status; managers only their category', async () => {
    await makeDesktop(server, await userRow(server, 'researcher', 'lab'), { name: 'Lab desktop' });
    const all = ZAdminStorageList.parse((await json('/storage?per_page=500', tok.admin)).body);
    expect(all.total).toBeGreaterThan(0);
    const categories = new Set(all.items.map((d) => d.category));
    expect(categories).toContain('default');
    expect(categories).toContain('lab');
    const desktopDisk = all.items.find((d) => d.kind === 'desktop' && d.domains.some((x) => x.kind === 'desktop'))!;
    expect(desktopDisk.parent).toBeTruthy();
    expect(desktopDisk.chain[0]).toMatchObject({ id: desktopDisk.parent, kind: 'template' });
    expect(desktopDisk.path.startsWith('/')).toBe(false);
    const base = all.items.find((d) => d.id === desktopDisk.parent)!;
    expect(base.derivatives).toBeGreaterThan(0);

    const mine = ZAdminStorageList.parse((await json('/storage?per_page=500', tok.manager)).body);
    expect(mine.items.length).toBeGreaterThan(0);
    expect(mine.items.every((d) => d.category === 'default')).toBe(true);
    const lab = ZAdminStorageList.parse((await json('/storage?per_page=500', tok.labmanager)).body);
    expect(lab.items.every((d) => d.category === 'lab')).toBe(true);
    // A manager's category filter cannot widen their reach.
    expect(ZAdminStorageList.parse((await json('/storage?category=lab', tok.manager)).body).items.every((d) => d.category === 'default')).toBe(true);

    // Search, filters and paging.
    const owner = await userRow(server, 'user');
    const byOwner = ZAdminStorageList.parse((await json(`/storage?owner=${owner.id}&kind=desktop`, tok.admin)).body);
    expect(byOwner.items.every((d) => d.user_id === owner.id && d.kind === 'desktop')).toBe(true);
    const page = ZAdminStorageList.parse((await json('/storage?per_page=1&page=2&sort=size&order=desc', tok.admin)).body);
    expect(page.items).toHaveLength(1);
    expect(page.total).toBe(all.total);
  });

  it('the check reports files without records and records without files; an admin removes the orphans after confirming', async () => {
    const root = server.ctx.engine.dirs.storage;
    const orphan = join(root, 'desktops', 'dropped-by-hand.qcow2');
    writeFileSync(orphan, 'not a disk');
    const owner = await userRow(server, 'user');
    const desktop = await makeDesktop(server, owner, { name: 'Lost disk' });
    const [disk] = await server.ctx.db.select().from(schema.storage).innerJoin(schema.domainDisks, eq(schema.domainDisks.storageId, schema.storage.id)).where(eq(schema.domainDisks.domainId, desktop.id));
    const moved = `${disk!.storage.path}.away`;
    await rename(disk!.storage.path, moved);
    try {
      const admin = ZAdminStorageCheck.parse((await json('/storage/check', tok.admin)).body);
      expect(admin.files_without_rows.map((f) => f.path)).toContain('desktops/dropped-by-hand.qcow2');
      expect(admin.files_without_rows.find((f) => f.path === 'desktops/dropped-by-hand.qcow2')!.size).toBe(10);
      expect(admin.rows_without_files).toContainEqual(expect.objectContaining({ type: 'storage', id: disk!.storage.id, user_name: 'user', category: 'default' }));
      // Managers: their category's records, no files (a file no record owns has no category).
      const manager = ZAdminStorageCheck.parse((await json('/storage/check', tok.manager)).body);
      expect(manager.files_without_rows).toEqual([]);
      expect(manager.rows_without_files.map((r) => r.id)).toContain(disk!.storage.id);
      const lab = ZAdminStorageCheck.parse((await json('/storage/check', tok.labmanager)).body);
      expect(lab.rows_without_files.map((r) => r.id)).not.toContain(disk!.storage.id);

      // Only what the check reports goes: a disk in use, a path outside the folder and a made-up one are left alone.
      const template = await demoTemplate(server);
      const [base] = await server.ctx.db.select().from(schema.storage).innerJoin(schema.domainDisks, eq(schema.domainDisks.storageId, schema.storage.id)).where(eq(schema.domainDisks.domainId, template.id));
      const baseRel = base!.storage.path.slice(root.length + 1);
      const removed = await json('/storage/check/remove', tok.admin, {
        method: 'POST',
        body: { paths: ['desktops/dropped-by-hand.qcow2', baseRel, '../secret.key', 'desktops/never-was.qcow2'] },
      });
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ removed: ['desktops/dropped-by-hand.qcow2'], skipped: [baseRel, '../secret.key', 'desktops/never-was.qcow2'] });
      expect(existsSync(orphan)).toBe(false);
      expect(existsSync(base!.storage.path)).toBe(true);
      expect(existsSync(join(server.config.dataDir, 'secret.key'))).toBe(true);
      const [entry] = await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.action, 'storage.orphans_remove'));
      expect(entry).toMatchObject({ actorName: 'admin', detail: { count: 1, paths: ['desktops/dropped-by-hand.qcow2'] } });
      expect(ZAdminStorageCheck.parse((await json('/storage/check', tok.admin)).body).files_without_rows.map((f) => f.path)).not.toContain('desktops/dropped-by-hand.qcow2');
    } finally {
      await rename(moved, disk!.storage.path);
    }
  });

  it('pools: each folder with its file system space and what is recorded under it', async () => {
    const pools = ZAdminStoragePools.parse((await json('/storage/pools', tok.admin)).body);
    expect(pools.items.map((p) => p.kind)).toEqual(['templates', 'desktops', 'volatile', 'media']);
    for (const p of pools.items) {
      expect(p.available).toBe(true);
      expect(p.total).toBeGreaterThan(0);
      expect(p.free).toBeGreaterThan(0);
      expect(p.path).toBe(join('storage', p.kind));
    }
    expect(pools.items.find((p) => p.kind === 'desktops')!.items).toBeGreaterThan(0);
  });
});

describe('jobs', () => {
  const jobsOf = async (token: string, query = '') => ZAdminJobList.parse((await json(`/jobs?${query}`, token)).body);

  it('a disk growth shows running with its initiator; a manager of another category neither sees nor cancels it; the cancel puts the disk back', async () => {
    const owner = await userRow(server, 'user');
    const desktop = await makeDesktop(server, owner, { name: 'Growing' });
    const [disk] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, desktop.id));
    const grow = await call(server, `/api/v3/storage/${disk!.storageId}/priority/low/increase/1`, { token: tok.admin, method: 'PUT' });
    expect(grow.status).toBe(200);
    const { task_id } = (await grow.json()) as { task_id: string };

    const running = await jobsOf(tok.admin, 'state=active');
    const job = running.items.find((j) => j.id === task_id)!;
    expect(job).toMatchObject({ kind: 'disk_resize', status: 'running', user_name: 'admin', category: 'default', target_id: disk!.storageId });
    expect((await jobsOf(tok.manager, 'state=active')).items.map((j) => j.id)).toContain(task_id);
    expect((await jobsOf(tok.labmanager)).items.map((j) => j.id)).not.toContain(task_id);
    expect((await json(`/jobs/${task_id}`, tok.labmanager, { method: 'DELETE' })).status).toBe(404);
    expect((await json(`/jobs/${task_id}`, tok.user, { method: 'DELETE' })).status).toBe(403);

    const cancelled = await json(`/jobs/${task_id}`, tok.manager, { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: task_id, status: 'aborted' });
    const [after] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, disk!.storageId));
    expect(after!.status).toBe('ready');
    const [d] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id));
    expect(d!.status).toBe('Stopped');
    // A second cancel: nothing runs any more.
    const again = await json(`/jobs/${task_id}`, tok.admin, { method: 'DELETE' });
    expect(again.status).toBe(409);
    expect(again.body.description_code).toBe('job_not_active');
    const [entry] = await server.ctx.db.select().from(schema.auditLog).where(and(eq(schema.auditLog.action, 'job.cancel'), eq(schema.auditLog.objectId, task_id)));
    expect(entry).toMatchObject({ actorName: 'manager', categoryId: 'default' });
    expect((await jobsOf(tok.admin, 'state=finished&kind=disk_resize')).items.map((j) => j.id)).toContain(task_id);
  });

  it('cancelling a deployment creation stops it and leaves no half-made desktop or file', async () => {
    const students = await server.ctx.db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.groupId, 'default-students-1a'));
    const template = await demoTemplate(server);
    const r = await call(server, '/api/v3/deployments', {
      token: tok.admin,
      body: { name: 'Cancelled lab', template_id: template.id, desktop_name: 'Lab desktop', visible: false, allowed: { groups: false, users: students.map((s) => s.id) }, user_permissions: [] },
    });
    expect(r.status).toBe(200);
    const { id } = (await r.json()) as { id: string };
    // Its first desktops are under way (records written, files being made).
    await until('the deployment’s desktops are being made', async () => {
      const rows = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.tag, id), eq(schema.domains.status, CREATING_DESKTOP)));
      return rows.length > 0;
    });
    const job = (await jobsOf(tok.admin, 'state=active&kind=deployment_create')).items.find((j) => j.target_id === id)!;
    expect(job).toMatchObject({ target_name: 'Cancelled lab', user_name: 'admin' });
    const cancelled = await json(`/jobs/${job.id}`, tok.admin, { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('aborted');
    const left = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.tag, id));
    expect(left.filter((d) => d.status === CREATING_DESKTOP)).toEqual([]);
    expect(left).toEqual([]);
    const check = await checkStorage(server.ctx);
    expect(check.filesWithoutRecord).toEqual([]);
  });
});

describe('hypervisors', () => {
  const adminSocket = (token: string) =>
    io(`${server.url}${ADMIN_SOCKET_NAMESPACE}`, { path: SOCKET_PATH, auth: { jwt: token }, transports: ['websocket'], reconnection: false });

  it('the local host as a row: state, accelerator, CPUs, memory, load, running desktops', async () => {
    const list = ZAdminHypervisorList.parse((await json('/hypervisors', tok.admin)).body);
    expect(list.total).toBe(1);
    const h = list.items[0]!;
    expect(h).toMatchObject({ id: 'local', state: 'Online', enabled: true, only_forced: false, accepts_starts: true });
    expect(['kvm', 'tcg']).toContain(h.accel);
    expect(h.cpus).toBeGreaterThan(0);
    expect(h.memory_total_mb).toBeGreaterThan(h.memory_used_mb);
    expect(h.load).toHaveLength(3);
    expect(h.desktops_running).toBeGreaterThanOrEqual(0);
  });

  it('"no new starts" refuses a start with the no-hypervisor code, switching back allows it; admins hear it live, managers not', async () => {
    const admin = adminSocket(tok.admin);
    const manager = adminSocket(tok.manager);
    const heard: TAdminHypervisor[] = [];
    const managerHeard: unknown[] = [];
    admin.on('hypervisor_update', (raw: string) => heard.push(JSON.parse(raw)));
    manager.on('hypervisor_update', (raw: unknown) => managerHeard.push(raw));
    const connected = (s: Socket) => new Promise((resolve) => (s.connected ? resolve(true) : s.on('connect', () => resolve(true))));
    await Promise.all([connected(admin), connected(manager)]);
    try {
      const owner = await userRow(server, 'user');
      const desktop = await makeDesktop(server, owner, { name: 'Start me' });
      const off = await json('/hypervisors/local', tok.admin, { method: 'PUT', body: { only_forced: true } });
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({ only_forced: true, accepts_starts: false });
      await until('the admin hears the switch', async () => heard.some((h) => h.id === 'local' && !h.accepts_starts));

      const refused = await call(server, `/api/v3/desktop/start/${desktop.id}`, { token: tok.user });
      expect(refused.status).toBe(428);
      expect((await refused.json()).description_code).toBe('hypervisors_not_available');
      const [still] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id));
      expect(still!.status).toBe('Stopped');
      // Disabled is the same for starts; enabled and not only forced takes them again.
      await json('/hypervisors/local', tok.admin, { method: 'PUT', body: { only_forced: false, enabled: false } });
      expect((await call(server, `/api/v3/desktop/start/${desktop.id}`, { token: tok.user })).status).toBe(428);
      const [stored] = await server.ctx.db.select().from(schema.hypervisors).where(eq(schema.hypervisors.id, 'local'));
      expect(stored).toMatchObject({ enabled: false, onlyForced: false });

      const on = await json('/hypervisors/local', tok.admin, { method: 'PUT', body: { enabled: true } });
      expect(on.body).toMatchObject({ enabled: true, only_forced: false, accepts_starts: true });
      const started = await call(server, `/api/v3/desktop/start/${desktop.id}`, { token: tok.user });
      expect(started.status).toBe(200);
      await call(server, `/api/v3/desktop/stop/${desktop.id}`, { token: tok.user });

      const actions = (await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.objectType, 'hypervisor'))).map((e) => e.action);
      expect(actions).toEqual(expect.arrayContaining(['hypervisor.starts_off', 'hypervisor.starts_on']));
      // The monitor's numbers keep coming while the admin is connected.
      const before = heard.length;
      await until('a periodic update', async () => heard.length > before, 15_000);
      expect(managerHeard).toEqual([]);
    } finally {
      admin.close();
      manager.close();
      await server.ctx.db.update(schema.hypervisors).set({ enabled: true, onlyForced: false }).where(eq(schema.hypervisors.id, 'local'));
    }
  }, scaled(60_000));
});

describe('dashboard', () => {
  it('admins: the whole system with the hypervisors; managers: their category, no hypervisor', async () => {
    const admin = ZAdminDashboard.parse((await json('/dashboard', tok.admin)).body);
    expect(admin.category).toBeNull();
    expect(admin.users_online).toBeGreaterThanOrEqual(5);
    expect(admin.desktops_total).toBeGreaterThan(0);
    expect(admin.hypervisors).toMatchObject({ online: 1, total: 1, accepting: 1 });
    expect(admin.audit.length).toBeGreaterThan(0);

    const manager = ZAdminDashboard.parse((await json('/dashboard', tok.manager)).body);
    expect(manager.category).toBe('default');
    expect(manager.hypervisors).toBeNull();
    expect(manager.audit.every((e) => e.category_id === 'default')).toBe(true);
    const lab = ZAdminDashboard.parse((await json('/dashboard', tok.labmanager)).body);
    const labDesktops = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'desktop'), eq(schema.domains.categoryId, 'lab')));
    expect(lab.desktops_total).toBe(labDesktops.length);
    expect(lab.users_online).toBe(1); // the lab manager alone
    expect(manager.desktops_total + lab.desktops_total).toBeLessThanOrEqual(admin.desktops_total);
  });
});
