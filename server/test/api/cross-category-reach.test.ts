import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';
import { makeTemplate, userRow } from '../helpers/routes-fixtures';

// Issue 9, finding 1: a co-owner reaches no further than they could themselves. An `advanced`
// teacher made co-owner of an admin's deployment once added a user of another category (the
// admin's scope was used), got a desktop made in that account, and started it, opened its viewer
// and downloaded its direct link. Users (and groups, co-owners) named by whoever edits a
// deployment must be ones both the owner and the caller may pick; desktops are made only for them.
// The same holds for whom templates and media are shared with.

let server: TestServer;
let admin: string;
let teo: string; // advanced, Default: the co-owner
let boss: string; // manager, Default
let researcher: string; // advanced, Research Lab
let researcherId: string;
let template: string;
let dep: string;

const api = (token: string, path: string, method = 'GET', body?: unknown) => call(server, `/api/v3${path}`, { token, method, body });
const codeOf = async (r: Response) => ({ status: r.status, code: (await r.json()).description_code });
const desktopsOf = (id: string) => server.ctx.db.select().from(schema.domains).where(eq(schema.domains.tag, id));
const creationDone = (id: string) =>
  until('creation job done', async () => {
    const jobs = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
    return jobs.length > 0 && jobs.every((j) => j.status !== 'running' && j.status !== 'queued');
  }, scaled(120_000));
const researcherDesktops = async () => (await desktopsOf(dep)).filter((d) => d.userId === researcherId);

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1, env: { PUBLIC_URL: 'http://portal.test' } });
  [admin, teo, boss] = await Promise.all(['admin', 'advanced', 'manager'].map((u) => loginToken(server, u)));
  researcher = (await login(server, 'researcher', DEMO_PASSWORD, 'lab')).token!;
  researcherId = await userIdOf(server, 'researcher');
  const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  template = t!.id;
  const res = await api(admin, '/deployments', 'POST', {
    name: 'Admin lab',
    template_id: template,
    desktop_name: 'Lab desktop',
    visible: true,
    allowed: { groups: ['default-students-1a'], users: false },
  });
  expect(res.status).toBe(200);
  dep = (await res.json()).id;
  await creationDone(dep);
  expect((await api(admin, `/deployment/co-owners/${dep}`, 'PUT', { co_owners: [await userIdOf(server, 'advanced')] })).status).toBe(200);
}, scaled(240_000));
afterAll(async () => server?.close());

describe('a co-owner names only users and groups they may pick themselves', () => {
  it('refuses a user of another category, as unknown, and makes no desktop for them', async () => {
    const r = await api(teo, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: ['default-students-1a'], users: [researcherId] } });
    expect(await codeOf(r)).toEqual({ status: 400, code: 'user_not_found' });
    await creationDone(dep);
    expect(await researcherDesktops()).toHaveLength(0);
  });

  it('refuses a group of another category', async () => {
    const r = await api(teo, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: ['lab-default'], users: false } });
    expect(await codeOf(r)).toEqual({ status: 400, code: 'bad_request' });
    expect(await researcherDesktops()).toHaveLength(0);
  });

  it('reads "everyone" as everyone the co-owner may pick, not everyone the admin may', async () => {
    const r = await api(teo, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: false, users: [] } });
    expect(r.status).toBe(200);
    await creationDone(dep);
    const rows = await desktopsOf(dep);
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.every((d) => d.categoryId === 'default')).toBe(true);
    // Back to the group (the desktops of the others go to the admin's bin).
    expect((await api(teo, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: ['default-students-1a'], users: false } })).status).toBe(200);
    await creationDone(dep);
  });

  it('lets a manager of the category name no one of another category on an admin’s deployment either', async () => {
    expect(await codeOf(await api(boss, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: false, users: [researcherId] } }))).toEqual({ status: 400, code: 'user_not_found' });
    // Nor make them a co-owner.
    expect(await codeOf(await api(boss, `/deployment/co-owners/${dep}`, 'PUT', { co_owners: [researcherId] }))).toEqual({ status: 400, code: 'user_not_found' });
    expect(await researcherDesktops()).toHaveLength(0);
  });
});

