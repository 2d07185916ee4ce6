import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import { ADMIN_SOCKET_NAMESPACE, SOCKET_PATH, ZAuditList, type TAuditEntry } from '@vdi/contracts';
import { schema } from '../../src/db';
import { sweepAudit } from '../../src/modules/admin/audit/sweep';
import { sweepIdleTemporaryDesktops } from '../../src/modules/desktops/temporary-sweep';
import type { DesktopLifecycle } from '../../src/modules/desktops/lifecycle';
import { viewerOpened } from '../../src/modules/viewers/activity';
import { call, login, startTestServer, type TestServer } from '../helpers/server';
import { copyUser, makeBinEntry, makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { startMailSink } from '../helpers/mail-sink';
import { until } from '../helpers/wait';
import { and } from 'drizzle-orm';

/** The day this file began (UTC), before any audit entry of its server was written. */
const fileBegan = new Date().toISOString().slice(0, 10);

// The system part of the administration console (issue 11): settings, audit log, live namespace.
// Callers: admin, manager of Default, a manager of Research Lab ("labmanager"), advanced, user.

const A = '/api/v3/admin';
type Caller = 'admin' | 'manager' | 'labmanager' | 'advanced' | 'user';
const CALLERS: Caller[] = ['admin', 'manager', 'labmanager', 'advanced', 'user'];

let server: TestServer;
const tok = {} as Record<Caller, string>;
let mail: Awaited<ReturnType<typeof startMailSink>>;

beforeAll(async () => {
  server = await startTestServer();
  mail = await startMailSink();
  const lab = await copyUser(server, { username: 'manager' }, 'labmanager');
  await server.ctx.db.update(schema.users).set({ categoryId: 'lab', groupId: (await userRow(server, 'researcher', 'lab')).groupId }).where(eq(schema.users.id, lab.id));
  for (const c of CALLERS) tok[c] = await tokenOf(server, c, c === 'labmanager' ? 'lab' : 'default');
}, scaled(240_000));
afterAll(async () => {
  await mail?.close();
  await server?.close();
});

const auditOf = async (query: string, token = tok.admin) => {
  const r = await call(server, `${A}/audit?${query}`, { token });
  expect(r.status).toBe(200);
  return ZAuditList.parse(await r.json());
};

describe('settings: who may read and write', () => {
  it('admins only (managers, advanced and users 403)', async () => {
    for (const c of CALLERS) {
      const get = await call(server, `${A}/settings/status_bar`, { token: tok[c] });
      const put = await call(server, `${A}/settings/status_bar`, { token: tok[c], method: 'PUT', body: { enabled: false } });
      const test = await call(server, `${A}/settings/mail/test`, { token: tok[c], method: 'POST', body: { to: 'x@example.org' } });
      if (c === 'admin') {
        expect(get.status).toBe(200);
        expect(put.status).toBe(200);
        expect(test.status).toBe(428); // mail off here
      } else {
        for (const r of [get, put, test]) expect(r.status, `${c} ${r.url}`).toBe(403);
      }
    }
    expect((await call(server, `${A}/settings/status_bar`)).status).toBe(401);
  });

  it('unknown keys answer 404, bad values 400 with a description_code', async () => {
    expect((await call(server, `${A}/settings/nope`, { token: tok.admin })).status).toBe(404);
    const bad = await call(server, `${A}/settings/status_bar`, { token: tok.admin, method: 'PUT', body: { level: 'purple' } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).description_code).toBe('validation_error');
  });
});

describe('settings take effect at once', () => {
  it('status bar: the portal shows it, level and text, and hides it when off', async () => {
    await call(server, `${A}/settings/status_bar`, { token: tok.admin, method: 'PUT', body: { enabled: true, level: 'warning', text: 'Upgrade tonight' } });
    const shown = await (await call(server, '/api/v3/notifications/status_bar', { token: tok.user })).json();
    expect(shown).toMatchObject({ text: 'Upgrade tonight', level: 'warning' });
    await call(server, `${A}/settings/status_bar`, { token: tok.admin, method: 'PUT', body: { enabled: false } });
    expect(await (await call(server, '/api/v3/notifications/status_bar', { token: tok.user })).json()).toBeNull();
  });

  it('login options: hidden categories select, a notice, a hidden provider', async () => {
    await call(server, `${A}/settings/login`, {
      token: tok.admin,
      method: 'PUT',
      body: { hide_categories_select: true, notice: { enabled: true, title: 'Welcome', text: 'Use your school account' } },
    });
    let cfg = await (await call(server, '/api/v3/login_config')).json();
    expect(cfg.categories_select).toBe(false);
    expect(cfg.notification_cover).toEqual({ enabled: true, title: 'Welcome', description: 'Use your school account' });
    await call(server, `${A}/settings/login`, { token: tok.admin, method: 'PUT', body: { hidden_providers: ['form'] } });
    cfg = await (await call(server, '/api/v3/login_config')).json();
    expect(cfg.providers.all.display_providers).not.toContain('form');
    await call(server, `${A}/settings/login`, {
      token: tok.admin,
      method: 'PUT',
      body: { hidden_providers: [], hide_categories_select: false, notice: { enabled: false, title: '', text: '' } },
    });
    cfg = await (await call(server, '/api/v3/login_config')).json();
    expect(cfg.providers.all.display_providers).toContain('form');
    expect(cfg.categories_select).toBe(true);
  });

  it('disclaimer keeps {enabled, title, body} and adds texts per language', async () => {
    const r = await call(server, `${A}/settings/disclaimer`, {
      token: tok.admin,
      method: 'PUT',
      body: { title: 'Terms', body: 'Default text', texts: { ca: { title: 'Condicions', body: 'Text en català' } } },
    });
    expect(r.status).toBe(200);
    const stored = await server.ctx.settings.get('disclaimer');
    expect(stored).toMatchObject({ enabled: false, title: 'Terms', body: 'Default text', texts: { ca: { title: 'Condicions', body: 'Text en català' } } });
    expect(await (await call(server, '/api/v3/disclaimer')).json()).toEqual({ title: 'Terms', body: 'Default text' });
    // The portal asks in its language; a language without its own text gets the default one.
    expect(await (await call(server, '/api/v3/disclaimer?lang=ca')).json()).toEqual({ title: 'Condicions', body: 'Text en català' });
    expect(await (await call(server, '/api/v3/disclaimer?lang=fr-FR')).json()).toEqual({ title: 'Terms', body: 'Default text' });
    const accept = await fetch(`${server.url}/api/v3/disclaimer`, { headers: { 'accept-language': 'ca-ES,ca;q=0.9' } });
    expect(await accept.json()).toEqual({ title: 'Condicions', body: 'Text en català' });
  });

  it('password policy per category and role applies to the next password check', async () => {
    const before = await (await call(server, `${A}/settings/password_policies`, { token: tok.admin })).json();
    expect(before.items.some((p: { category: string; role: string }) => p.category === 'all' && p.role === 'all')).toBe(true);
    const rule = { length: 12, uppercase: 1, lowercase: 1, digits: 2, special_characters: 1, not_username: true, old_passwords: 3, expire: 90 };
    const put = await call(server, `${A}/settings/password_policies`, {
      token: tok.admin,
      method: 'PUT',
      body: { items: [...before.items, { category: 'default', role: 'user', ...rule }] },
    });
    expect(put.status).toBe(200);
    const policy = await (await call(server, '/api/v3/user/password-policy', { token: tok.user })).json();
    expect(policy).toMatchObject({ length: 12, digits: 2, uppercase: 1, special_characters: 1, not_username: true, old_passwords: 3, expire: 90 });
    const dup = await call(server, `${A}/settings/password_policies`, {
      token: tok.admin,
      method: 'PUT',
      body: { items: [{ category: 'default', role: 'user', ...rule }, { category: 'default', role: 'user', ...rule }] },
    });
    expect(dup.status).toBe(400);
    const unknown = await call(server, `${A}/settings/password_policies`, { token: tok.admin, method: 'PUT', body: { items: [{ category: 'nowhere', role: 'all', ...rule }] } });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).description_code).toBe('category_not_found');
    await call(server, `${A}/settings/password_policies`, { token: tok.admin, method: 'PUT', body: { items: before.items } });
  });

  it('mail: stored without answering the password; a test mail reaches a real SMTP server', async () => {
    const put = await call(server, `${A}/settings/mail`, {
      token: tok.admin,
      method: 'PUT',
      body: { enabled: true, host: '127.0.0.1', port: mail.port, secure: false, user: '', password: 'smtp-secret', from: 'Portal <portal@example.org>' },
    });
    expect(put.status).toBe(200);
    const answered = await (await call(server, `${A}/settings/mail`, { token: tok.admin })).json();
    expect(answered).toMatchObject({ enabled: true, host: '127.0.0.1', password: '', password_set: true });
    expect(JSON.stringify(answered)).not.toContain('smtp-secret');
    // Sending the answer back unchanged keeps the stored password.
    await call(server, `${A}/settings/mail`, { token: tok.admin, method: 'PUT', body: answered });
    expect((await server.ctx.settings.get('mail')).password).toBe('smtp-secret');
    // Mail is on without a restart; its links need the public address too, then the login page offers the forgotten-password link.
    const hideForgot = async () => (await (await call(server, '/api/v3/login_config')).json()).providers.form.hide_forgot_password;
    expect(await hideForgot()).toBe(true);
    expect((await call(server, `${A}/settings/public_address`, { token: tok.admin, method: 'PUT', body: { url: 'https://vdi.example.org' } })).status).toBe(200);
    expect(await hideForgot()).toBe(false);
    const sent = await call(server, `${A}/settings/mail/test`, { token: tok.admin, method: 'POST', body: { to: 'admin@example.org' } });
    expect(sent.status).toBe(200);
    await until('the test mail', async () => mail.mails.some((m) => m.to.includes('admin@example.org')), 20_000);
    // A server that is not there: a clear 428, not a 5xx.
    await call(server, `${A}/settings/mail`, { token: tok.admin, method: 'PUT', body: { port: 1 } });
    const failed = await call(server, `${A}/settings/mail/test`, { token: tok.admin, method: 'POST', body: { to: 'admin@example.org' } });
    expect(failed.status).toBe(428);
    expect((await failed.json()).description_code).toBe('mail_send_failed');
    await call(server, `${A}/settings/mail`, { token: tok.admin, method: 'PUT', body: { enabled: false } });
    expect(await hideForgot()).toBe(true);
    await call(server, `${A}/settings/public_address`, { token: tok.admin, method: 'PUT', body: { url: '' } });
  });

  it('session lifetimes apply to the next sign-in', async () => {
    await call(server, `${A}/settings/sessions`, { token: tok.admin, method: 'PUT', body: { token_seconds: 120 } });
    const { token } = await login(server, 'student01');
    const claims = JSON.parse(Buffer.from(token!.split('.')[1]!, 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(120);
    await call(server, `${A}/settings/sessions`, { token: tok.admin, method: 'PUT', body: { token_seconds: null } });
    const again = JSON.parse(Buffer.from((await login(server, 'student01')).token!.split('.')[1]!, 'base64url').toString());
    expect(again.exp - again.iat).toBe(server.config.session.tokenSeconds);
  });

  it('recycle-bin retention, temporary-desktop inactivity and audit retention are stored', async () => {
    for (const [key, body] of [
      ['recycle_bin', { cutoff_hours: 48 }],
      ['temporary_desktops', { inactivity_minutes: 30 }],
      ['audit', { retention_days: 400 }],
    ] as const) {
      const r = await call(server, `${A}/settings/${key}`, { token: tok.admin, method: 'PUT', body });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject(body);
    }
  });
});

describe('temporary-desktop inactivity limit', () => {
  it('stops (deletes) a running temporary desktop nobody has viewed for the limit, not one being viewed', async () => {
    // (rows marked running without a machine; put back to Stopped at the end, whatever happens)
    const owner = await userRow(server, 'user');
    const idle = await makeDesktop(server, owner, { name: 'Idle temporary' });
    const watched = await makeDesktop(server, owner, { name: 'Watched temporary' });
    const startedAt = new Date(Date.now() - 10 * 60_000);
    for (const d of [idle, watched]) {
      await server.ctx.db.update(schema.domains).set({ persistent: false, status: 'Started', startedAt, accessedAt: startedAt }).where(eq(schema.domains.id, d.id));
    }
    onTestFinished(async () => {
      await call(server, `${A}/settings/temporary_desktops`, { token: tok.admin, method: 'PUT', body: { inactivity_minutes: 0 } });
      for (const d of [idle, watched]) await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, d.id));
    });
    const destroyed: string[] = [];
    // The lifecycle's deletion is its own suite's; here it only marks the row as gone from the running ones.
    const lifecycle = {
      destroyDesktop: async (row: { id: string }) => {
        destroyed.push(row.id);
        await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, row.id));
      },
    } as unknown as DesktopLifecycle;
    // Off (0): nothing happens.
    await call(server, `${A}/settings/temporary_desktops`, { token: tok.admin, method: 'PUT', body: { inactivity_minutes: 0 } });
    expect(await sweepIdleTemporaryDesktops(server.ctx, lifecycle)).toBe(0);
    // 5 minutes: the idle one goes; the one with a viewer open stays, and after its viewer closes it has 5 more minutes.
    await call(server, `${A}/settings/temporary_desktops`, { token: tok.admin, method: 'PUT', body: { inactivity_minutes: 5 } });
    const closeViewer = await viewerOpened(server.ctx, watched.id);
    expect(await sweepIdleTemporaryDesktops(server.ctx, lifecycle)).toBe(1);
    expect(destroyed).toEqual([idle.id]);
    await closeViewer();
    expect(await sweepIdleTemporaryDesktops(server.ctx, lifecycle, Date.now() + 60_000)).toBe(0);
    expect(await sweepIdleTemporaryDesktops(server.ctx, lifecycle, Date.now() + 6 * 60_000)).toBe(1);
    expect(destroyed).toContain(watched.id);
    const { items } = await auditOf(`action=desktop.temporary_expired&object=${idle.id}`);
    expect(items[0]).toMatchObject({ actor_name: '', object_name: 'Idle temporary', category_id: 'default' });
  });
});

