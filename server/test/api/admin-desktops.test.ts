import { scaled } from '../helpers/slowdown';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import {
  ZAdminActionAnswer, ZAdminDeployment, ZAdminDeploymentList, ZAdminDesktopList, ZAdminMedia, ZAdminMediaList, ZAdminTemplate,
  ZAdminTemplateList, ZAuditList, ZViewerAnswer, type TAdminDesktop,
} from '@vdi/contracts';
import { schema } from '../../src/db';
import type { UserRow } from '../../src/auth/sessions';
import { call, type TestServer, startTestServer } from '../helpers/server';
import { makeDeployment, makeDesktop, makeMedia, makeTemplate, tokenOf, userRow } from '../helpers/routes-fixtures';
import { recordEvents, socketOf, until } from '../helpers/wait';

// The administration console's desktops, templates, media and deployments (issue 13): every call ×
// admin, manager of the category, manager of another category, advanced, user; and what each does.

type Who = 'admin' | 'manager' | 'labManager' | 'advanced' | 'user';
const WHO: Who[] = ['admin', 'manager', 'labManager', 'advanced', 'user'];
const A = '/api/v3/admin';
let server: TestServer;
const token = {} as Record<Who, string>;
const rnd = () => randomUUID().slice(0, 8);

const send = (who: Who | string, path: string, opts: { method?: string; body?: unknown } = {}) =>
  call(server, path, { token: (token as Record<string, string>)[who] ?? who, ...opts });
const list = async (who: Who, query: string) => {
  const res = await send(who, `${A}/desktops?${query}`);
  expect(res.status).toBe(200);
  return ZAdminDesktopList.parse(await res.json());
};

/** A user straight in the database with the demo password (as a seed would). */
async function person(username: string, opts: { name?: string; category?: string; group?: string; role?: string } = {}): Promise<UserRow> {
  const base = await userRow(server, 'student01');
  const [row] = await server.ctx.db
    .insert(schema.users)
    .values({
      ...base, id: randomUUID(), uid: username, username, name: opts.name ?? `${username} (test)`, email: '',
      categoryId: opts.category ?? 'default', groupId: opts.group ?? 'default-students-1a', roleId: opts.role ?? 'user',
    })
    .returning();
  return row!;
}

let mariaA: UserRow;
let mariaB: UserRow;
beforeAll(async () => {
  server = await startTestServer();
  await person('labmanager', { category: 'lab', group: 'lab-default', role: 'manager' });
  const names: Record<Who, [string, string]> = {
    admin: ['admin', 'default'], manager: ['manager', 'default'], labManager: ['labmanager', 'lab'], advanced: ['advanced', 'default'], user: ['user', 'default'],
  };
  for (const w of WHO) token[w] = await tokenOf(server, names[w][0], names[w][1]);
  mariaA = await person('mgarcia', { name: 'Maria Garcia' });
  mariaB = await person('mlopez', { name: 'María López', category: 'lab', group: 'lab-default' });
}, scaled(120_000));
afterAll(async () => server?.close());