describe('when the admin owner names a user of another category', () => {
  let theirs: string;
  beforeAll(async () => {
    const r = await api(admin, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: ['default-students-1a'], users: [researcherId] } });
    expect(r.status).toBe(200);
    await creationDone(dep);
    const rows = await researcherDesktops();
    expect(rows).toHaveLength(1);
    theirs = rows[0]!.id;
  }, scaled(120_000));

  it('the co-owner can neither start it, open its viewer nor get its direct link', async () => {
    expect(await codeOf(await api(teo, `/desktop/start/${theirs}`))).toEqual({ status: 403, code: 'forbidden' });
    expect(await codeOf(await api(teo, `/desktop/${theirs}/viewer/browser-vnc`))).toEqual({ status: 403, code: 'forbidden' });
    expect(await codeOf(await api(teo, `/desktop/jumperurl/${theirs}`))).toEqual({ status: 403, code: 'forbidden' });
    expect(await codeOf(await api(teo, `/deployments/domain/visible/${theirs}`, 'PUT', { visible: false }))).toEqual({ status: 403, code: 'forbidden' });
    const csv = await (await api(teo, `/deployments/directviewer_csv/${dep}`)).text();
    expect(csv).not.toContain('researcher');
    const detail = await (await api(teo, `/deployment/${dep}`)).json();
    expect(detail.desktops.map((d: { id: string }) => d.id)).not.toContain(theirs);
    // The admin (the owner) still can.
    expect((await api(admin, `/desktop/jumperurl/${theirs}`)).status).toBe(200);
    expect(await (await api(admin, `/deployments/directviewer_csv/${dep}`)).text()).toContain('researcher');
  });

  it('the co-owner hears nothing live of that desktop; the owner does', async () => {
    const [mine, theirsSocket] = await Promise.all([socketOf(server, admin), socketOf(server, teo)]);
    try {
      const ownerGot = recordEvents(mine, ['deploymentdesktop_update']);
      const coOwnerGot = recordEvents(theirsSocket, ['deploymentdesktop_update']);
      // A desktop the co-owner reaches, then the other one: once the owner heard both, the co-owner heard only the first.
      const [reachable] = (await desktopsOf(dep)).filter((d) => d.categoryId === 'default');
      expect((await api(admin, `/deployments/domain/visible/${reachable!.id}`, 'PUT', { visible: false })).status).toBe(200);
      expect((await api(admin, `/deployments/domain/visible/${theirs}`, 'PUT', { visible: false })).status).toBe(200);
      await until('owner heard both', async () => ownerGot.length >= 2);
      await until('co-owner heard the reachable one', async () => coOwnerGot.length >= 1);
      expect(coOwnerGot.map((e) => e.payload.id)).toEqual([reachable!.id]);
      for (const id of [reachable!.id, theirs]) await api(admin, `/deployments/domain/visible/${id}`, 'PUT', { visible: true });
    } finally {
      mine.close();
      theirsSocket.close();
    }
  });

  it('a recreate by the co-owner makes no desktop for that user; the owner’s does', async () => {
    await server.ctx.db.delete(schema.domains).where(eq(schema.domains.id, theirs));
    const r = await api(teo, `/deployments/${dep}`, 'PUT');
    expect(r.status).toBe(200);
    expect((await r.json()).missing).toBe(0);
    await creationDone(dep);
    expect(await researcherDesktops()).toHaveLength(0);
    expect((await (await api(admin, `/deployments/${dep}`, 'PUT')).json()).missing).toBe(1);
    await creationDone(dep);
    expect(await researcherDesktops()).toHaveLength(1);
  });

  it('a co-owner editing the users leaves what is beyond their reach as the owner chose it', async () => {
    // The co-owner sends the list as they see it, without the researcher: the researcher keeps the
    // name in the list and their desktop (the co-owner can neither add nor remove them).
    const r = await api(teo, `/deployment/users/${dep}`, 'PUT', { allowed: { groups: ['default-students-1a'], users: false } });
    expect(r.status).toBe(200);
    expect((await r.json()).removed).toBe(0);
    await creationDone(dep);
    expect(await researcherDesktops()).toHaveLength(1);
    const [row] = await server.ctx.db.select().from(schema.deployments).where(eq(schema.deployments.id, dep));
    expect(row!.allowed.users).toEqual([researcherId]);
  });

  it('the researcher themselves still reaches their own desktop', async () => {
    const [mine] = await researcherDesktops();
    expect((await api(researcher, `/desktop/jumperurl/${mine!.id}`)).status).toBe(200);
  });
});

