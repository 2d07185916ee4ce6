import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let admin: string;
beforeAll(async () => {
  server = await startTestServer();
  admin = await loginToken(server, 'admin');
});
afterAll(async () => server?.close());

describe('maintenance', () => {
  it('answers 503 to everyone but admins while global maintenance is on', async () => {
    const user = await loginToken(server, 'user');
    expect(await (await call(server, '/api/v3/maintenance')).json()).toBe(false);
    expect((await call(server, '/api/v3/maintenance/text/frontend')).status).toBe(204);
    await call(server, '/api/v3/admin/settings/maintenance', { token: admin, method: 'PUT', body: { enabled: true, title: 'Upgrade', body: 'Back at noon' } });
    try {
      const r = await call(server, '/api/v3/user', { token: user });
      expect(r.status).toBe(503);
      expect((await r.json()).description_code).toBe('maintenance');
      expect((await call(server, '/api/v3/user', { token: admin })).status).toBe(200);
      expect(await (await call(server, '/api/v3/maintenance', { token: user })).json()).toBe(true);
      expect(await (await call(server, '/api/v3/maintenance', { token: admin })).json()).toBe(false);
      const text = await call(server, '/api/v3/maintenance/text/frontend');
      expect(text.status).toBe(200);
      expect(await text.json()).toEqual({ title: 'Upgrade', body: 'Back at noon', enabled: true });
      expect((await call(server, '/api/v3/check')).status).toBe(503);
    } finally {
      await call(server, '/api/v3/admin/settings/maintenance', { token: admin, method: 'PUT', body: { enabled: false } });
    }
    expect((await call(server, '/api/v3/user', { token: user })).status).toBe(200);
    expect((await call(server, '/api/v3/check')).status).toBe(200);
  });

  it('holds back only the users of a category in maintenance', async () => {
    const lab = await loginToken(server, 'researcher').catch(async () => {
      const form = new FormData();
      form.append('username', 'researcher');
      form.append('password', 'demo-pass-123');
      const r = await fetch(`${server.url}/authentication/login?provider=form&category_id=lab`, { method: 'POST', body: form });
      return r.text();
    });
    const user = await loginToken(server, 'user');
    expect((await call(server, '/api/v3/admin/category/lab/maintenance', { token: admin, method: 'PUT', body: { enabled: true } })).status).toBe(200);
    try {
      expect((await call(server, '/api/v3/user', { token: lab })).status).toBe(503);
      expect((await call(server, '/api/v3/user', { token: user })).status).toBe(200);
    } finally {
      await call(server, '/api/v3/admin/category/lab/maintenance', { token: admin, method: 'PUT', body: { enabled: false } });
    }
  });
});

describe('user', () => {
  it('GET /user answers the user without secrets, with names, quota and usage', async () => {
    const token = await loginToken(server, 'user');
    const user = await (await call(server, '/api/v3/user', { token })).json();
    expect(user).toMatchObject({
      username: 'user', role: 'user', role_name: 'User', category: 'default', category_name: 'Default',
      group: 'default-students-1a', group_name: 'Students 1A', secondary_groups_names: ['Students 1B'], restriction_applied: 'group_quota',
    });
    expect(user.quota.running).toBe(1);
    expect(user.used.desktops).toBe(3); // the demo desktops (one needs a GPU booking)
    expect(JSON.stringify(user)).not.toMatch(/argon2|password_hash|passwordHash/);
    const applied = await (await call(server, '/api/v3/user/appliedquota', { token })).json();
    expect(applied).toEqual({ quota: user.quota, restriction_applied: 'group_quota' });
    const adminApplied = await (await call(server, '/api/v3/user/appliedquota', { token: admin })).json();
    expect(adminApplied).toEqual({ quota: false, restriction_applied: 'user_quota' });
  });

  it('saves the language and refuses one not offered', async () => {
    const token = await loginToken(server, 'advanced');
    expect((await call(server, '/api/v3/user/language/ca-ES', { token, method: 'PUT', body: {} })).status).toBe(200);
    expect((await (await call(server, '/api/v3/user', { token })).json()).lang).toBe('ca');
    const bad = await call(server, '/api/v3/user/language/xx', { token, method: 'PUT', body: {} });
    expect(bad.status).toBe(400);
    expect((await bad.json()).description_code).toBe('invalid_language');
  });

  it('answers the password policy', async () => {
    const token = await loginToken(server, 'user');
    expect(await (await call(server, '/api/v3/user/password-policy', { token })).json()).toMatchObject({ length: 8, old_passwords: 0 });
  });
});

describe('public calls', () => {
  it('lists categories, finds one by id or custom url, 404 otherwise', async () => {
    const cats = await (await call(server, '/api/v3/categories')).json();
    expect(cats).toHaveLength(2);
    expect((await (await call(server, '/api/v3/category/lab')).json()).name).toBe('Research Lab');
    const missing = await call(server, '/api/v3/category/nope');
    expect(missing.status).toBe(404);
    expect((await missing.json()).description_code).toBe('category_not_found');
  });

  it('answers the login configuration, status bar and disclaimer', async () => {
    expect(await (await call(server, '/api/v3/login_config')).json()).toMatchObject({
      categories_select: true,
      signup: true,
      providers: { all: { display_providers: ['form'] }, form: { hide_forgot_password: true } },
    });
    expect(await (await call(server, '/api/v3/notifications/status_bar', { token: admin })).json()).toBeNull();
    expect(await (await call(server, '/api/v3/disclaimer')).json()).toEqual({ title: '', body: '' });
  });
});

describe('errors speak the catalogue', () => {
  it('unknown API routes answer 404 not_found as JSON', async () => {
    const r = await call(server, '/api/v3/nothing/here');
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: 'not_found', description_code: 'not_found' });
  });

  it('malformed JSON and wrong shapes answer 400, never 500', async () => {
    const broken = await fetch(`${server.url}/api/v3/admin/settings/maintenance`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: '{"enabled": tru',
    });
    expect(broken.status).toBe(400);
    expect((await broken.json()).error).toBe('bad_request');
    const wrong = await call(server, '/api/v3/admin/settings/maintenance', { token: admin, method: 'PUT', body: { enabled: 'yes' } });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).description_code).toBe('validation_error');
    const extra = await call(server, '/api/v3/admin/user/x/active', { token: admin, method: 'PUT', body: { active: true, role: 'admin' } });
    expect(extra.status).toBe(400);
  });

  it('admin calls are refused to other roles with 403', async () => {
    for (const role of ['manager', 'advanced', 'user']) {
      const token = await loginToken(server, role);
      const r = await call(server, '/api/v3/admin/settings/maintenance', { token, method: 'PUT', body: { enabled: true } });
      expect(r.status).toBe(403);
      expect((await r.json()).description_code).toBe('forbidden');
    }
    expect(await (await call(server, '/api/v3/maintenance')).json()).toBe(false);
  });

  it('a manager lists only the users of their own category', async () => {
    const manager = await loginToken(server, 'manager');
    const users = (await (await call(server, '/api/v3/admin/users?per_page=500', { token: manager })).json()).items;
    expect(users.every((u: { category: string }) => u.category === 'default')).toBe(true);
    const all = (await (await call(server, '/api/v3/admin/users?per_page=500', { token: admin })).json()).items;
    expect(all.some((u: { category: string }) => u.category === 'lab')).toBe(true);
  });
});