describe('every call × admin, manager, manager of another category, advanced, user', () => {
  type Row = { name: string; req: () => Promise<{ path: string; method?: string; body?: unknown }>; expect: Record<Who, number> };
  const staffOnDefault = { admin: 200, manager: 200, labManager: 404, advanced: 403, user: 403 };
  const staffList = { admin: 200, manager: 200, labManager: 200, advanced: 403, user: 403 };
  const teacher = async () => userRow(server, 'advanced');
  const ROWS: Row[] = [
    { name: 'GET /desktops', expect: staffList, req: async () => ({ path: `${A}/desktops` }) },
    // Per-id answers: another category's desktop is "not found" inside a 200 (checked below).
    { name: 'POST /desktops/stop', expect: staffList, req: async () => ({ path: `${A}/desktops/stop`, method: 'POST', body: { ids: [(await makeDesktop(server, mariaA)).id] } }) },
    // A stopped desktop has no screen: 428 viewer_not_started for those who reach it.
    { name: 'GET /desktops/{id}/viewer/{viewer}', expect: { ...staffOnDefault, admin: 428, manager: 428 }, req: async () => ({ path: `${A}/desktops/${(await makeDesktop(server, mariaA)).id}/viewer/browser-vnc` }) },
    { name: 'GET /templates', expect: staffList, req: async () => ({ path: `${A}/templates` }) },
    { name: 'PUT /templates/{id}', expect: staffOnDefault, req: async () => ({ path: `${A}/templates/${(await makeTemplate(server, await teacher())).id}`, method: 'PUT', body: { enabled: false } }) },
    { name: 'DELETE /templates/{id}', expect: staffOnDefault, req: async () => ({ path: `${A}/templates/${(await makeTemplate(server, await teacher())).id}`, method: 'DELETE' }) },
    { name: 'GET /media', expect: staffList, req: async () => ({ path: `${A}/media` }) },
    { name: 'PUT /media/{id}', expect: staffOnDefault, req: async () => ({ path: `${A}/media/${(await makeMedia(server, await teacher())).id}`, method: 'PUT', body: { owner_id: (await userRow(server, 'manager')).id } }) },
    { name: 'DELETE /media/{id}', expect: staffOnDefault, req: async () => ({ path: `${A}/media/${(await makeMedia(server, await teacher())).id}`, method: 'DELETE' }) },
    { name: 'GET /deployments', expect: staffList, req: async () => ({ path: `${A}/deployments` }) },
    {
      name: 'PUT /deployments/{id}', expect: staffOnDefault,
      req: async () => ({ path: `${A}/deployments/${await makeDeployment(server, token.advanced, [(await userRow(server, 'student03')).id])}`, method: 'PUT', body: { visible: false } }),
    },
    {
      name: 'DELETE /deployments/{id}', expect: staffOnDefault,
      req: async () => ({ path: `${A}/deployments/${await makeDeployment(server, token.advanced, [(await userRow(server, 'student03')).id])}`, method: 'DELETE' }),
    },
  ];
  for (const row of ROWS) {
    it(row.name, async () => {
      for (const who of WHO) {
        const { path, method, body } = await row.req();
        const res = await send(who, path, { method, body });
        expect(`${who} ${res.status}`).toBe(`${who} ${row.expect[who]}`);
      }
    }, scaled(120_000));
  }

  it('a manager of another category acts on none of this category\'s desktops (not found, per id)', async () => {
    const desk = await makeDesktop(server, mariaA);
    const answer = ZAdminActionAnswer.parse(await (await send('labManager', `${A}/desktops/delete`, { body: { ids: [desk.id] } })).json());
    expect(answer).toMatchObject({ done: 0, failed: 1, results: [{ id: desk.id, ok: false, description_code: 'desktop_not_found' }] });
    expect((await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desk.id))).length).toBe(1);
  });
});

