import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import { schema } from '../../src/db';
import { info } from '../../src/engine/disks';
import { createDesktopFromTemplate } from '../../src/modules/desktops/create';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

// Templates: made from a stopped desktop as reference §4.3 says (the desktop's disk becomes the
// read-only template base, the desktop goes on on a fresh overlay), duplicated, shared, disabled,
// deleted with their tree, turned back into desktops. Two real boots prove the desktop keeps its data.

let server: TestServer;
let advanced: string; // Teo (advanced, Teachers)
let nora: string; // student03, Students 1B
let sara: string; // student01, Students 1A
let admin: string;
let researcher: string; // another category
let demoTemplate: string;

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1 });
  [advanced, nora, sara, admin] = await Promise.all(['advanced', 'student03', 'student01', 'admin'].map((u) => loginToken(server, u)));
  researcher = (await login(server, 'researcher', DEMO_PASSWORD, 'lab')).token!;
  const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  demoTemplate = t!.id;
}, scaled(240_000));
afterAll(async () => server?.close());

const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const expectCode = async (r: Response, status: number, code: string) => {
  const { body } = await json(r);
  expect({ status: r.status, code: body.description_code }).toEqual({ status, code });
  return body;
};
const newDesktop = async (token: string, name: string, templateId = demoTemplate) => {
  const r = await call(server, '/api/v3/persistent_desktop', { token, body: { name, template_id: templateId } });
  const { status, body } = await json(r);
  if (status !== 200) throw new Error(`${name}: ${status} ${JSON.stringify(body)}`);
  return body.id as string;
};
const makeTemplate = (token: string, body: Record<string, unknown>) => call(server, '/api/v3/template/', { token, body });
const row = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0];
const diskOf = async (domainId: string) => {
  const [link] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, domainId));
  return (await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, link!.storageId)))[0]!;
};
const setStatus = (id: string, status: string) => server.ctx.db.update(schema.domains).set({ status }).where(eq(schema.domains.id, id));
const own = async (token: string) => (await call(server, '/api/v3/user/templates', { token })).json() as Promise<{ id: string; name: string; status: string; progress: number | null; derivatives: number; duplicate_of: string | null; enabled: boolean }[]>;
const templateReady = (token: string, id: string) => until(`template ${id}`, async () => (await own(token)).find((t) => t.id === id && t.status === 'Stopped'));
const act = (token: string, action: string, id: string) => call(server, `/api/v3/desktop/${action}/${id}`, { token });
const state = async (id: string) => (await row(id))?.status;
const listen = (token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });

/** Boots a desktop and answers the boot count its guest read from its own disk. */
async function bootCount(token: string, id: string): Promise<number> {
  expect((await act(token, 'start', id)).status).toBe(200);
  await until('Started', async () => (await state(id)) === 'Started', 30_000);
  const m = await server.ctx.engine.driver.waitForSerial(id, /DEMO-DESKTOP READY .*boot=(\d+)/, scaled(90_000));
  return Number(m[1]);
}
async function stop(token: string, id: string) {
  await until('Started', async () => (await state(id)) === 'Started', 20_000);
  await act(token, 'stop', id);
  await act(token, 'stop', id); // the second stop is the force stop: the guest already synced its disk
  await until('Stopped', async () => (await state(id)) === 'Stopped', 30_000);
}

let course: string; // Teo's desktop that becomes the template
let courseTemplate: string;

