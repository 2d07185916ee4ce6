import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { and, eq, inArray } from 'drizzle-orm';
import { schema } from '../../src/db';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';

// Deployments (spec core §5–§7, reference §2.8) against the real server: a teacher makes one
// desktop per student of a group (a persisted job with live progress), co-owners share the work
// but neither delete nor change owners, students see their desktop only while it is visible, and
// deleting goes to the recycle bin (restorable) or for good with the disks. One real boot only.

let server: TestServer;
let teo: string; // advanced, Teachers (the owner)
let ana: string; // a second teacher, made co-owner
let sara: string; // student01, Students 1A
let nora: string; // student03, Students 1B
let researcher: string; // advanced of another category
let admin: string;
let template: string;
let teoId: string;
let anaId: string;

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1, env: { PUBLIC_URL: 'http://portal.test' } });
  const db = server.ctx.db;
  // Ana: another teacher of the default category (Teo's copy: same password).
  const [teoRow] = await db.select().from(schema.users).where(eq(schema.users.username, 'advanced'));
  await db.insert(schema.users).values({ ...teoRow!, id: 'ana-teacher', uid: 'ana', username: 'ana', name: 'Ana Teacher', email: '' });
  [teo, ana, sara, nora, admin] = await Promise.all(['advanced', 'ana', 'student01', 'student03', 'admin'].map((u) => loginToken(server, u)));
  researcher = (await login(server, 'researcher', DEMO_PASSWORD, 'lab')).token!;
  const [t] = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  template = t!.id;
  teoId = await userIdOf(server, 'advanced');
  anaId = 'ana-teacher';
}, scaled(240_000));
afterAll(async () => server?.close());

const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const expectCode = async (r: Response, status: number, code: string) => {
  const body = await r.json();
  expect({ status: r.status, code: body.description_code }).toEqual({ status, code });
  return body;
};
const put = (token: string, path: string, body: unknown = {}) => call(server, `/api/v3${path}`, { token, method: 'PUT', body });
const get = (token: string, path: string) => call(server, `/api/v3${path}`, { token });
const listen = (token: string) => socketOf(server, token);
const record = recordEvents;
const newDeployment = (token: string, over: Record<string, unknown> = {}) =>
  call(server, '/api/v3/deployments', {
    token,
    body: {
      name: 'Networks lab',
      description: 'Week 1',
      template_id: template,
      desktop_name: 'Lab desktop',
      visible: true,
      allowed: { groups: ['default-students-1a'], users: false },
      user_permissions: ['recreate'],
      ...over,
    },
  });
const detail = async (token: string, id: string) => (await get(token, `/deployment/${id}`)).json();
const desktopsOf = (id: string) => server.ctx.db.select().from(schema.domains).where(eq(schema.domains.tag, id));
const studentList = async (token: string) => ((await (await get(token, '/user/desktops')).json()) as { id: string; tag: string | false; permissions: string[] }[]);
const creationDone = (id: string) =>
  until('creation job done', async () => {
    const jobs = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
    return jobs.length > 0 && jobs.every((j) => j.status !== 'running' && j.status !== 'queued');
  });
const setTeoQuota = (q: Record<string, number> | null) =>
  server.ctx.db
    .update(schema.users)
    .set({
      quota: q && {
        desktops: 10, volatile: 5, templates: 5, isos: 5, deployments_total: 5, deployment_desktops: 50, started_deployment_desktops: 20,
        running: 3, memory: 8, vcpus: 8, desktops_disk_size: 50, total_size: 100, total_soft_size: 80, storage_size: 100, media_size: 50,
        personal_drive: 0, ...q,
      },
    })
    .where(eq(schema.users.id, teoId));

let lab: string; // Teo's deployment for Students 1A
const STUDENTS_1A = 3; // Uma (main group), Sara and Pau