describe('templates and media are shared only with whom the sharer may pick', () => {
  let tpl: string;
  beforeAll(async () => {
    tpl = (await makeTemplate(server, await userRow(server, 'advanced'))).id;
    await server.ctx.db.update(schema.domains).set({ enabled: true }).where(eq(schema.domains.id, tpl));
  });
  const share = (token: string, id: string, allowed: unknown) => api(token, '/template/update', 'PUT', { id, allowed });

  it('refuses users and groups of another category, and roles or categories from a non-admin', async () => {
    expect(await codeOf(await share(teo, tpl, { users: [researcherId] }))).toEqual({ status: 400, code: 'user_not_found' });
    expect(await codeOf(await share(teo, tpl, { groups: ['lab-default'] }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await share(teo, tpl, { categories: ['lab'] }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await share(teo, tpl, { roles: [] }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await share(boss, tpl, { users: [researcherId] }))).toEqual({ status: 400, code: 'user_not_found' });
    expect(await codeOf(await api(teo, `/template/duplicate/${template}`, 'POST', { name: 'Copy for the lab', allowed: { categories: ['lab'] } }))).toEqual({ status: 400, code: 'bad_request' });
    const media = await api(teo, '/media', 'POST', { name: 'Lab iso', url: 'https://example.org/x.iso', kind: 'iso', allowed: { roles: false, categories: false, groups: false, users: [researcherId] } });
    expect(await codeOf(media)).toEqual({ status: 400, code: 'user_not_found' });
    const list = await (await api(researcher, '/user/templates/allowed/all')).json();
    expect(list.map((t: { id: string }) => t.id)).not.toContain(tpl);
  });

  it('still shares within the category, and lets the admin share by role', async () => {
    expect((await share(teo, tpl, { groups: ['default-students-1a'], users: false })).status).toBe(200);
    expect((await share(admin, template, { roles: [] })).status).toBe(200);
  });
});

describe('a co-owner edits what the desktops are made of within their own quota', () => {
  it('refuses more memory than the co-owner may choose, though the owner (admin) may', async () => {
    const teoId = await userIdOf(server, 'advanced');
    const quota = {
      desktops: 10, volatile: 5, templates: 5, isos: 5, deployments_total: 5, deployment_desktops: 50, started_deployment_desktops: 20,
      running: 3, memory: 1, vcpus: 8, desktops_disk_size: 50, total_size: 100, total_soft_size: 80, storage_size: 100, media_size: 50, personal_drive: 0,
    };
    await server.ctx.db.update(schema.users).set({ quota }).where(eq(schema.users.id, teoId));
    try {
      const r = await api(teo, `/deployment/${dep}`, 'PUT', { hardware: { memory: 2 } });
      expect(await codeOf(r)).toEqual({ status: 428, code: 'domain_edit_memory_quota_exceeded' });
      expect((await api(admin, `/deployment/${dep}`, 'PUT', { hardware: { memory: 2 } })).status).toBe(200);
    } finally {
      await server.ctx.db.update(schema.users).set({ quota: null }).where(eq(schema.users.id, teoId));
    }
  });
});