describe('a template from a desktop (reference §4.3)', () => {
  it('moves the desktop disk into the template, continues the desktop on a fresh overlay, and the desktop keeps its data', async () => {
    course = await newDesktop(advanced, 'Course machine');
    const before = await diskOf(course);
    const demoBase = (await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, before.parentId!)))[0]!;

    expect(await bootCount(advanced, course)).toBe(1);
    // Not while it runs.
    await expectCode(await makeTemplate(advanced, { desktop_id: course, name: 'Course base' }), 409, 'domain_not_stopped');
    await stop(advanced, course);

    const socket = await listen(advanced);
    const events: { event: string; id: string; status?: string; state?: string; progress?: unknown }[] = [];
    for (const event of ['template_add', 'template_update', 'desktop_update']) {
      socket.on(event, (raw: string) => {
        const p = JSON.parse(raw);
        events.push({ event, id: p.id, status: p.status, state: p.state, progress: p.progress });
      });
    }
    const r = await makeTemplate(advanced, { desktop_id: course, name: 'Course base', description: 'Networks, week 1', enabled: true });
    const { body } = await json(r);
    expect(r.status).toBe(200);
    courseTemplate = body.id;
    await templateReady(advanced, courseTemplate);
    await until('desktop stopped', async () => (await state(course)) === 'Stopped');
    // (the template's and the desktop's last events are sent by different steps: either may come first)
    await until('last events', async () => events.some((e) => e.event === 'desktop_update' && e.state === 'Stopped') && events.some((e) => e.event === 'template_update' && e.id === courseTemplate && e.status === 'Stopped'));
    socket.close();

    // Live: the template appeared while being made, progressed, was ready; the desktop showed the work.
    expect(events.find((e) => e.event === 'template_add')).toMatchObject({ id: courseTemplate, status: 'Creating' });
    expect(events.some((e) => e.event === 'template_update' && e.id === courseTemplate && e.status === 'Stopped')).toBe(true);
    expect(events.some((e) => e.event === 'desktop_update' && e.id === course && e.state === 'CreatingTemplate')).toBe(true);
    const [job] = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, courseTemplate));
    expect(job).toMatchObject({ kind: 'template_create', status: 'done', progress: 100 });

    // The desktop's old disk is the template's now: moved (same storage id), read-only.
    const templateDisk = await diskOf(courseTemplate);
    expect(templateDisk.id).toBe(before.id);
    expect(templateDisk.kind).toBe('template');
    expect(templateDisk.path).toBe(`${server.ctx.engine.dirs.storage}/templates/${before.id}.qcow2`);
    expect(existsSync(before.path)).toBe(false);
    expect(statSync(templateDisk.path).mode & 0o777).toBe(0o444);
    // The desktop: a new, empty overlay backed by it; the chain goes on to the demo base.
    const after = await diskOf(course);
    expect(after.id).not.toBe(before.id);
    expect(after.parentId).toBe(before.id);
    const chain = (await info(after.path, { chain: true })).chain!;
    expect(chain.map((c) => c.path)).toEqual([after.path, templateDisk.path, demoBase.path]);
    expect(chain[0]!.actualSize).toBeLessThan(1024 * 1024);
    expect(await row(course)).toMatchObject({ status: 'Stopped', templateId: courseTemplate });
    expect(await row(courseTemplate)).toMatchObject({ kind: 'template', status: 'Stopped', templateId: demoTemplate, userId: await userIdOf(server, 'advanced') });

    // A desktop from the new template: one more layer on the same chain.
    const pupil = await newDesktop(advanced, 'From course base', courseTemplate);
    const pupilDisk = await diskOf(pupil);
    expect((await info(pupilDisk.path, { chain: true })).chain!.map((c) => c.path)).toEqual([pupilDisk.path, templateDisk.path, demoBase.path]);

    // The first desktop still boots, and sees what it wrote before: its second boot.
    expect(await bootCount(advanced, course)).toBe(2);
    await stop(advanced, course);
  }, scaled(240_000));
});

