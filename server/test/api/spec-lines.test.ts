import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { ZAllowedTermGroup, ZAllowedTermNamed, ZAllowedTermUser } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, startTestServer, type TestServer } from '../helpers/server';
import { makeDeployment, makeDesktop, makeMedia, makeTemplate, tokenOf, userRow } from '../helpers/routes-fixtures';

// The last lines of the spec (issue 17): the permission pickers' calls (core §7) —
// POST /admin/allowed/term/{table} and POST /admin/allowed/update/{table} — within whom the caller
// may pick, and the `desktop_not_visible` refusal of a student's desktop hidden by its deployment.

let server: TestServer;
const tokens: Record<string, string> = {};
const A = '/api/v3';

beforeAll(async () => {
  server = await startTestServer();
  for (const u of ['admin', 'manager', 'advanced', 'user', 'student01']) tokens[u] = await tokenOf(server, u);
  tokens.researcher = await tokenOf(server, 'researcher', 'lab');
}, scaled(240_000));
afterAll(async () => server?.close());

const post = (who: string, path: string, body: unknown) => call(server, `${A}${path}`, { token: tokens[who], body });
const term = async (who: string, table: string, body: Record<string, unknown>) => {
  const res = await post(who, `/admin/allowed/term/${table}`, body);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>[] & { description_code?: string } };
};
const codeOf = async (res: Response) => ({ status: res.status, code: ((await res.json()) as { description_code?: string }).description_code });

describe('POST /admin/allowed/term/{table}', () => {
  it('finds users of the caller’s category by name or username, in the original’s shape', async () => {
    const got = await term('advanced', 'users', { term: 'stu' });
    expect(got.status).toBe(200);
    const users = z.array(ZAllowedTermUser.strict()).parse(got.body);
    expect(users.map((u) => u.uid).sort()).toEqual(['student01', 'student02', 'student03', 'student04']);
    expect(users.find((u) => u.uid === 'student01')).toMatchObject({ name: 'Sara Student', category: 'default', category_name: 'Default', group_name: 'Students 1A' });
    // By username too, case apart.
    expect((await term('advanced', 'users', { term: 'STUDENT03' })).body.map((u) => u.name)).toEqual(['Nora Student']);
  });

  it('keeps managers and advanced users to their own category; admins pick anyone', async () => {
    expect((await term('advanced', 'users', { term: 'Rui' })).body).toEqual([]);
    expect((await term('manager', 'users', { term: 'Rui' })).body).toEqual([]);
    expect((await term('researcher', 'users', { term: 'Student' })).body).toEqual([]);
    expect((await term('researcher', 'users', { term: 'Rui' })).body.map((u) => u.uid)).toEqual(['researcher']);
    expect((await term('admin', 'users', { term: 'Rui' })).body).toEqual([
      expect.objectContaining({ uid: 'researcher', category: 'lab', category_name: 'Research Lab', group_name: 'Lab members' }),
    ]);
    // An admin may narrow to one category.
    expect((await term('admin', 'users', { term: 'e', category: 'lab' })).status).toBe(400);
    expect((await term('admin', 'users', { term: 'er', category: 'lab' })).body.map((u) => u.uid)).toEqual(['researcher']);
    // A narrowing to another category does not widen a manager's reach.
    expect((await term('manager', 'users', { term: 'Rui', category: 'lab' })).body).toEqual([]);
  });

  it('finds groups with their category, within reach', async () => {
    const groups = z.array(ZAllowedTermGroup.strict()).parse((await term('advanced', 'groups', { term: 'students' })).body);
    expect(groups.map((g) => [g.name, g.parent_category, g.category_name])).toEqual([
      ['Students 1A', 'default', 'Default'],
      ['Students 1B', 'default', 'Default'],
    ]);
    expect((await term('advanced', 'groups', { term: 'Lab' })).body).toEqual([]);
    expect((await term('researcher', 'groups', { term: 'Stud' })).body).toEqual([]);
    expect((await term('admin', 'groups', { term: 'Lab' })).body).toEqual([{ id: 'lab-default', name: 'Lab members', parent_category: 'lab', category_name: 'Research Lab' }]);
  });

  it('offers roles and categories to admins only (only they share by them)', async () => {
    expect(z.array(ZAllowedTermNamed.strict()).parse((await term('admin', 'roles', { term: 'adv' })).body)).toEqual([{ id: 'advanced', name: 'Advanced' }]);
    expect((await term('admin', 'categories', { term: 'research' })).body).toEqual([{ id: 'lab', name: 'Research Lab' }]);
    expect((await term('manager', 'roles', { term: 'adv' })).body).toEqual([]);
    expect((await term('advanced', 'categories', { term: 'def' })).body).toEqual([]);
  });

  it('needs 2 letters, a known table, and a role that shares', async () => {
    expect(await codeOf(await post('advanced', '/admin/allowed/term/users', { term: 's' }))).toEqual({ status: 400, code: 'validation_error' });
    expect(await codeOf(await post('advanced', '/admin/allowed/term/users', { term: '  s ' }))).toEqual({ status: 400, code: 'validation_error' });
    expect(await codeOf(await post('advanced', '/admin/allowed/term/domains', { term: 'stu' }))).toEqual({ status: 400, code: 'validation_error' });
    expect((await post('user', '/admin/allowed/term/users', { term: 'stu' })).status).toBe(403);
    expect((await call(server, `${A}/admin/allowed/term/users`, { body: { term: 'stu' } })).status).toBe(401);
    // Wildcards are letters like any other.
    expect((await term('admin', 'users', { term: '%%' })).body).toEqual([]);
  });
});