describe('who may, and what is checked', () => {
  it('refuses the user role (403) and checks the input with the catalogue codes', async () => {
    await expectCode(await get(sara, '/deployments'), 403, 'forbidden');
    await expectCode(await newDeployment(sara), 403, 'forbidden');
    await expectCode(await newDeployment(teo, { allowed: { groups: false, users: false } }), 400, 'deployment_no_users');
    await expectCode(await newDeployment(teo, { name: 'x' }), 400, 'validation_error');
    await expectCode(await newDeployment(teo, { desktop_name: undefined }), 400, 'validation_error');
    await expectCode(await newDeployment(teo, { guest_properties: { viewers: {} } }), 400, 'one_viewer_minimum');
    await expectCode(await newDeployment(teo, { hardware: { videos: ['none'], reservables: { vgpus: ['NVIDIA-A40-2Q'] } } }), 400, 'only_works_rdp');
    await expectCode(await newDeployment(teo, { hardware: { reservables: { vgpus: ['no-such-gpu'] } } }), 400, 'reservable_not_found');
    await expectCode(await newDeployment(teo, { allowed: { groups: ['no-such-group'] } }), 400, 'bad_request');
    // Another category's group is out of the teacher's scope.
    await expectCode(await newDeployment(teo, { allowed: { groups: ['lab-default'] } }), 400, 'bad_request');
    await expectCode(await newDeployment(teo, { template_id: 'no-such-template' }), 404, 'template_not_found');
    await expectCode(await get(teo, '/deployment/no-such-deployment'), 404, 'deployment_not_found');
    expect(await server.ctx.db.select().from(schema.deployments)).toHaveLength(0);
  });

  it('lets the teacher reach the students groups, and counts their users once each', async () => {
    const groups = await (await call(server, '/api/v3/allowed/table/groups', { token: teo, body: { term: 'Stud' } })).json();
    expect(groups.map((g: { id: string }) => g.id)).toEqual(expect.arrayContaining(['default-students-1a', 'default-students-1b']));
    expect(await (await put(teo, '/groups_users/count', { groups: ['default-students-1a'] })).json()).toEqual({ quantity: STUDENTS_1A });
    // Uma is in 1A and (secondary) in 1B: counted once.
    expect(await (await put(teo, '/groups_users/count', { groups: ['default-students-1a', 'default-students-1b'] })).json()).toEqual({ quantity: 5 });
    await expectCode(await put(teo, '/groups_users/count', { groups: 'nope' }), 400, 'validation_error');
    expect(await (await put(teo, '/groups_users/count', { groups: [], users: [] })).json()).toEqual({ quantity: 0 });
    // As creation reads it: an empty list is everyone of the teacher's category (not the lab's).
    const everyone = await server.ctx.db.select().from(schema.users).where(and(eq(schema.users.categoryId, 'default'), eq(schema.users.active, true)));
    expect(await (await put(teo, '/groups_users/count', { allowed: { groups: [], users: false } })).json()).toEqual({ quantity: everyone.length });
    expect(await (await put(teo, '/groups_users/count', { allowed: { groups: ['default-students-1b'], users: false } })).json()).toEqual({ quantity: 3 });
  });

  it('checks the quota before creating: deployments and room for every desktop (428)', async () => {
    const check = (allowed: unknown) => call(server, '/api/v3/deployments/new/check_quota', { token: teo, body: { allowed } });
    expect((await json(await check({ groups: ['default-students-1a'] }))).body).toEqual({});
    await setTeoQuota({ deployment_desktops: STUDENTS_1A - 1 });
    await expectCode(await check({ groups: ['default-students-1a'] }), 428, 'deployment_desktop_new_user_quota_exceeded');
    await expectCode(await newDeployment(teo), 428, 'deployment_desktop_new_user_quota_exceeded');
    // An empty list is everyone of the teacher's category: more than 5 people.
    await setTeoQuota({ deployment_desktops: 5 });
    expect((await json(await check({ groups: ['default-students-1a'] }))).body).toEqual({});
    await expectCode(await check({ groups: [] }), 428, 'deployment_desktop_new_user_quota_exceeded');
    await setTeoQuota({ deployments_total: 0 });
    await expectCode(await check({ groups: ['default-students-1a'] }), 428, 'deployment_new_user_quota_exceeded');
    await setTeoQuota(null);
    await expectCode(await check({ groups: false, users: false }), 400, 'deployment_no_users');
  });
});

