import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { formatBookingDate } from '@vdi/contracts';
import { schema } from '../../src/db';
import { adminSessionUser, ADMIN_SESSION_COOKIE } from '../../src/auth/admin-session';
import { join } from 'node:path';
import { startMediaFileServer, type MediaFileServer } from '../helpers/media-file-server';
import { call, loginToken, startTestServer, testImagesDir, userIdOf, type TestServer } from '../helpers/server';
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
    // The portal's own sign-in page reads the same list from the login configuration (where the original has it).
    expect((await (await call(server, '/api/v3/login_config')).json()).providers.all.display_providers).toEqual(['form']);
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
    expect(await codeOf(await call(server, '/api/v3/authentication/export/no%20such', { token: user }))).toEqual({ status: 400, code: 'validation_error' });
    // Nobody signed in is asked for a session before the input is checked.
    expect(await codeOf(await call(server, '/api/v3/authentication/export/no%20such'))).toEqual({ status: 401, code: 'missing_token' });
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
      if (jobs.length === 0 || jobs.some((j) => j.status === 'running' || j.status === 'queued')) return undefined;
      return server.ctx.db.select().from(schema.domains).where(eq(schema.domains.tag, id));
    }, scaled(120_000));
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

describe('vgpus ["None"] (what the original portal sends for "no GPU")', () => {
  // The portal's forms send the whole hardware block, the GPU in hardware.reservables.
  const v3Hardware = (vgpus: string[]) => ({
    boot_order: ['disk'], disk_bus: 'default', disks: [], floppies: [], interfaces: ['default'], isos: [], memory: 1, vcpus: 1, videos: ['default'],
    reservables: { vgpus },
  });
  const vgpusOf = async (deploymentId: string) =>
    (await server.ctx.db.select().from(schema.deployments).where(eq(schema.deployments.id, deploymentId)))[0]!.createDict.hardware.reservables.vgpus;
  const ok = async (r: Response) => expect({ status: r.status, body: r.status === 200 ? {} : await r.clone().json() }).toEqual({ status: 200, body: {} });

  it('is no GPU when a deployment is made or edited, a desktop made, or a desktop’s GPU set', async () => {
    const made = await call(server, '/api/v3/deployments', {
      token: teacher,
      body: { name: 'No GPU lab', description: '', template_id: template, desktop_name: 'No GPU desktop', visible: false, allowed: { groups: false, users: [await userIdOf(server, 'user')] }, hardware: v3Hardware(['None']) },
    });
    await ok(made);
    const { id } = (await made.json()) as { id: string };
    expect(await vgpusOf(id)).toBeNull();
    await until('the deployment\'s desktops', async () => {
      const jobs = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
      return jobs.length > 0 && jobs.every((j) => j.status !== 'running' && j.status !== 'queued') ? true : undefined;
    }, scaled(120_000));
    // An edit gives it a GPU, and takes it away the portal's way.
    await ok(await call(server, `/api/v3/deployment/${id}`, { token: teacher, method: 'PUT', body: { name: 'No GPU lab', hardware: v3Hardware(['NVIDIA-A40-2Q']) } }));
    expect(await vgpusOf(id)).toEqual(['NVIDIA-A40-2Q']);
    await ok(await call(server, `/api/v3/deployment/${id}`, { token: teacher, method: 'PUT', body: { name: 'No GPU lab', hardware: v3Hardware(['None']) } }));
    expect(await vgpusOf(id)).toBeNull();

    const desktop = await call(server, '/api/v3/persistent_desktop', { token: teacher, body: { name: 'No GPU desktop', template_id: template, hardware: v3Hardware(['None']) } });
    await ok(desktop);
    const desktopId = ((await desktop.json()) as { id: string }).id;
    await until('the desktop stopped', async () => ((await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktopId)))[0]?.status === 'Stopped' ? true : undefined), 120_000);
    const set = await call(server, `/api/v3/domain/reservables/${desktopId}`, { token: teacher, method: 'PUT', body: { vgpus: ['None'] } });
    await ok(set);
    expect(((await set.json()) as { reservables: unknown }).reservables).toEqual({ vgpus: null });
    // A profile that does not exist is still refused.
    expect(await codeOf(await call(server, '/api/v3/deployments', {
      token: teacher,
      body: { name: 'Bad GPU lab', template_id: template, desktop_name: 'Bad GPU desktop', allowed: { groups: ['default-students-1a'] }, hardware: v3Hardware(['NVIDIA-Z9-1Q']) },
    }))).toEqual({ status: 400, code: 'reservable_not_found' });
  }, scaled(240_000));
});