describe('template rules', () => {
  it('refuses servers, others\' desktops, taken names, and the user role', async () => {
    const server1 = await newDesktop(advanced, 'A server');
    await server.ctx.db.update(schema.domains).set({ server: true }).where(eq(schema.domains.id, server1));
    await expectCode(await makeTemplate(advanced, { desktop_id: server1, name: 'From server' }), 409, 'desktop_is_server');
    const [noraDesktop] = await (await call(server, '/api/v3/user/desktops', { token: nora })).json();
    await expectCode(await makeTemplate(advanced, { desktop_id: noraDesktop.id, name: 'Not mine' }), 403, 'forbidden');
    await expectCode(await makeTemplate(nora, { desktop_id: noraDesktop.id, name: 'Students cannot' }), 403, 'forbidden');
    await expectCode(await call(server, '/api/v3/user/templates', { token: nora }), 403, 'forbidden');
    const d = await newDesktop(advanced, 'Another one');
    await expectCode(await makeTemplate(advanced, { desktop_id: d, name: 'course BASE' }), 409, 'new_template_name_exists');
    await expectCode(await makeTemplate(advanced, { desktop_id: d, name: 'no' }), 400, 'validation_error');
    await expectCode(await makeTemplate(advanced, { desktop_id: 'nope', name: 'Nothing' }), 404, 'desktop_not_found');
  });

  it('a failed creation job puts everything back: no template, the desktop on its own disk, stopped', async () => {
    const d = await newDesktop(advanced, 'Will fail');
    const disk = await diskOf(d);
    // Something already sits where the template disk would go: the job's chain check fails.
    const { writeFileSync } = await import('node:fs');
    const squatter = `${server.ctx.engine.dirs.storage}/templates/${disk.id}.qcow2`;
    writeFileSync(squatter, Buffer.alloc(1024 * 1024));
    const socket = await listen(advanced);
    const deleted: string[] = [];
    socket.on('template_delete', (raw: string) => deleted.push(JSON.parse(raw).id));
    const { body } = await json(await makeTemplate(advanced, { desktop_id: d, name: 'Doomed template' }));
    const [job] = await until('job failed', async () => {
      const rows = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, body.id));
      return rows[0]?.status === 'failed' && rows;
    });
    expect(job!.error).toMatch(/lost its own base/);
    await until('template_delete', async () => deleted.includes(body.id));
    socket.close();
    expect(await row(body.id)).toBeUndefined();
    expect(await row(d)).toMatchObject({ status: 'Stopped', templateId: demoTemplate });
    const after = await diskOf(d);
    expect(after).toMatchObject({ id: disk.id, path: disk.path, kind: 'desktop' });
    expect(existsSync(disk.path)).toBe(true);
    expect((await info(disk.path)).backingFile).not.toBeNull();
    expect(await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.parentId, disk.id))).toEqual([]);
    const { rmSync } = await import('node:fs');
    rmSync(squatter, { force: true });
  });

  it('refuses a template over the quota and the group and category limits (428)', async () => {
    const d = await newDesktop(advanced, 'Quota probe');
    const teo = await userIdOf(server, 'advanced');
    const full = (templates: number) => ({
      desktops: 99, volatile: 99, templates, isos: 99, deployments_total: 99, deployment_desktops: 99, started_deployment_desktops: 99,
      running: 99, memory: 99, vcpus: 99, desktops_disk_size: 99, total_size: 999, total_soft_size: 999, storage_size: 999, media_size: 999,
      personal_drive: 0,
    });
    await server.ctx.db.update(schema.users).set({ quota: full(1) }).where(eq(schema.users.id, teo));
    await expectCode(await makeTemplate(advanced, { desktop_id: d, name: 'Over quota' }), 428, 'template_new_user_quota_exceeded');
    await expectCode(await call(server, '/api/v3/templates/new/check_quota', { token: advanced }), 428, 'template_new_user_quota_exceeded');
    await server.ctx.db.update(schema.users).set({ quota: null }).where(eq(schema.users.id, teo));
    await server.ctx.db.update(schema.groups).set({ limits: { ...full(1), users: 99 } }).where(eq(schema.groups.id, 'default-teachers'));
    await expectCode(await makeTemplate(advanced, { desktop_id: d, name: 'Over group' }), 428, 'template_new_group_limit_exceeded');
    await server.ctx.db.update(schema.groups).set({ limits: null }).where(eq(schema.groups.id, 'default-teachers'));
    await server.ctx.db.update(schema.categories).set({ limits: { ...full(1), users: 99 } }).where(eq(schema.categories.id, 'default'));
    await expectCode(await makeTemplate(advanced, { desktop_id: d, name: 'Over category' }), 428, 'template_new_category_limit_exceeded');
    await server.ctx.db.update(schema.categories).set({ limits: null }).where(eq(schema.categories.id, 'default'));
    const me = await (await call(server, '/api/v3/user', { token: advanced })).json();
    expect(me.used.templates).toBe(1);
  });
});