describe('desktops', () => {
  it('"maria" finds every Maria\'s desktops across categories for an admin; a manager only their category\'s', async () => {
    const a = await makeDesktop(server, mariaA, { name: `Garcia ${rnd()}` });
    const b = await makeDesktop(server, mariaB, { name: `Lopez ${rnd()}` });
    const all = await list('admin', 'search=maria&per_page=100');
    const ids = all.items.map((d) => d.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(all.items.every((d) => /maria|maría/i.test(`${d.user_name} ${d.username} ${d.name} ${d.description}`))).toBe(true);
    const row = all.items.find((d) => d.id === b.id)!;
    expect(row).toMatchObject({ user_name: 'María López', category: 'lab', category_name: 'Research Lab', status: 'Stopped', hypervisor: null, started: null, persistent: true });
    expect(row.memory_mb).toBeGreaterThan(0);
    expect(row.vcpus).toBeGreaterThan(0);
    expect(row.disk_size).toBeGreaterThan(0);
    expect(row.template_name).toBe('Demo Linux');
    const mine = await list('manager', 'search=maria&per_page=100');
    expect(mine.items.map((d) => d.id)).toContain(a.id);
    expect(mine.items.every((d) => d.category === 'default')).toBe(true);
    const theirs = await list('labManager', 'search=maria&per_page=100');
    expect(theirs.items.map((d) => d.id)).toContain(b.id);
    expect(theirs.items.every((d) => d.category === 'lab')).toBe(true);
    // Filters: category, owner, state, persistent, template, deployment, hypervisor.
    expect((await list('admin', 'search=maria&category=lab')).items.every((d) => d.category === 'lab')).toBe(true);
    expect((await list('admin', `owner=${mariaB.id}`)).items.every((d) => d.user === mariaB.id)).toBe(true);
    expect((await list('admin', 'search=maria&state=Stopped')).total).toBeGreaterThanOrEqual(2);
    expect((await list('admin', 'search=maria&persistent=false')).total).toBe(0);
    expect((await list('admin', `search=maria&template=${row.template}`)).total).toBeGreaterThanOrEqual(2);
    expect((await list('admin', 'search=maria&hypervisor=local')).total).toBe(0);
    expect((await list('admin', 'search=maria&hypervisor=elsewhere')).total).toBe(0);
    expect((await list('admin', `deployment=${randomUUID()}`)).total).toBe(0);
    // The console's user search folds accents the same way (one rule: people/scope.ts searchLike).
    const people = (await (await send('admin', `${A}/users?search=MARIA&per_page=100`)).json()) as { items: { username: string }[] };
    expect(people.items.map((x) => x.username)).toEqual(expect.arrayContaining(['mgarcia', 'mlopez']));
    // The term is text, not a pattern: regular-expression and LIKE characters match themselves.
    for (const literal of ['(maria', '.*', '%', '_', '[a-z]', 'a\\']) {
      expect((await list('admin', `search=${encodeURIComponent(literal)}`)).total, literal).toBe(0);
    }
    // By the description too.
    await server.ctx.db.update(schema.domains).set({ description: 'Ticket 4711 of the helpdesk' }).where(eq(schema.domains.id, a.id));
    expect((await list('admin', 'search=4711')).items.map((d) => d.id)).toEqual([a.id]);
  });

  it('pages, sorts and counts in SQL', async () => {
    const owner = await person(`pager-${rnd()}`);
    for (let i = 0; i < 5; i++) await makeDesktop(server, owner, { name: `Pager ${i}` });
    const page1 = await list('admin', `owner=${owner.id}&per_page=2&page=1&sort=name&order=desc`);
    expect(page1.total).toBe(5);
    expect(page1.items.map((d) => d.name)).toEqual(['Pager 4', 'Pager 3']);
    const page3 = await list('admin', `owner=${owner.id}&per_page=2&page=3&sort=name&order=desc`);
    expect(page3.items.map((d) => d.name)).toEqual(['Pager 0']);
    expect((await send('admin', `${A}/desktops?sort=nothing`)).status).toBe(400);
    expect((await send('admin', `${A}/desktops?state=Sleeping`)).status).toBe(400);
  });

  it('start, open as support (the owner is told, the audit log has it), force stop, delete to the owner\'s bin', async () => {
    const owner = await person(`mhelp-${rnd()}`, { name: 'Maria Help' });
    const ownerToken = await tokenOf(server, owner.username);
    const desk = await makeDesktop(server, owner, { name: 'Needs help' });
    const started = ZAdminActionAnswer.parse(await (await send('admin', `${A}/desktops/start`, { body: { ids: [desk.id, randomUUID()] } })).json());
    expect(started.done).toBe(1);
    expect(started.results[1]).toMatchObject({ ok: false, description_code: 'desktop_not_found' });
    const running = await until('started', async () => (await list('admin', `owner=${owner.id}`)).items.find((d) => d.status === 'Started'), 60_000);
    expect(running).toMatchObject({ hypervisor: 'This server' });
    expect(Date.parse(running.started!)).toBeLessThanOrEqual(Date.now());
    expect((await list('admin', `owner=${owner.id}&hypervisor=local`)).total).toBe(1);

    // A running desktop is not deleted (per-id 409 code).
    const refused = ZAdminActionAnswer.parse(await (await send('manager', `${A}/desktops/delete`, { body: { ids: [desk.id] } })).json());
    expect(refused.results[0]).toMatchObject({ ok: false, description_code: 'desktop_action_not_available' });

    const socket = await socketOf(server, ownerToken);
    const events = recordEvents(socket, ['support_viewer']);
    try {
      const res = await send('manager', `${A}/desktops/${desk.id}/viewer/browser-vnc`);
      expect(res.status).toBe(200);
      expect(ZViewerAnswer.parse(await res.json())).toMatchObject({ kind: 'browser', protocol: 'vnc' });
      const heard = await until('support notice', async () => events.find((e) => e.event === 'support_viewer'));
      expect(heard.payload).toMatchObject({ desktop_id: desk.id, desktop_name: 'Needs help', viewer: 'browser-vnc' });
      expect(String(heard.payload.by)).toBeTruthy();
    } finally {
      socket.close();
    }
    const audit = ZAuditList.parse(await (await send('admin', `${A}/audit?action=viewer.open_other&per_page=100`)).json());
    const entry = audit.items.find((e) => e.object_id === desk.id);
    expect(entry).toMatchObject({ actor_name: 'manager', action: 'viewer.open_other', object_type: 'desktop' });
    expect(entry!.detail).toMatchObject({ support: true, owner_id: owner.id, viewer: 'browser-vnc' });
    // The manager of another category: not found.
    expect((await send('labManager', `${A}/desktops/${desk.id}/viewer/browser-vnc`)).status).toBe(404);

    const stopped = ZAdminActionAnswer.parse(await (await send('admin', `${A}/desktops/force_stop`, { body: { ids: [desk.id] } })).json());
    expect(stopped.results[0]).toMatchObject({ ok: true });
    await until('stopped', async () => (await list('admin', `owner=${owner.id}`)).items.find((d) => d.status === 'Stopped'), 60_000);
    // Force stopping a stopped one is refused with the state table's code.
    const again = ZAdminActionAnswer.parse(await (await send('admin', `${A}/desktops/force_stop`, { body: { ids: [desk.id] } })).json());
    expect(again.results[0]).toMatchObject({ ok: false, description_code: 'desktop_action_not_available' });

    const deleted = ZAdminActionAnswer.parse(await (await send('admin', `${A}/desktops/delete`, { body: { ids: [desk.id] } })).json());
    expect(deleted.results[0]).toMatchObject({ ok: true });
    const bin = (await (await call(server, '/api/v3/recycle_bin/item_count/user', { token: ownerToken })).json()) as { item_name: string; item_type: string }[];
    expect(bin).toEqual(expect.arrayContaining([expect.objectContaining({ item_name: 'Needs help', item_type: 'desktop' })]));
    const actions = ZAuditList.parse(await (await send('admin', `${A}/audit?action=desktop.&per_page=100`)).json()).items.filter((e) => e.object_id === desk.id).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['desktop.start', 'desktop.force_stop', 'desktop.delete']));
  }, scaled(180_000));

  it('deletes for good, without an entry in the bin', async () => {
    const owner = await person(`perm-${rnd()}`);
    const ownerToken = await tokenOf(server, owner.username);
    const desk = await makeDesktop(server, owner, { name: 'Gone for good' });
    const answer = ZAdminActionAnswer.parse(await (await send('admin', `${A}/desktops/delete_permanent`, { body: { ids: [desk.id] } })).json());
    expect(answer.done).toBe(1);
    expect((await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desk.id))).length).toBe(0);
    const bin = (await (await call(server, '/api/v3/recycle_bin/item_count/user', { token: ownerToken })).json()) as unknown[];
    expect(bin).toEqual([]);
  });
});