describe('GET /bookings/user/{itemId}/{itemType}[/{returnType}]', () => {
  it('answers one array: the bookings, then the availability (the portal’s booking calendar)', async () => {
    const desktops = (await (await call(server, '/api/v3/user/desktops', { token: user })).json()) as { id: string; name: string }[];
    const gpu = desktops.find((d) => d.name === 'GPU desktop')!.id;
    const hour = 3_600_000;
    const start = new Date(Math.ceil(Date.now() / hour) * hour + hour);
    const fmt = (d: Date) => formatBookingDate(d);
    const booked = await call(server, '/api/v3/booking/event', { token: user, body: { element_id: gpu, element_type: 'desktop', title: 'Rendering', start: fmt(start), end: fmt(new Date(start.getTime() + hour)) } });
    expect(booked.status).toBe(200);
    const { id: bookingId } = (await booked.json()) as { id: string };
    try {
      // As the portal asks: dates as moment sends them, returnType in the query ("all", or "events" in the month view).
      const q = (returnType: string) => `startDate=${encodeURIComponent(fmt(new Date(start.getTime() - 24 * hour)).replace('+0000', '+00:00'))}&endDate=${encodeURIComponent(fmt(new Date(start.getTime() + 7 * 24 * hour)))}&returnType=${returnType}`;
      for (const returnType of ['all', 'events']) {
        const r = await call(server, `/api/v3/bookings/user/${gpu}/desktop?${q(returnType)}`, { token: user });
        expect(r.status).toBe(200);
        const list = (await r.json()) as { id: string; event_type: string; start: string; end: string; units: unknown }[];
        expect(Array.isArray(list)).toBe(true);
        expect(list[0]).toMatchObject({ id: bookingId, event_type: 'event', item_id: gpu, item_type: 'desktop', title: 'Rendering', start: fmt(start), units: 1 });
        expect(list.length).toBeGreaterThan(1);
        for (const a of list.slice(1)) expect(['available', 'unavailable', 'overridable']).toContain(a.event_type);
      }
      // returnType as a path segment.
      const events = await (await call(server, `/api/v3/bookings/user/${gpu}/desktop/event?${q('all')}`, { token: user })).json();
      expect(events.map((e: { id: string }) => e.id)).toEqual([bookingId]);
      const availability = await (await call(server, `/api/v3/bookings/user/${gpu}/desktop/availability?${q('all')}`, { token: user })).json();
      expect(availability.length).toBeGreaterThan(0);
      expect(availability.every((a: { event_type: string }) => a.event_type !== 'event')).toBe(true);
    } finally {
      await call(server, `/api/v3/booking/event/${bookingId}`, { token: user, method: 'DELETE' });
    }
  });
});

describe('GET /admin/reservables', () => {
  it('answers the kinds by name, which the planner page puts in its next call', async () => {
    const r = await call(server, '/api/v3/admin/reservables', { token: admin });
    expect(r.status).toBe(200);
    const kinds = (await r.json()) as string[];
    expect(kinds).toEqual(['gpus']);
    const items = await call(server, `/api/v3/admin/reservables/${kinds[0]}`, { token: admin });
    expect(items.status).toBe(200);
    expect(((await items.json()) as unknown[]).length).toBeGreaterThan(0);
  });
});

describe('GET /deployment/permissions/{id}', () => {
  it('answers the students’ rights as a list, which the portal’s edit form reads with includes()', async () => {
    const made = await call(server, '/api/v3/deployments', {
      token: teacher,
      body: { name: 'Rights lab', template_id: template, desktop_name: 'Rights desktop', allowed: { groups: false, users: [await userIdOf(server, 'user')] }, user_permissions: ['recreate'] },
    });
    expect(made.status).toBe(200);
    const { id } = (await made.json()) as { id: string };
    const r = await call(server, `/api/v3/deployment/permissions/${id}`, { token: teacher });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual(['recreate']);
  });
});