describe('sharing, duplicates, the tree, deleting, back to a desktop', () => {
  let duplicate: string;
  let noraFromCourse: string;

  it('shares with a group: its users see the template and make desktops from it; others do not', async () => {
    const hidden = await (await call(server, '/api/v3/user/templates/allowed/all', { token: nora })).json();
    expect(hidden.map((t: { id: string }) => t.id)).not.toContain(courseTemplate);
    const r = await call(server, '/api/v3/template/update', { token: advanced, method: 'PUT', body: { id: courseTemplate, allowed: { groups: ['default-students-1b'] } } });
    expect((await json(r)).body.allowed).toEqual({ roles: false, categories: false, groups: ['default-students-1b'], users: false });
    const shared = await (await call(server, '/api/v3/user/templates/allowed/shared', { token: nora })).json();
    expect(shared.find((t: { id: string }) => t.id === courseTemplate)).toMatchObject({ name: 'Course base', user_name: 'Teo Teacher' });
    noraFromCourse = await newDesktop(nora, 'Nora in the course', courseTemplate);
    await expectCode(
      await call(server, '/api/v3/persistent_desktop', { token: sara, body: { name: 'Sara tries', template_id: courseTemplate } }),
      403,
      'template_not_allowed',
    );
    // An empty list is everyone (of the owner's category).
    await call(server, '/api/v3/template/update', { token: advanced, method: 'PUT', body: { id: courseTemplate, allowed: { groups: [] } } });
    expect((await (await call(server, '/api/v3/user/templates/allowed/all', { token: sara })).json()).map((t: { id: string }) => t.id)).toContain(courseTemplate);
    expect((await (await call(server, '/api/v3/user/templates/allowed/all', { token: researcher })).json()).map((t: { id: string }) => t.id)).not.toContain(courseTemplate);
    await call(server, '/api/v3/template/update', { token: advanced, method: 'PUT', body: { id: courseTemplate, allowed: { groups: ['default-students-1b'] } } });
  });

  it('searches groups and users to share with: 2 letters at least, own category unless admin', async () => {
    const search = (token: string, table: string, body: unknown) => call(server, `/api/v3/allowed/table/${table}`, { token, body });
    const groups = await (await search(advanced, 'groups', { term: 'stu' })).json();
    expect(groups.map((g: { name: string }) => g.name)).toEqual(['Students 1A', 'Students 1B']);
    expect(await (await search(advanced, 'groups', { term: 'lab' })).json()).toEqual([]);
    expect((await (await search(admin, 'groups', { term: 'lab' })).json()).map((g: { name: string }) => g.name)).toEqual(['Lab members']);
    await expectCode(await search(advanced, 'groups', { term: 's' }), 400, 'validation_error');
    const users = await (await search(advanced, 'users', { term: 'nora' })).json();
    expect(users).toEqual([{ id: await userIdOf(server, 'student03'), name: 'Nora Student', detail: 'student03' }]);
    expect(await (await search(advanced, 'users', { term: 'rui' })).json()).toEqual([]);
    const byIds = await (await search(advanced, 'groups', { ids: ['default-students-1b', 'lab-default'] })).json();
    expect(byIds.map((g: { name: string }) => g.name)).toEqual(['Students 1B']);
    await expectCode(await search(nora, 'users', { term: 'sara' }), 403, 'forbidden');
    await expectCode(await search(advanced, 'roles', { term: 'ad' }), 400, 'validation_error');
  });

  it('duplicates a template on the same disk', async () => {
    const r = await call(server, `/api/v3/template/duplicate/${courseTemplate}`, { token: advanced, body: { name: 'Course base copy', enabled: true } });
    duplicate = (await json(r)).body.id;
    expect((await diskOf(duplicate)).id).toBe((await diskOf(courseTemplate)).id);
    const list = await own(advanced);
    expect(list.find((t) => t.id === duplicate)).toMatchObject({ duplicate_of: courseTemplate, status: 'Stopped', enabled: true });
    expect(list.find((t) => t.id === courseTemplate)!.derivatives).toBe(4); // Teo's two desktops, Nora's, the duplicate
    await expectCode(
      await call(server, `/api/v3/template/duplicate/${courseTemplate}`, { token: advanced, body: { name: 'Course base copy' } }),
      409,
      'new_template_name_exists',
    );
    await expectCode(await call(server, `/api/v3/template/duplicate/${courseTemplate}`, { token: researcher, body: { name: 'Not for me' } }), 403, 'template_not_allowed');
  });

  it('disabling deletes the temporary desktops made from it', async () => {
    const teo = (await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'advanced')))[0]!;
    const template = (await row(courseTemplate))!;
    const temporary = await createDesktopFromTemplate(server.ctx.db, server.ctx.engine, template, teo, { name: 'Course base', persistent: false, status: 'Stopped' });
    const volatileDisk = await diskOf(temporary.id);
    const r = await call(server, '/api/v3/template/update', { token: advanced, method: 'PUT', body: { id: courseTemplate, enabled: false } });
    expect((await json(r)).body.enabled).toBe(false);
    expect(await row(temporary.id)).toBeUndefined();
    expect(existsSync(volatileDisk.path)).toBe(false);
    expect(await row(noraFromCourse)).toBeDefined(); // persistent ones stay
    await expectCode(await call(server, '/api/v3/persistent_desktop', { token: nora, body: { name: 'While disabled', template_id: courseTemplate } }), 403, 'template_not_allowed');
    await call(server, '/api/v3/template/update', { token: advanced, method: 'PUT', body: { id: courseTemplate, enabled: true } });
  });

  it('shows the tree of derivatives with owners; what others own is pending', async () => {
    const tree = await (await call(server, `/api/v3/template/tree/${courseTemplate}`, { token: advanced })).json();
    expect(tree).toMatchObject({ id: courseTemplate, name: 'Course base', is_duplicated: true, desktops: 3, templates: 1 });
    const kids = tree.tree.children.map((c: { name: string; kind: string; user_name: string; duplicate: boolean; pending: boolean }) => [c.name, c.kind, c.user_name, c.duplicate, c.pending]);
    expect(kids).toEqual([
      ['Course base copy', 'template', 'Teo Teacher', true, false],
      ['Course machine', 'desktop', 'Teo Teacher', false, false],
      ['From course base', 'desktop', 'Teo Teacher', false, false],
      ['Nora in the course', 'desktop', 'Nora Student', false, true],
    ]);
    expect(tree.pending).toEqual([{ id: noraFromCourse, name: 'Nora in the course', kind: 'desktop', user_name: 'Nora Student' }]);
    // Nested: a desktop from the duplicate sits under the duplicate.
    const fromCopy = await newDesktop(advanced, 'From the copy', duplicate);
    const again = await (await call(server, `/api/v3/template/tree/${courseTemplate}`, { token: advanced })).json();
    expect(again.tree.children[0].children.map((c: { id: string }) => c.id)).toEqual([fromCopy]);
    await expectCode(await call(server, `/api/v3/template/tree/${courseTemplate}`, { token: researcher }), 403, 'forbidden');
  });

  it('refuses to delete while others own dependants (403) or a desktop runs (409)', async () => {
    const refused = await expectCode(await call(server, `/api/v3/template/${courseTemplate}`, { token: advanced, method: 'DELETE' }), 403, 'template_delete_not_owner');
    expect(refused.params).toMatchObject({ pending: 1 });
    await setStatus(noraFromCourse, 'Started');
    await expectCode(await call(server, `/api/v3/template/${courseTemplate}`, { token: admin, method: 'DELETE' }), 409, 'desktops_not_stopped');
    await setStatus(noraFromCourse, 'Stopped');
  });

  it('turns a template back into a desktop only without derivatives and duplicates (confirmed in the web)', async () => {
    const to = (token: string, template_id: string, name: string) => call(server, '/api/v3/template/to/desktop', { token, body: { template_id, name } });
    await expectCode(await to(advanced, courseTemplate, 'Back again'), 409, 'template_is_duplicated');
    await expectCode(await to(advanced, duplicate, 'Back again'), 409, 'template_is_duplicated');

    // A template whose only derivative is its desktop: with the desktop there, refused; gone, allowed.
    const d = await newDesktop(advanced, 'Short lived');
    const { body } = await json(await makeTemplate(advanced, { desktop_id: d, name: 'Short template' }));
    await templateReady(advanced, body.id);
    await expectCode(await to(advanced, body.id, 'Back again'), 409, 'template_has_derivatives');
    expect((await call(server, `/api/v3/desktop/${d}/permanent`, { token: advanced, method: 'DELETE' })).status).toBe(200);
    await expectCode(await to(advanced, body.id, 'A server'), 409, 'new_desktop_name_exists');
    await expectCode(await to(nora, body.id, 'Nora takes it'), 403, 'forbidden');
    const r = await to(advanced, body.id, 'Back again');
    expect(r.status).toBe(200);
    expect(await row(body.id)).toMatchObject({ kind: 'desktop', name: 'Back again', persistent: true, status: 'Stopped' });
    const disk = await diskOf(body.id);
    expect(disk.kind).toBe('desktop');
    expect(disk.path).toBe(`${server.ctx.engine.dirs.storage}/desktops/${disk.id}.qcow2`);
    expect(statSync(disk.path).mode & 0o777).toBe(0o644);
    expect((await own(advanced)).some((t) => t.id === body.id)).toBe(false);
    const desktops = await (await call(server, '/api/v3/user/desktops', { token: advanced })).json();
    expect(desktops.some((x: { id: string }) => x.id === body.id)).toBe(true);
  });

  it('deletes a duplicate alone (the shared disk stays), then a template with its whole tree into the bin', async () => {
    const sharedDisk = await diskOf(courseTemplate);
    const fromCopy = (await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.templateId, duplicate), eq(schema.domains.kind, 'desktop'))))[0]!;
    await call(server, `/api/v3/desktop/${fromCopy.id}/permanent`, { token: advanced, method: 'DELETE' });
    const socket = await listen(advanced);
    const deleted: string[] = [];
    socket.on('template_delete', (raw: string) => deleted.push(JSON.parse(raw).id));
    expect((await call(server, `/api/v3/template/${duplicate}`, { token: advanced, method: 'DELETE' })).status).toBe(200);
    expect(await row(duplicate)).toBeUndefined();
    expect(existsSync(sharedDisk.path)).toBe(true);
    expect((await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, sharedDisk.id)))[0]!.status).toBe('ready');

    // The admin may act for everyone: the template and all it holds go.
    expect((await call(server, `/api/v3/template/${courseTemplate}`, { token: admin, method: 'DELETE' })).status).toBe(200);
    for (const id of [courseTemplate, course, noraFromCourse]) expect(await row(id)).toBeUndefined();
    await until('template_delete events', async () => deleted.includes(duplicate) && deleted.includes(courseTemplate));
    socket.close();
    const bin = await server.ctx.db.select().from(schema.recycleBin).where(eq(schema.recycleBin.itemName, 'Course base'));
    expect(bin).toHaveLength(1);
    expect(bin[0]!.items.templates.map((t) => t.id)).toEqual([courseTemplate]);
    expect(bin[0]!.items.desktops.map((d) => d.name).sort()).toEqual(['Course machine', 'From course base', 'Nora in the course']);
    expect((await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, sharedDisk.id)))[0]!.status).toBe('recycled');
  });
});