describe('maintenance: users held back, admins keep working', () => {
  it('answers 503 maintenance to the user, 200 to the admin, and lifts', async () => {
    await call(server, `${A}/settings/maintenance`, { token: tok.admin, method: 'PUT', body: { enabled: true, title: 'Upgrade', body: 'Back at noon' } });
    try {
      const r = await call(server, '/api/v3/user', { token: tok.user });
      expect(r.status).toBe(503);
      expect((await r.json()).description_code).toBe('maintenance');
      expect((await call(server, `${A}/audit`, { token: tok.admin })).status).toBe(200);
    } finally {
      await call(server, `${A}/settings/maintenance`, { token: tok.admin, method: 'PUT', body: { enabled: false } });
    }
    expect((await call(server, '/api/v3/user', { token: tok.user })).status).toBe(200);
    const { items } = await auditOf('action=settings.update&object=maintenance');
    expect(items.length).toBeGreaterThanOrEqual(2);
    expect(items[0]).toMatchObject({ actor_name: 'admin', actor_role: 'admin', object_id: 'maintenance', address: '127.0.0.1' });
  });
});

describe('audit log: security events', () => {
  it('sign-in, failed sign-in, sign-out', async () => {
    const t = await tokenOf(server, 'student02');
    await login(server, 'student02', 'wrong-password');
    await call(server, '/authentication/logout', { token: t, method: 'POST' });
    const { items } = await auditOf('actor=student02&action=auth.');
    const actions = items.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['auth.sign_in', 'auth.sign_in_failed', 'auth.sign_out']));
    // Signing in again ends the earlier session (one per user): that is written too.
    await tokenOf(server, 'student02');
    await tokenOf(server, 'student02');
    const again = await auditOf('actor=student02&action=auth.session_revoked');
    expect(again.items[0]).toMatchObject({ object_name: 'student02', detail: { sessions: 1, reason: 'signed_in_again' } });
    const failed = items.find((e) => e.action === 'auth.sign_in_failed')!;
    expect(failed).toMatchObject({ actor_id: null, actor_name: 'student02', address: '127.0.0.1' });
    expect(JSON.stringify(items)).not.toContain('wrong-password');
  });

  it('user disabled ends their sessions: user.disable and auth.session_revoked', async () => {
    const s3 = await userRow(server, 'student03');
    await tokenOf(server, 'student03');
    expect((await call(server, `${A}/user/${s3.id}/active`, { token: tok.admin, method: 'PUT', body: { active: false } })).status).toBe(200);
    await call(server, `${A}/user/${s3.id}/active`, { token: tok.admin, method: 'PUT', body: { active: true } });
    const { items } = await auditOf(`object=${s3.id}`);
    expect(items.map((e) => e.action)).toEqual(expect.arrayContaining(['user.disable', 'user.enable', 'auth.session_revoked']));
    expect(items.find((e) => e.action === 'user.disable')).toMatchObject({ actor_name: 'admin', object_name: 'student03', category_id: 'default' });
  });

  it('category maintenance: written under its category, seen by its managers only', async () => {
    await call(server, `${A}/category/lab/maintenance`, { token: tok.admin, method: 'PUT', body: { enabled: true } });
    await call(server, `${A}/category/lab/maintenance`, { token: tok.admin, method: 'PUT', body: { enabled: false } });
    const lab = await auditOf('action=category.', tok.labmanager);
    expect(lab.items.map((e) => e.action)).toEqual(['category.maintenance_off', 'category.maintenance_on']);
    expect(lab.items[0]).toMatchObject({ actor_name: 'admin', object_id: 'lab', category_id: 'lab' });
    expect((await auditOf('action=category.', tok.manager)).total).toBe(0);
  });

  it('a viewer opened by someone other than the owner', async () => {
    const owner = await userRow(server, 'user');
    const [d] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.userId, owner.id), eq(schema.domains.name, 'Demo desktop')));
    expect((await call(server, `/api/v3/desktop/start/${d!.id}`, { token: tok.user })).status).toBe(200);
    try {
      await until('the desktop started', async () => {
        const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, d!.id));
        return row?.status === 'Started';
      }, scaled(120_000));
      expect((await call(server, `/api/v3/desktop/${d!.id}/viewer/browser-vnc`, { token: tok.user })).status).toBe(200);
      expect((await call(server, `/api/v3/desktop/${d!.id}/viewer/browser-vnc`, { token: tok.admin })).status).toBe(200);
      const { items } = await auditOf(`action=viewer.open_other&object=${d!.id}`);
      // The owner's own viewer is no security event; the admin's is.
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ actor_name: 'admin', object_type: 'desktop', category_id: 'default', detail: { viewer: 'browser-vnc', owner_id: owner.id } });
    } finally {
      await call(server, `/api/v3/desktop/stop/${d!.id}`, { token: tok.admin });
    }
  }, scaled(180_000));

  it('recycle-bin restore and deletion', async () => {
    const owner = await userRow(server, 'user');
    const a = (await makeBinEntry(server, owner, tok.user)).id;
    expect((await call(server, `/api/v3/recycle_bin/restore/${a}`, { token: tok.user, method: 'PUT' })).status).toBe(200);
    const b = (await makeBinEntry(server, owner, tok.user)).id;
    expect((await call(server, `/api/v3/recycle_bin/${b}`, { token: tok.admin, method: 'DELETE' })).status).toBe(200);
    const restored = await auditOf(`action=recycle_bin.restore&object=${a}`);
    expect(restored.items[0]).toMatchObject({ actor_name: 'user', object_id: a });
    const deleted = await auditOf(`action=recycle_bin.delete&object=${b}`);
    expect(deleted.items[0]).toMatchObject({ actor_name: 'admin', object_id: b, category_id: 'default' });
  });
});

