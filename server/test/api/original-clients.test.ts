import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { adminSessionUser, ADMIN_SESSION_COOKIE } from '../../src/auth/admin-session';
import { join } from 'node:path';
import { startMediaFileServer, type MediaFileServer } from '../../src/modules/media/testing/file-server';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

// Clients written for the original system (its own portals were run against this server) must
// find the calls they make, answered the way the original answered them.

let server: TestServer;
let files: MediaFileServer;
let admin: string;
let manager: string;
let teacher: string;
let user: string;
let template: string;
beforeAll(async () => {
  // Media come from a file server on loopback.
  server = await startTestServer({ env: { MEDIA_ALLOW_PRIVATE_URLS: '1' } });
  files = await startMediaFileServer(join(testImagesDir(), 'demo.iso'));
  [admin, manager, teacher, user] = await Promise.all(['admin', 'manager', 'advanced', 'user'].map((u) => loginToken(server, u)));
  const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  template = t!.id;
}, scaled(240_000));
afterAll(async () => {
  await server?.close();
  await files?.close();
});

const codeOf = async (r: Response) => ({ status: r.status, code: ((await r.json()) as { description_code?: string }).description_code });
const setting = (key: string, body: unknown) => call(server, `/api/v3/admin/settings/${key}`, { token: admin, method: 'PUT', body });

describe('GET /authentication/providers', () => {
  it('lists "form" while the user/password sign-in is on (local and LDAP themselves are never listed)', async () => {
    expect(await (await fetch(`${server.url}/authentication/providers`)).json()).toEqual({ providers: ['form'] });
    // The portal's own sign-in page reads the same list from the login configuration.
    expect((await (await call(server, '/api/v3/login_config')).json()).providers).toEqual(['form']);
  });
});

describe('GET /notifications/status_bar', () => {
  it('answers null when there is nothing to show, the notification with its migration settings otherwise', async () => {
    expect((await call(server, '/api/v3/notifications/status_bar')).status).toBe(401);
    const none = await call(server, '/api/v3/notifications/status_bar', { token: user });
    expect(none.status).toBe(200);
    expect(await none.json()).toBeNull();
    expect((await setting('status_bar', { enabled: true, level: 'warning', text: 'Moving to a new server' })).status).toBe(200);
    try {
      expect(await (await call(server, '/api/v3/notifications/status_bar', { token: user })).json()).toEqual({
        text: 'Moving to a new server',
        level: 'warning',
        migration_config: { import: false, export: false },
      });
    } finally {
      await setting('status_bar', { enabled: false });
    }
    expect(await (await call(server, '/api/v3/notifications/status_bar', { token: user })).json()).toBeNull();
  });
});

describe('GET /authentication/{export|import}/{provider}', () => {
  it('answers whether migration is enabled for the provider, from the migration settings', async () => {
    const enabled = async (way: string, provider: string) => {
      const r = await call(server, `/api/v3/authentication/${way}/${provider}`, { token: user });
      expect(r.status).toBe(200);
      return r.json();
    };
    expect(await enabled('export', 'local')).toEqual({ enabled: false });
    expect(await enabled('import', 'local')).toEqual({ enabled: false });
    expect(await enabled('export', 'saml')).toEqual({ enabled: false });
    expect((await setting('migration', { local: { export: true, import: false } })).status).toBe(200);
    try {
      expect(await enabled('export', 'local')).toEqual({ enabled: true });
      expect(await enabled('import', 'local')).toEqual({ enabled: false });
      // The status bar tells the same.
      await setting('status_bar', { enabled: true, level: 'info', text: 'Export your desktops' });
      expect((await (await call(server, '/api/v3/notifications/status_bar', { token: user })).json()).migration_config).toEqual({ import: false, export: true });
    } finally {
      await setting('status_bar', { enabled: false });
      await setting('migration', { local: { export: false, import: false } });
    }
    expect(await enabled('export', 'local')).toEqual({ enabled: false });
    expect((await call(server, '/api/v3/authentication/export/local')).status).toBe(401);
    expect(await codeOf(await call(server, '/api/v3/authentication/export/no%20such'))).toEqual({ status: 400, code: 'validation_error' });
    expect(await codeOf(await call(server, '/api/v3/authentication/sideways/local', { token: user }))).toMatchObject({ status: 404 });
  });
});

describe('GET /notification/user/{trigger}/{display}', () => {
  it('answers no notifications (none exist), in the original shape', async () => {
    const r = await call(server, '/api/v3/notification/user/start_desktop/modal', { token: user });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ notifications: {} });
    expect(await (await call(server, '/api/v3/notification/user/login/fullpage', { token: user })).json()).toEqual({ notifications: {} });
    expect(await (await call(server, '/api/v3/notification/user/displays/start_desktop', { token: user })).json()).toEqual({ displays: [] });
    expect((await call(server, '/api/v3/notification/user/start_desktop/modal')).status).toBe(401);
    expect((await codeOf(await call(server, '/api/v3/notification/user/start_desktop/x%00y', { token: user }))).status).toBe(400);
  });
});