describe('templates, media, deployments', () => {
  it('templates: searched across owners, disabled and enabled, given to another owner (not to a user), deleted to the bin', async () => {
    const teacher = await userRow(server, 'advanced');
    const tpl = await makeTemplate(server, teacher, `Maria template ${rnd()}`);
    const found = ZAdminTemplateList.parse(await (await send('admin', `${A}/templates?search=${encodeURIComponent(tpl.name)}`)).json());
    expect(found.items).toEqual([expect.objectContaining({ id: tpl.id, username: 'advanced', enabled: true, shared: false, category: 'default' })]);
    expect(found.items[0]!.size).toBeGreaterThan(0);
    expect(ZAdminTemplateList.parse(await (await send('labManager', `${A}/templates?search=${encodeURIComponent(tpl.name)}`)).json()).total).toBe(0);

    const off = ZAdminTemplate.parse(await (await send('manager', `${A}/templates/${tpl.id}`, { method: 'PUT', body: { enabled: false } })).json());
    expect(off.enabled).toBe(false);
    expect(ZAdminTemplateList.parse(await (await send('admin', `${A}/templates?enabled=false&search=${encodeURIComponent(tpl.name)}`)).json()).total).toBe(1);

    const student = await userRow(server, 'student02');
    const refused = await send('admin', `${A}/templates/${tpl.id}`, { method: 'PUT', body: { owner_id: student.id } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { description_code: string }).description_code).toBe('new_owner_role_not_allowed');
    const researcher = await userRow(server, 'researcher', 'lab');
    expect((await send('manager', `${A}/templates/${tpl.id}`, { method: 'PUT', body: { owner_id: researcher.id } })).status).toBe(404);
    const manager = await userRow(server, 'manager');
    const moved = ZAdminTemplate.parse(await (await send('manager', `${A}/templates/${tpl.id}`, { method: 'PUT', body: { owner_id: manager.id } })).json());
    expect(moved).toMatchObject({ user: manager.id, username: 'manager' });
    const [disk] = await server.ctx.db.select({ userId: schema.storage.userId }).from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId)).where(eq(schema.domainDisks.domainId, tpl.id));
    expect(disk!.userId).toBe(manager.id);

    expect((await send('admin', `${A}/templates/${tpl.id}`, { method: 'DELETE' })).status).toBe(200);
    const bin = (await (await call(server, '/api/v3/recycle_bin/item_count/user', { token: token.manager })).json()) as { item_name: string }[];
    expect(bin.map((x) => x.item_name)).toContain(tpl.name);
  });

  it('templates: a tree with another category\'s desktop is not deleted by a manager (the portal\'s rule)', async () => {
    const teacher = await userRow(server, 'advanced');
    const tpl = await makeTemplate(server, teacher);
    await server.ctx.db.update(schema.domains).set({ allowed: { roles: false, categories: [], groups: false, users: false } }).where(eq(schema.domains.id, tpl.id));
    const [tplRow] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, tpl.id));
    const { createDesktopFromTemplate } = await import('../../src/modules/desktops/create');
    await createDesktopFromTemplate(server.ctx.db, server.ctx.engine, tplRow!, mariaB, { name: `On it ${rnd()}`, persistent: true, status: 'Stopped' });
    const res = await send('manager', `${A}/templates/${tpl.id}`, { method: 'DELETE' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { description_code: string }).description_code).toBe('template_delete_not_owner');
  });

  it('media: listed across owners, given to another owner, deleted', async () => {
    const teacher = await userRow(server, 'advanced');
    const media = await makeMedia(server, teacher, `Maria ISO ${rnd()}`);
    const found = ZAdminMediaList.parse(await (await send('manager', `${A}/media?search=${encodeURIComponent(media.name)}`)).json());
    expect(found.items).toEqual([expect.objectContaining({ id: media.id, kind: 'iso', status: 'DownloadFailed', desktops: 0, username: 'advanced' })]);
    const admin = await userRow(server, 'admin');
    const moved = ZAdminMedia.parse(await (await send('admin', `${A}/media/${media.id}`, { method: 'PUT', body: { owner_id: admin.id } })).json());
    expect(moved.user).toBe(admin.id);
    expect((await send('admin', `${A}/media/${media.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(ZAdminMediaList.parse(await (await send('admin', `${A}/media?search=${encodeURIComponent(media.name)}`)).json()).total).toBe(0);
  });

  it('deployments: listed with their desktops, hidden, given to another owner, deleted to the bin', async () => {
    const student = await userRow(server, 'student04');
    const name = `Maria lab ${rnd()}`;
    const id = await makeDeployment(server, token.advanced, [student.id], { name });
    const found = ZAdminDeploymentList.parse(await (await send('admin', `${A}/deployments?search=${encodeURIComponent(name)}`)).json());
    expect(found.items).toEqual([expect.objectContaining({ id, username: 'advanced', visible: true, desktops: 1, started: 0, template_name: 'Demo Linux' })]);
    expect((await list('admin', `deployment=${id}`)).items.map((d: TAdminDesktop) => d.user)).toEqual([student.id]);

    const hidden = ZAdminDeployment.parse(await (await send('manager', `${A}/deployments/${id}`, { method: 'PUT', body: { visible: false } })).json());
    expect(hidden.visible).toBe(false);
    const manager = await userRow(server, 'manager');
    const moved = ZAdminDeployment.parse(await (await send('admin', `${A}/deployments/${id}`, { method: 'PUT', body: { owner_id: manager.id } })).json());
    expect(moved).toMatchObject({ user: manager.id, username: 'manager' });
    expect((await send('admin', `${A}/deployments/${id}`, { method: 'PUT', body: { owner_id: student.id } })).status).toBe(400);

    expect((await send('admin', `${A}/deployments/${id}`, { method: 'DELETE' })).status).toBe(200);
    const [row] = await server.ctx.db.select().from(schema.deployments).where(eq(schema.deployments.id, id));
    expect(row!.status).toBe('recycled');
    const bin = (await (await call(server, '/api/v3/recycle_bin/item_count/user', { token: token.manager })).json()) as { item_name: string; item_type: string }[];
    expect(bin).toEqual(expect.arrayContaining([expect.objectContaining({ item_name: name, item_type: 'deployment' })]));
    expect(await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.tag, id)))).toEqual([]);
  }, scaled(120_000));
});