describe('audit log API', () => {
  it('managers see their category only; advanced and users 403', async () => {
    const mine = await auditOf('per_page=1000', tok.manager);
    expect(mine.items.length).toBeGreaterThan(0);
    expect(mine.items.every((e) => e.category_id === 'default')).toBe(true);
    const lab = await auditOf('per_page=1000', tok.labmanager);
    expect(lab.items.every((e) => e.category_id === 'lab')).toBe(true);
    // Settings (no category) are admins' only.
    expect(mine.items.some((e) => e.action === 'settings.update')).toBe(false);
    // The export too: a manager's CSV holds their category's rows only.
    for (const [c, category] of [['manager', 'default'], ['labmanager', 'lab']] as const) {
      const csv = await call(server, `${A}/audit/export`, { token: tok[c] });
      expect(csv.status).toBe(200);
      const rows = (await csv.text()).trim().split('\r\n').slice(1);
      expect(rows.every((r) => r.split(',').includes(category))).toBe(true);
    }
    for (const c of ['advanced', 'user'] as const) {
      expect((await call(server, `${A}/audit`, { token: tok[c] })).status).toBe(403);
      expect((await call(server, `${A}/audit/export`, { token: tok[c] })).status).toBe(403);
    }
  });

  it('filters, pages and totals; bad filters 400', async () => {
    const all = await auditOf('per_page=2');
    expect(all.items).toHaveLength(2);
    expect(all.total).toBeGreaterThan(2);
    const next = await auditOf('per_page=2&page=2');
    expect(next.items[0]!.id).toBeLessThan(all.items[1]!.id);
    // From the day this file began to today (a run may cross midnight: both days then).
    const today = new Date().toISOString().slice(0, 10);
    expect((await auditOf(`from=${fileBegan}&to=${today}`)).total).toBe(all.total);
    expect((await auditOf('to=2000-01-01')).total).toBe(0);
    expect((await auditOf('search=student02')).items.every((e: TAuditEntry) => JSON.stringify(e).includes('student02'))).toBe(true);
    const bad = await call(server, `${A}/audit?from=yesterday`, { token: tok.admin });
    expect(bad.status).toBe(400);
    expect((await bad.json()).description_code).toBe('validation_error');
  });

  it('exports CSV with the same filters', async () => {
    const r = await call(server, `${A}/audit/export?action=auth.sign_in`, { token: tok.admin });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/csv');
    expect(r.headers.get('content-disposition')).toContain('attachment');
    const lines = (await r.text()).trim().split('\r\n');
    expect(lines[0]).toBe('at,actor_name,actor_role,action,object_type,object_id,object_name,category_id,address,detail');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(1).every((l) => l.includes(',auth.sign_in,'))).toBe(true);
  });

  it('is append-only: no call edits or deletes; the database refuses updates', async () => {
    for (const method of ['PUT', 'DELETE', 'POST']) {
      expect([404, 405]).toContain((await call(server, `${A}/audit`, { token: tok.admin, method, body: method === 'DELETE' ? undefined : {} })).status);
    }
    await expect(server.ctx.db.update(schema.auditLog).set({ action: 'tampered' })).rejects.toThrow();
  });

  it('the retention sweep removes entries older than the setting', async () => {
    await call(server, `${A}/settings/audit`, { token: tok.admin, method: 'PUT', body: { retention_days: 30 } });
    const before = (await auditOf('')).total;
    // 31 days from now, every entry so far is older than 30 days.
    expect(await sweepAudit(server.ctx, Date.now() + 31 * 86_400_000)).toBeGreaterThanOrEqual(before);
    expect((await auditOf('')).total).toBeLessThan(before);
    // Kept for ever with 0 days.
    await call(server, `${A}/settings/audit`, { token: tok.admin, method: 'PUT', body: { retention_days: 0 } });
    expect(await sweepAudit(server.ctx, Date.now() + 365 * 86_400_000)).toBe(0);
  });
});