describe('/isard-admin sign-in and sign-out', () => {
  const adminLogin = (token?: string, method = 'POST') =>
    fetch(`${server.url}/isard-admin/login`, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, redirect: 'manual' });
  const cookieOf = (r: Response) => r.headers.getSetCookie().find((c) => c.startsWith(`${ADMIN_SESSION_COOKIE}=`));
  const valueOf = (cookie: string) => cookie.split(';')[0]!.slice(ADMIN_SESSION_COOKIE.length + 1);

  it('opens the admin session for admins and managers, sharing the portal session', async () => {
    for (const token of [admin, manager]) {
      const r = await adminLogin(token);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ success: true });
      const cookie = cookieOf(r)!;
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Strict/i);
      expect(cookie).toMatch(/Path=\//);
      expect(await adminSessionUser(server.ctx, valueOf(cookie))).toMatchObject({ roleId: token === admin ? 'admin' : 'manager' });
    }
    // The old portal opens it with a GET.
    expect((await adminLogin(manager, 'GET')).status).toBe(200);
  });

  it('refuses other roles, and sends those without a session to the sign-in page', async () => {
    for (const token of [teacher, user]) expect(await codeOf(await adminLogin(token))).toEqual({ status: 403, code: 'forbidden' });
    for (const r of [await adminLogin(), await adminLogin('not-a-token')]) {
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe('/login');
      expect(cookieOf(r)).toBeUndefined();
    }
  });

  it('ends with the portal session, and with a remote sign-out', async () => {
    // The portal session signs out: the admin session it opened is gone too.
    const own = await loginToken(server, 'manager');
    const first = valueOf(cookieOf(await adminLogin(own))!);
    expect(await adminSessionUser(server.ctx, first)).toBeTruthy();
    expect((await fetch(`${server.url}/authentication/logout`, { method: 'POST', headers: { authorization: `Bearer ${own}` } })).status).toBe(200);
    expect(await adminSessionUser(server.ctx, first)).toBeNull();

    // The remote sign-out clears the cookie and ends the admin session on the server.
    const again = await loginToken(server, 'manager');
    const second = valueOf(cookieOf(await adminLogin(again))!);
    const out = await fetch(`${server.url}/isard-admin/logout/remote`, { headers: { cookie: `${ADMIN_SESSION_COOKIE}=${second}` } });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ success: true });
    expect(cookieOf(out)).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/i);
    expect(await adminSessionUser(server.ctx, second)).toBeNull();
    // The portal session itself stays.
    expect((await call(server, '/api/v3/user', { token: again })).status).toBe(200);

    // Always safe: without a session, or with a forged cookie.
    for (const cookie of [undefined, `${ADMIN_SESSION_COOKIE}=forged.value`, `${ADMIN_SESSION_COOKIE}=%00`]) {
      const r = await fetch(`${server.url}/isard-admin/logout/remote`, { headers: cookie ? { cookie } : {} });
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ success: true });
    }
    expect(await adminSessionUser(server.ctx, 'forged.value')).toBeNull();
  });
});

describe('accessed of new desktops', () => {
  it('is the creation time, for desktops of a deployment and new desktops alike', async () => {
    const before = Math.floor(Date.now() / 1000) - 1;
    const r = await call(server, '/api/v3/deployments', {
      token: teacher,
      body: { name: 'Accessed lab', description: '', template_id: template, desktop_name: 'Lab desktop', visible: true, allowed: { groups: ['default-students-1a'] } },
    });
    expect({ status: r.status, body: r.status === 200 ? {} : await r.clone().json() }).toEqual({ status: 200, body: {} });
    const { id } = (await r.json()) as { id: string };
    const rows = await until('the deployment\'s desktops', async () => {
      const jobs = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
      if (jobs.length === 0 || jobs.some((j) => j.status === 'running')) return undefined;
      return server.ctx.db.select().from(schema.domains).where(eq(schema.domains.tag, id));
    }, 120_000);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.accessedAt?.getTime()).toBeGreaterThan(0);
    const desktops = (await (await call(server, `/api/v3/deployment/${id}`, { token: teacher })).json()).desktops as { accessed: number | null }[];
    expect(desktops.length).toBe(rows.length);
    for (const d of desktops) expect(d.accessed).toBeGreaterThanOrEqual(before);

    const made = await call(server, '/api/v3/persistent_desktop', { token: teacher, body: { name: 'Fresh desktop', template_id: template } });
    expect(made.status).toBe(200);
    const [fresh] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, ((await made.json()) as { id: string }).id));
    expect(fresh!.accessedAt?.getTime()).toBeGreaterThan(0);
  }, scaled(180_000));
});

describe('allowed with missing keys', () => {
  it('takes a missing criterion as unused (false) for media, as for templates', async () => {
    const r = await call(server, '/api/v3/media', {
      token: teacher,
      body: { name: 'Partly shared', url: `${files.base}/demo.iso`, kind: 'iso', allowed: { groups: [] } },
    });
    expect({ status: r.status, body: r.status === 200 ? {} : await r.clone().json() }).toEqual({ status: 200, body: {} });
    const { id } = (await r.json()) as { id: string };
    const [row] = await server.ctx.db.select().from(schema.media).where(eq(schema.media.id, id));
    expect(row!.allowed).toEqual({ roles: false, categories: false, groups: [], users: false });
    // Still checked: a wrong type is refused.
    expect(await codeOf(await call(server, '/api/v3/media', { token: teacher, body: { name: 'Bad', url: `${files.base}/demo.iso`, kind: 'iso', allowed: { users: 'all' } } }))).toEqual({ status: 400, code: 'validation_error' });
  });
});