describe('a deployment for a group', () => {
  it('creates one thin desktop per student as a job, with live progress to the owner', async () => {
    const socket = await listen(teo);
    const events = record(socket, ['creating_desktops', 'end_creating_desktops', 'deployments_add', 'deploymentdesktop_add']);
    const r = await newDeployment(teo);
    const { status, body } = await json(r);
    expect(status).toBe(200);
    lab = body.id;
    await until('end of creation', async () => events.some((e) => e.event === 'end_creating_desktops'));
    socket.close();

    expect(events.find((e) => e.event === 'deployments_add')?.payload).toMatchObject({ id: lab, name: 'Networks lab', is_owner: true });
    const progress = events.filter((e) => e.event === 'creating_desktops').map((e) => e.payload);
    expect(progress[0]).toEqual({ deployment_id: lab, created: 0, failed: 0, total: STUDENTS_1A });
    expect(progress.at(-1)).toEqual({ deployment_id: lab, created: STUDENTS_1A, failed: 0, total: STUDENTS_1A });
    expect(events.find((e) => e.event === 'end_creating_desktops')?.payload).toEqual({ deployment_id: lab, created: STUDENTS_1A, failed: 0, total: STUDENTS_1A });
    expect(events.filter((e) => e.event === 'deploymentdesktop_add')).toHaveLength(STUDENTS_1A);
    const [job] = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, lab));
    expect(job).toMatchObject({ kind: 'deployment_create', status: 'done', progress: 100 });

    // Each desktop: its student's, a thin overlay on the template's disk.
    const rows = await desktopsOf(lab);
    expect(rows).toHaveLength(STUDENTS_1A);
    const [templateLink] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, template));
    const links = await server.ctx.db.select().from(schema.domainDisks).where(inArray(schema.domainDisks.domainId, rows.map((d) => d.id)));
    const disks = await server.ctx.db.select().from(schema.storage).where(inArray(schema.storage.id, links.map((l) => l.storageId)));
    expect(disks).toHaveLength(STUDENTS_1A);
    for (const d of disks) expect(d).toMatchObject({ parentId: templateLink!.storageId, userId: expect.any(String) });
    expect(new Set(rows.map((d) => d.userId)).size).toBe(STUDENTS_1A);
    expect(rows.every((d) => d.name === 'Lab desktop' && d.status === 'Stopped' && d.tagVisible)).toBe(true);
  });

  it('lists and details it for the owner (counts, desktops with their users)', async () => {
    const list = await (await get(teo, '/deployments')).json();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: lab, tag: lab, name: 'Networks lab', user: teoId, template: expect.any(String), desktop_name: 'Lab desktop', visible: true,
      totalDesktops: STUDENTS_1A, visibleDesktops: STUDENTS_1A, startedDesktops: 0, creatingDesktops: 0, needs_booking: false,
      booking_id: false, co_owners: [], user_permissions: ['recreate'], creation: null, is_owner: true, can_delete: true,
    });
    const d = await detail(teo, lab);
    expect(d.desktops).toHaveLength(STUDENTS_1A);
    expect(d.desktops.map((x: { user_name: string }) => x.user_name).sort()).toEqual(['Pau Student', 'Sara Student', 'Uma User']);
    expect(d.desktops[0]).toMatchObject({ viewer: false, group_name: 'Students 1A', category_name: expect.any(String), deployment_id: lab, user_photo: expect.any(String) });
    const info = await (await get(teo, `/deployment/info/${lab}`)).json();
    expect(info).toMatchObject({ id: lab, template_id: template, allowed: { groups: [{ id: 'default-students-1a', name: 'Students 1A' }], users: false } });
    expect(info.hardware.interfaces.every((i: { mac: string }) => i.mac === '')).toBe(true);
    // Another category's teacher: not theirs.
    await expectCode(await get(researcher, `/deployment/${lab}`), 403, 'forbidden');
    expect(await (await get(researcher, '/deployments')).json()).toEqual([]);
  });

  it('shows each student their own desktop while visible, and hides it live', async () => {
    const saraId = await userIdOf(server, 'student01');
    const mine = (await desktopsOf(lab)).find((d) => d.userId === saraId)!;
    expect((await studentList(sara)).find((d) => d.id === mine.id)).toMatchObject({ tag: lab, permissions: ['recreate'], editable: false });
    // Nora (1B) gets nothing of it.
    expect((await studentList(nora)).some((d) => d.tag === lab)).toBe(false);
    await expectCode(await get(nora, `/desktop/${mine.id}/viewer/browser-vnc`), 403, 'forbidden');

    const socket = await listen(sara);
    const events = record(socket, ['desktop_add', 'desktop_delete']);
    expect(await (await put(teo, `/deployments/visible/${lab}`, { stop_started_domains: false })).json()).toEqual({ id: lab, visible: false });
    expect((await studentList(sara)).some((d) => d.tag === lab)).toBe(false);
    await until('desktop_delete', async () => events.some((e) => e.event === 'desktop_delete' && e.payload.id === mine.id));
    expect(await (await put(teo, `/deployments/visible/${lab}`, { stop_started_domains: false })).json()).toEqual({ id: lab, visible: true });
    await until('desktop_add', async () => events.some((e) => e.event === 'desktop_add' && e.payload.id === mine.id));
    expect((await studentList(sara)).some((d) => d.id === mine.id)).toBe(true);

    // One desktop alone.
    expect(await (await put(teo, `/deployments/domain/visible/${mine.id}`, { visible: false })).json()).toEqual({ id: mine.id, visible: false });
    expect((await studentList(sara)).some((d) => d.id === mine.id)).toBe(false);
    expect((await (await get(teo, '/deployments')).json())[0].visibleDesktops).toBe(STUDENTS_1A - 1);
    await put(teo, `/deployments/domain/visible/${mine.id}`, { visible: true });
    socket.close();
  });

  it("a change of the engine begun before the visibility switch cannot undo it on the teacher's screen", async () => {
    const saraId = await userIdOf(server, 'student01');
    const [before] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.tag, lab), eq(schema.domains.userId, saraId)));
    expect(before!.tagVisible).toBe(true);
    const socket = await listen(teo);
    const events = record(socket, ['deploymentdesktop_update']);
    expect(await (await put(teo, `/deployments/domain/visible/${before!.id}`, { visible: false })).json()).toEqual({ id: before!.id, visible: false });
    // A state change the engine read before the switch, announced after it (a busy machine).
    server.app.lifecycle.changes.emit('changed', before!);
    await until('both updates', async () => events.filter((e) => e.event === 'deploymentdesktop_update' && e.payload.id === before!.id).length >= 2);
    const last = events.filter((e) => e.event === 'deploymentdesktop_update' && e.payload.id === before!.id).at(-1)!;
    expect(last.payload.visible).toBe(false);
    await put(teo, `/deployments/domain/visible/${before!.id}`, { visible: true });
    socket.close();
  });
});