describe('/administrators live namespace', () => {
  const connect = (token: string) =>
    io(`${server.url}${ADMIN_SOCKET_NAMESPACE}`, { path: SOCKET_PATH, auth: { jwt: token }, transports: ['websocket'], reconnection: false });
  const connected = (s: Socket) =>
    new Promise<boolean>((resolve) => {
      s.on('connect', () => resolve(true));
      s.on('connect_error', () => resolve(false));
    });

  it('admins and managers connect, others are refused; settings go to admins, category entries to its managers', async () => {
    const sockets = Object.fromEntries(CALLERS.map((c) => [c, connect(tok[c])])) as Record<Caller, Socket>;
    try {
      const ok = Object.fromEntries(await Promise.all(CALLERS.map(async (c) => [c, await connected(sockets[c])] as const)));
      expect(ok).toEqual({ admin: true, manager: true, labmanager: true, advanced: false, user: false });
      const heard: Record<string, string[]> = { admin: [], manager: [], labmanager: [] };
      for (const c of ['admin', 'manager', 'labmanager'] as const) {
        sockets[c].onAny((event: string, payload: string) => heard[c]!.push(`${event}:${JSON.parse(payload).key ?? JSON.parse(payload).action}`));
      }
      await call(server, `${A}/settings/status_bar`, { token: tok.admin, method: 'PUT', body: { enabled: false } });
      const s4 = await userRow(server, 'student04');
      await call(server, `${A}/user/${s4.id}/active`, { token: tok.admin, method: 'PUT', body: { active: true } });
      await until('the live events', async () => heard.admin!.includes('settings_update:status_bar') && heard.manager!.includes('audit_add:user.enable'), 20_000);
      expect(heard.admin).toContain('audit_add:settings.update');
      expect(heard.manager!.some((h) => h.startsWith('settings_update'))).toBe(false);
      expect(heard.labmanager!.some((h) => h.includes('user.enable'))).toBe(false);
    } finally {
      for (const s of Object.values(sockets)) s.close();
    }
  });
});

describe('sign-in coupling with the admin area', () => {
  it('the portal sign-out ends the admin session opened from it', async () => {
    const t = await tokenOf(server, 'manager');
    const opened = await fetch(`${server.url}/isard-admin/login`, { method: 'POST', headers: { authorization: `Bearer ${t}` } });
    expect(await opened.json()).toEqual({ success: true });
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const { adminSessionUser } = await import('../../src/auth/admin-session');
    expect(await adminSessionUser(server.ctx, cookie.split('=')[1])).not.toBeNull();
    await call(server, '/authentication/logout', { token: t, method: 'POST' });
    expect(await adminSessionUser(server.ctx, cookie.split('=')[1])).toBeNull();
    const out = await fetch(`${server.url}/isard-admin/logout/remote`, { headers: { cookie } });
    expect(await out.json()).toEqual({ success: true });
  });
});