describe('POST /admin/allowed/update/{table}', () => {
  it('shares a template with whom its owner may pick, and answers {}', async () => {
    const teacher = await userRow(server, 'advanced');
    const student = await userRow(server, 'student01');
    const template = await makeTemplate(server, teacher);
    const res = await post('advanced', '/admin/allowed/update/domains', { id: template.id, table: 'domains', allowed: { groups: ['default-students-1a'], users: [student.id] } });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: {} });
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, template.id));
    expect(row!.allowed).toEqual({ roles: false, categories: false, groups: ['default-students-1a'], users: [student.id] });
    // The student now finds it among the templates shared with them.
    const shared = (await (await call(server, `${A}/user/templates/allowed/shared`, { token: tokens.student01 })).json()) as { id: string }[];
    expect(shared.map((t) => t.id)).toContain(template.id);
    // A manager of the category may change it; someone of another category may not; a group out of reach is unknown.
    expect((await post('manager', '/admin/allowed/update/domains', { id: template.id, allowed: { groups: [] } })).status).toBe(200);
    expect((await post('researcher', '/admin/allowed/update/domains', { id: template.id, allowed: { groups: [] } })).status).toBe(403);
    expect(await codeOf(await post('advanced', '/admin/allowed/update/domains', { id: template.id, allowed: { groups: ['lab-default'] } }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await post('advanced', '/admin/allowed/update/domains', { id: template.id, allowed: { roles: ['user'] } }))).toEqual({ status: 400, code: 'bad_request' });
    // Not a template: a desktop has no sharing.
    const desktop = await makeDesktop(server, teacher);
    expect(await codeOf(await post('advanced', '/admin/allowed/update/domains', { id: desktop.id, allowed: { groups: [] } }))).toEqual({ status: 404, code: 'template_not_found' });
    const [after] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, template.id));
    expect(after!.allowed.groups).toEqual([]);
  });

  it('shares a media, and only its managers may', async () => {
    const teacher = await userRow(server, 'advanced');
    const media = await makeMedia(server, teacher);
    const student = await userRow(server, 'student03');
    expect((await post('advanced', '/admin/allowed/update/media', { id: media.id, allowed: { users: [student.id] } })).status).toBe(200);
    const [row] = await server.ctx.db.select().from(schema.media).where(eq(schema.media.id, media.id));
    expect(row!.allowed).toEqual({ roles: false, categories: false, groups: false, users: [student.id] });
    expect((await post('researcher', '/admin/allowed/update/media', { id: media.id, allowed: { users: false } })).status).toBe(403);
    expect((await post('user', '/admin/allowed/update/media', { id: media.id, allowed: { users: false } })).status).toBe(403);
    expect(await codeOf(await post('advanced', '/admin/allowed/update/media', { id: 'no-such-media', allowed: {} }))).toEqual({ status: 404, code: 'media_not_found' });
    expect(await codeOf(await post('advanced', '/admin/allowed/update/storage', { id: media.id, allowed: {} }))).toEqual({ status: 400, code: 'validation_error' });
    // Roles reach beyond a category: an admin shares their own media by role, not a teacher's (the owner could not pick it).
    expect(await codeOf(await post('admin', '/admin/allowed/update/media', { id: media.id, allowed: { roles: ['advanced'] } }))).toEqual({ status: 400, code: 'bad_request' });
    const adminMedia = await makeMedia(server, await userRow(server, 'admin'));
    expect((await post('admin', '/admin/allowed/update/media', { id: adminMedia.id, allowed: { roles: ['advanced'] } })).status).toBe(200);
  });
});