describe('co-owners', () => {
  it('share the deployment but neither change owners nor delete (403)', async () => {
    await expectCode(await put(teo, `/deployment/co-owners/${lab}`, { co_owners: ['no-such-user'] }), 400, 'user_not_found');
    // A student cannot co-own.
    await expectCode(await put(teo, `/deployment/co-owners/${lab}`, { co_owners: [await userIdOf(server, 'student02')] }), 400, 'bad_request');
    const socket = await listen(ana);
    const events = record(socket, ['deployments_add']);
    const r = await put(teo, `/deployment/co-owners/${lab}`, { co_owners: [anaId] });
    expect(await r.json()).toEqual({ owner: { id: teoId, name: 'Teo Teacher' }, co_owners: [{ id: anaId, name: 'Ana Teacher' }] });
    await until('deployments_add to the co-owner', async () => events.some((e) => e.payload.id === lab));
    socket.close();

    const list = await (await get(ana, '/deployments')).json();
    expect(list.map((d: { id: string }) => d.id)).toEqual([lab]);
    expect(list[0]).toMatchObject({ is_owner: false, can_delete: false, can_change_owners: false, co_owners: [anaId] });
    expect((await detail(ana, lab)).desktops).toHaveLength(STUDENTS_1A);
    expect(await (await get(ana, `/deployment/permissions/${lab}`)).json()).toEqual(['recreate']);
    await expectCode(await put(ana, `/deployment/co-owners/${lab}`, { co_owners: [] }), 403, 'deployment_owner_only');
    await expectCode(await call(server, `/api/v3/deployments/${lab}`, { token: ana, method: 'DELETE' }), 403, 'deployment_owner_only');
    await expectCode(await call(server, `/api/v3/deployments/${lab}/permanent`, { token: ana, method: 'DELETE' }), 403, 'deployment_owner_only');
    // Editing is theirs too.
    const edited = await put(ana, `/deployment/${lab}`, { description: 'Week 2' });
    expect((await edited.json()).description).toBe('Week 2');
    expect((await desktopsOf(lab)).every((d) => d.description === 'Week 2')).toBe(true);

    // A new make goes to every desktop, each keeping its own MAC address.
    const macs = new Map((await desktopsOf(lab)).map((d) => [d.id, d.hardware.interfaces[0]!.mac]));
    const remade = await put(ana, `/deployment/${lab}`, { hardware: { vcpus: 2, memory: 1.5 } });
    expect(remade.status).toBe(200);
    for (const d of await desktopsOf(lab)) {
      expect(d.hardware).toMatchObject({ vcpus: 2, memoryMb: 1536 });
      expect(d.hardware.interfaces[0]!.mac).toBe(macs.get(d.id));
    }
    await expectCode(await put(ana, `/deployment/${lab}`, { hardware: { memory: 0.3 } }), 400, 'hardware_memory_step');

    // The students' recreate right: without it, a student cannot start their desktop over.
    const saraId = await userIdOf(server, 'student01');
    const mine = (await desktopsOf(lab)).find((d) => d.userId === saraId)!;
    expect((await (await put(ana, `/deployment/${lab}`, { user_permissions: [] })).json()).user_permissions).toEqual([]);
    expect((await studentList(sara)).find((d) => d.id === mine.id)!.permissions).toEqual([]);
    await expectCode(await call(server, `/api/v3/domain/${mine.id}/recreate_disk`, { token: sara, method: 'POST' }), 403, 'forbidden');
    // Nor change what it is made of: the deployment decides.
    await expectCode(await put(sara, `/domain/${mine.id}`, { description: 'mine now' }), 403, 'forbidden');
    await put(ana, `/deployment/${lab}`, { user_permissions: ['recreate'] });
    expect((await call(server, `/api/v3/domain/${mine.id}/recreate_disk`, { token: sara, method: 'POST' })).status).toBe(200);
  });
});

describe('running it', () => {
  it('starts within the started-desktops quota, shows the screens to owner and co-owner, stops them when hidden', async () => {
    await setTeoQuota({ started_deployment_desktops: 0 });
    await expectCode(await put(teo, `/deployments/start/${lab}`), 428, 'deployment_start_user_quota_exceeded');
    // One desktop only: the machine is slow (TCG).
    await setTeoQuota({ started_deployment_desktops: 1 });
    const socket = await listen(ana);
    const events = record(socket, ['deploymentdesktop_update', 'deployments_update']);
    expect(await (await put(teo, `/deployments/start/${lab}`)).json()).toEqual({});
    const running = await until('one desktop started', async () => (await desktopsOf(lab)).find((d) => d.status === 'Started'), 60_000);
    expect((await desktopsOf(lab)).filter((d) => d.status !== 'Stopped')).toHaveLength(1);
    await setTeoQuota(null);
    // Live, to the co-owner too: the desktop's state, then the deployment's counts.
    await until('live state', async () => events.some((e) => e.event === 'deploymentdesktop_update' && e.payload.id === running.id && e.payload.state === 'Started'));
    await until('live counts', async () => events.some((e) => e.event === 'deployments_update' && e.payload.startedDesktops === 1));
    socket.close();

    // The videowall: the started desktop carries a browser viewer; owner and co-owner may open it.
    const d = await detail(teo, lab);
    expect(d.startedDesktops).toBe(1);
    const wall = d.desktops.find((x: { id: string }) => x.id === running.id).viewer;
    expect(wall).toEqual({ kind: 'browser', protocol: 'vnc', viewer: '/viewer/vnc', ticket_url: `/desktop/${running.id}/viewer/browser-vnc` });
    expect(d.desktops.filter((x: { viewer: unknown }) => x.viewer !== false)).toHaveLength(1);
    const ticket = await (await get(ana, wall.ticket_url)).json();
    expect(ticket).toMatchObject({ kind: 'browser', protocol: 'vnc', cookie: expect.any(String) });
    expect((await get(admin, `/desktop/${running.id}/viewer/browser-vnc`)).status).toBe(200);
    await expectCode(await get(researcher, `/desktop/${running.id}/viewer/browser-vnc`), 403, 'forbidden');

    // Not deleted while a desktop runs.
    await expectCode(await call(server, `/api/v3/deployments/${lab}`, { token: teo, method: 'DELETE' }), 428, 'deployment_stop');

    // Hiding with stop_started_domains: the running desktop is force-stopped.
    expect(await (await put(teo, `/deployments/visible/${lab}`, { stop_started_domains: true })).json()).toEqual({ id: lab, visible: false });
    await until('stopped by hiding', async () => (await desktopsOf(lab)).every((x) => x.status === 'Stopped'), 30_000);
    await put(teo, `/deployments/visible/${lab}`, { stop_started_domains: false });
    // Stop all on stopped desktops does nothing wrong.
    expect((await put(teo, `/deployments/stop/${lab}`)).status).toBe(200);
  }, scaled(120_000));

  it('recreates the desktops that are missing', async () => {
    const saraId = await userIdOf(server, 'student01');
    const mine = (await desktopsOf(lab)).find((d) => d.userId === saraId)!;
    // Sara deletes her desktop of the deployment: gone for good (a deployment's).
    expect((await call(server, `/api/v3/desktop/${mine.id}`, { token: sara, method: 'DELETE' })).status).toBe(200);
    expect(await desktopsOf(lab)).toHaveLength(STUDENTS_1A - 1);
    const r = await put(ana, `/deployments/${lab}`);
    expect(await r.json()).toEqual({ id: lab, missing: 1 });
    await creationDone(lab);
    const rows = await desktopsOf(lab);
    expect(rows).toHaveLength(STUDENTS_1A);
    expect(rows.some((d) => d.userId === saraId && d.id !== mine.id)).toBe(true);
    expect(await (await put(teo, `/deployments/${lab}`)).json()).toEqual({ id: lab, missing: 0 });
  });

  it('resumes an interrupted creation after a restart, without making a desktop twice', async () => {
    const saraId = await userIdOf(server, 'student01');
    const mine = (await desktopsOf(lab)).find((d) => d.userId === saraId)!;
    expect((await call(server, `/api/v3/desktop/${mine.id}`, { token: sara, method: 'DELETE' })).status).toBe(200);
    // As a server stopped mid-creation leaves it: a job still 'running' for the three users.
    const users = (await desktopsOf(lab)).map((d) => d.userId).concat(saraId);
    await server.ctx.db.insert(schema.jobs).values({
      id: 'interrupted-creation', kind: 'deployment_create', status: 'running', userId: teoId, targetId: lab, params: { userIds: users, created: 1, failed: 0 },
    });
    await server.ctx.jobs.resumeAll();
    await creationDone(lab);
    const rows = await desktopsOf(lab);
    expect(rows.map((d) => d.userId).sort()).toEqual([...users].sort());
    const [job] = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.id, 'interrupted-creation'));
    expect(job).toMatchObject({ status: 'done', progress: 100, params: { created: STUDENTS_1A, failed: 0 } });
  });

  it('gives a CSV of the direct-viewer links, new ones on reset', async () => {
    const csv = async (q = '') => {
      const r = await get(teo, `/deployments/directviewer_csv/${lab}${q}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('text/csv');
      expect(r.headers.get('content-disposition')).toContain('attachment');
      return (await r.text()).trim().split('\r\n');
    };
    const first = await csv();
    expect(first[0]).toBe('username,name,email,group,category,desktop,url');
    expect(first).toHaveLength(STUDENTS_1A + 1);
    expect(first.slice(1).map((l) => l.split(',')[0]).sort()).toEqual(['student01', 'student02', 'user']);
    const links = first.slice(1).map((l) => l.split(',').at(-1)!);
    // Handed on to the students: the configured public address, never the request's host.
    for (const l of links) expect(l).toMatch(/^http:\/\/portal\.test\/vw\/[A-Za-z0-9_-]{43}$/);
    expect(await csv()).toEqual(first);
    const reset = await csv('?reset=true');
    const newLinks = reset.slice(1).map((l) => l.split(',').at(-1)!);
    expect(newLinks.some((l) => links.includes(l))).toBe(false);
    // The old links no longer open anything; the new ones are the desktops' codes.
    const codes = (await desktopsOf(lab)).map((d) => d.jumperUrl);
    for (const l of links) expect(codes).not.toContain(l.split('/vw/')[1]);
    for (const l of newLinks) expect(codes).toContain(l.split('/vw/')[1]);
    await expectCode(await get(researcher, `/deployments/directviewer_csv/${lab}`), 403, 'forbidden');
  });

  it('edits its users: new users get a desktop, removed ones lose theirs', async () => {
    const noraId = await userIdOf(server, 'student03');
    const r = await put(teo, `/deployment/users/${lab}`, { allowed: { groups: ['default-students-1a'], users: [noraId] } });
    expect(await r.json()).toEqual({ id: lab, added: 1, removed: 0 });
    await creationDone(lab);
    expect((await studentList(nora)).some((d) => d.tag === lab)).toBe(true);
    const back = await put(teo, `/deployment/users/${lab}`, { allowed: { groups: ['default-students-1a'], users: false } });
    expect(await back.json()).toEqual({ id: lab, added: 0, removed: 1 });
    expect((await studentList(nora)).some((d) => d.tag === lab)).toBe(false);
    expect(await desktopsOf(lab)).toHaveLength(STUDENTS_1A);
    await expectCode(await put(teo, `/deployment/users/${lab}`, { allowed: { groups: false, users: false } }), 400, 'deployment_no_users');

    // A booked deployment keeps its users and make; its next booking shows on it.
    const start = new Date(Date.now() + 3600_000);
    const end = new Date(Date.now() + 7200_000);
    await server.ctx.db.insert(schema.bookings).values({ id: 'lab-booking', itemType: 'deployment', itemId: lab, userId: teoId, reservables: { vgpus: [] }, start, end });
    await expectCode(await put(teo, `/deployment/users/${lab}`, { allowed: { groups: ['default-students-1a'], users: [noraId] } }), 428, 'cant_edit_booked_deployment');
    await expectCode(await put(teo, `/deployment/${lab}`, { hardware: { vcpus: 1 } }), 428, 'cant_edit_booked_deployment');
    expect((await put(teo, `/deployment/${lab}`, { description: 'Booked' })).status).toBe(200);
    expect((await (await get(teo, '/deployments')).json())[0]).toMatchObject({ next_booking_start: start.toISOString(), next_booking_end: end.toISOString() });
    await server.ctx.db.delete(schema.bookings).where(eq(schema.bookings.id, 'lab-booking'));
  });
});

describe('deleting', () => {
  it('goes to the owner’s recycle bin and comes back on restore', async () => {
    const before = await desktopsOf(lab);
    const r = await call(server, `/api/v3/deployments/${lab}`, { token: teo, method: 'DELETE' });
    expect(r.status).toBe(200);
    expect(await (await get(teo, '/deployments')).json()).toEqual([]);
    expect(await desktopsOf(lab)).toHaveLength(0);
    expect((await studentList(sara)).some((d) => d.tag === lab)).toBe(false);
    await expectCode(await get(teo, `/deployment/${lab}`), 404, 'deployment_not_found');
    const bin = await (await get(teo, '/recycle_bin/item_count/user')).json();
    const entry = bin.find((e: { item_type: string }) => e.item_type === 'deployment');
    expect(entry).toMatchObject({ item_name: 'Networks lab', status: 'recycled' });

    const socket = await listen(teo);
    const events = record(socket, ['deployments_add']);
    expect((await put(teo, `/recycle_bin/restore/${entry.id}`)).status).toBe(200);
    // The owner's open list gets it back live.
    await until('deployments_add', async () => events.some((e) => e.payload.id === lab));
    socket.close();
    const list = await (await get(teo, '/deployments')).json();
    expect(list.map((d: { id: string }) => d.id)).toEqual([lab]);
    expect((await desktopsOf(lab)).map((d) => d.id).sort()).toEqual(before.map((d) => d.id).sort());
    expect((await studentList(sara)).some((d) => d.tag === lab)).toBe(true);
  });

  it('deletes for good with the disks: at once when asked, or when its bin entry is deleted', async () => {
    const disksOf = async (id: string) => {
      const rows = await desktopsOf(id);
      const links = await server.ctx.db.select().from(schema.domainDisks).where(inArray(schema.domainDisks.domainId, rows.map((d) => d.id)));
      return server.ctx.db.select().from(schema.storage).where(inArray(schema.storage.id, links.map((l) => l.storageId)));
    };
    const gone = async (id: string, disks: { id: string; path: string }[]) => {
      for (const d of disks) expect(existsSync(d.path)).toBe(false);
      expect(await server.ctx.db.select().from(schema.storage).where(inArray(schema.storage.id, disks.map((d) => d.id)))).toHaveLength(0);
      expect(await server.ctx.db.select().from(schema.deployments).where(eq(schema.deployments.id, id))).toHaveLength(0);
      expect(await desktopsOf(id)).toHaveLength(0);
    };
    const disks = await disksOf(lab);
    expect(disks.length).toBe(STUDENTS_1A);
    for (const d of disks) expect(existsSync(d.path)).toBe(true);
    expect((await call(server, `/api/v3/deployments/${lab}/permanent`, { token: teo, method: 'DELETE' })).status).toBe(200);
    await gone(lab, disks);

    // Another one, for Nora alone: to the bin, then the bin entry deleted.
    const r = await newDeployment(teo, { name: 'Nora only', allowed: { users: [await userIdOf(server, 'student03')] } });
    const { id } = await r.json();
    await creationDone(id);
    const its = await disksOf(id);
    expect(its).toHaveLength(1);
    expect((await call(server, `/api/v3/deployments/${id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
    expect(existsSync(its[0]!.path)).toBe(true);
    const entry = (await (await get(teo, '/recycle_bin/item_count/user')).json()).find((e: { item_name: string; status: string }) => e.item_name === 'Nora only');
    expect((await call(server, `/api/v3/recycle_bin/${entry.id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
    await gone(id, its);

    // The template's own disk stays.
    const [tl] = await server.ctx.db.select().from(schema.domainDisks).where(and(eq(schema.domainDisks.domainId, template)));
    const [tdisk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, tl!.storageId));
    expect(existsSync(tdisk!.path)).toBe(true);
  });
});