describe('a desktop hidden by its deployment', () => {
  it('is refused to its student with desktop_not_visible, except a stop; those who manage it still reach it', async () => {
    const student = await userRow(server, 'student01');
    const deployment = await makeDeployment(server, tokens.advanced!, [student.id]);
    const [desktop] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.tag, deployment));
    const get = (who: string, path: string) => call(server, `${A}${path}`, { token: tokens[who] });
    expect((await get('student01', `/domain/info/${desktop!.id}`)).status).toBe(200);

    const hide = await call(server, `${A}/deployments/visible/${deployment}`, { token: tokens.advanced, method: 'PUT', body: { stop_started_domains: false } });
    expect(hide.status).toBe(200);
    expect(await codeOf(await get('student01', `/desktop/start/${desktop!.id}`))).toEqual({ status: 403, code: 'desktop_not_visible' });
    expect(await codeOf(await get('student01', `/desktop/${desktop!.id}/viewer/browser-vnc`))).toEqual({ status: 403, code: 'desktop_not_visible' });
    expect(await codeOf(await get('student01', `/domain/info/${desktop!.id}`))).toEqual({ status: 403, code: 'desktop_not_visible' });
    expect(await codeOf(await call(server, `${A}/domain/${desktop!.id}`, { token: tokens.student01, method: 'PUT', body: { description: 'x' } }))).toEqual({ status: 403, code: 'desktop_not_visible' });
    expect(await codeOf(await call(server, `${A}/desktop/${desktop!.id}`, { token: tokens.student01, method: 'DELETE' }))).toEqual({ status: 403, code: 'desktop_not_visible' });
    // A stop is no use of it: the rights pass, the state refuses (it is not running).
    expect(await codeOf(await get('student01', `/desktop/stop/${desktop!.id}`))).toEqual({ status: 409, code: 'desktop_action_not_available' });
    // The admin still reads it; the owner of the deployment still acts on it (stop: refused for its state only).
    expect((await get('admin', `/domain/info/${desktop!.id}`)).status).toBe(200);
    expect((await get('advanced', `/desktop/stop/${desktop!.id}`)).status).toBe(409);

    await call(server, `${A}/deployments/visible/${deployment}`, { token: tokens.advanced, method: 'PUT', body: { stop_started_domains: false } });
    expect((await get('student01', `/domain/info/${desktop!.id}`)).status).toBe(200);
  });

  it('a desktop of no deployment is never refused for visibility', async () => {
    const own = await makeDesktop(server, await userRow(server, 'student01'));
    expect((await call(server, `${A}/domain/info/${own.id}`, { token: tokens.student01 })).status).toBe(200);
  });
});
