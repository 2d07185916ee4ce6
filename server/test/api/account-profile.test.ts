import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { ZUser } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { startMailSink } from '../helpers/mail-sink';
import { socketOf, until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

let server: TestServer;
let sink: Awaited<ReturnType<typeof startMailSink>>;

beforeAll(async () => {
  sink = await startMailSink();
  server = await startTestServer({ env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sink.port), PUBLIC_URL: 'http://portal.test' } });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const put = (token: string, body: unknown) => call(server, '/api/v3/user', { token, method: 'PUT', body });
const codeOf = async (res: Response) => (await res.json()).description_code as string;
const tokenFromLink = (link: string | undefined) => new URL(link!).searchParams.get('token')!;

describe('PUT /user: password', () => {
  it('changes the password with the current one; the old one no longer signs in', async () => {
    const token = await loginToken(server, 'student01');
    const res = await put(token, { current_password: DEMO_PASSWORD, password: 'Brand-new-pass-7' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    // The session that changed it goes on.
    expect((await call(server, '/api/v3/user', { token })).status).toBe(200);
    expect((await login(server, 'student01')).res.status).toBe(401);
    expect((await login(server, 'student01', 'Brand-new-pass-7')).res.status).toBe(200);
  });

  it('refuses a wrong current password, the same password, a weak or a reused one, and changes nothing', async () => {
    const token = await loginToken(server, 'student02');
    const id = await userIdOf(server, 'student02');
    const [before] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.id, id));
    const wrong = await put(token, { current_password: 'not-it', password: 'Brand-new-pass-7' });
    expect(wrong.status).toBe(400);
    expect(await codeOf(wrong)).toBe('password_wrong_current');
    const same = await put(token, { current_password: DEMO_PASSWORD, password: DEMO_PASSWORD });
    expect(same.status).toBe(400);
    expect(await codeOf(same)).toBe('password_same_as_current');
    const weak = await put(token, { current_password: DEMO_PASSWORD, password: 'short' });
    expect(weak.status).toBe(400);
    expect(await codeOf(weak)).toBe('password_policy_length');
    // Reused: a policy remembering 5 passwords refuses the one before the current.
    await server.ctx.db.update(schema.passwordPolicies).set({ oldPasswords: 5 });
    try {
      expect((await put(token, { current_password: DEMO_PASSWORD, password: 'First-change-1' })).status).toBe(200);
      const reused = await put(token, { current_password: 'First-change-1', password: DEMO_PASSWORD });
      expect(reused.status).toBe(400);
      expect(await codeOf(reused)).toBe('password_policy_old_password');
    } finally {
      await server.ctx.db.update(schema.passwordPolicies).set({ oldPasswords: 0 });
      await server.ctx.db.update(schema.users).set({ passwordHash: before!.passwordHash, passwordHistory: [] }).where(eq(schema.users.id, id));
    }
  });

  it('validates the body with the contract', async () => {
    const token = await loginToken(server, 'student03');
    const res = await put(token, { password: 'x' });
    expect(res.status).toBe(400);
    expect(await codeOf(res)).toBe('validation_error');
  });
});

describe('PUT /user: e-mail', () => {
  it('mails a link to the new address and a notice to the old one; the address changes when the link is followed, live in every tab', async () => {
    const token = await loginToken(server, 'student03');
    const id = await userIdOf(server, 'student03');
    const heard: unknown[] = [];
    const sockets = [await socketOf(server, token), await socketOf(server, token)];
    sockets.forEach((s, tab) => s.on('users_data', (d: string) => heard.push({ tab, ...JSON.parse(d) })));
    try {
      const res = await put(token, { email: 'new03@example.org' });
      expect(res.status).toBe(200);
      const user = ZUser.parse(await (await call(server, '/api/v3/user', { token })).json());
      expect(user.email).toBe('student03@example.org');
      expect(user.email_pending).toBe('new03@example.org');
      const notice = [...sink.mails].reverse().find((m) => m.to.includes('student03@example.org'));
      expect(notice?.raw).toContain('new03@example.org');
      const link = sink.linkTo('new03@example.org');
      expect(link).toMatch(/^http:\/\/portal\.test\/verify-email\?token=/);
      const verify = await fetch(`${server.url}/authentication/verify-email`, { method: 'POST', headers: { authorization: `Bearer ${tokenFromLink(link)}` } });
      expect(verify.status).toBe(200);
      const after = ZUser.parse(await (await call(server, '/api/v3/user', { token })).json());
      expect(after).toMatchObject({ email: 'new03@example.org', email_pending: null });
      expect(after.email_verified).toBeGreaterThan(0);
      await until('users_data in both tabs', async () =>
        [0, 1].every((tab) => heard.some((d) => (d as { tab: number; email_verified: number | null }).tab === tab && (d as { email_verified: number | null }).email_verified)),
      );
      // A followed link is spent.
      const again = await fetch(`${server.url}/authentication/verify-email`, { method: 'POST', headers: { authorization: `Bearer ${tokenFromLink(link)}` } });
      expect(again.status).toBe(401);
    } finally {
      for (const s of sockets) s.close();
      await server.ctx.db.update(schema.users).set({ email: 'student03@example.org' }).where(eq(schema.users.id, id));
    }
  });

  it('answers 409 for an address another user has, and mails nothing', async () => {
    const token = await loginToken(server, 'student04');
    const before = sink.mails.length;
    const res = await put(token, { email: 'user@example.org' });
    expect(res.status).toBe(409);
    expect(await codeOf(res)).toBe('email_already_in_use');
    expect(sink.mails.length).toBe(before);
  });

  it('answers 504 email_send_failed when SMTP is down, and keeps the address unchanged', async () => {
    const id = await userIdOf(server, 'student04');
    const token = await loginToken(server, 'student04');
    const send = server.ctx.mailer.send;
    server.ctx.mailer.send = async () => {
      throw new Error('connection refused');
    };
    try {
      const res = await put(token, { email: 'down04@example.org' });
      expect(res.status).toBe(504);
      expect(await codeOf(res)).toBe('email_send_failed');
    } finally {
      server.ctx.mailer.send = send;
    }
    const [row] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.id, id));
    expect(row).toMatchObject({ email: 'student04@example.org', emailPending: null });
  });

  it('mails in the user’s language', async () => {
    const id = await userIdOf(server, 'advanced');
    await server.ctx.db.update(schema.users).set({ lang: 'es' }).where(eq(schema.users.id, id));
    const token = await loginToken(server, 'advanced');
    expect((await put(token, { email: 'nuevo@example.org' })).status).toBe(200);
    const mail = [...sink.mails].reverse().find((m) => m.to.includes('nuevo@example.org'));
    expect(mail?.raw).toContain('Subject: =?UTF-8?Q?Verifique_su_direcci');
    expect(mail?.raw).toContain('abriendo este enlace');
  });
});

describe('GET /user: profile fields', () => {
  it('answers the quota at the three levels, the disks size and no user storage', async () => {
    const token = await loginToken(server, 'user');
    const user = ZUser.parse(await (await call(server, '/api/v3/user', { token })).json());
    expect(user.quotas).toHaveProperty('category');
    expect(user.user_storage).toBeNull();
    expect(user.total_disk_size).toBe(user.used.total_size);
  });
});

describe('SMTP from the settings', () => {
  it('sends through the admin’s `mail` setting when it is on, even one written by another process', async () => {
    const other = await startMailSink();
    try {
      // Written straight into the database, as another server process would: read here within 5 s.
      await server.ctx.db.insert(schema.config).values({
        key: 'mail', value: { enabled: true, host: '127.0.0.1', port: other.port, secure: false, user: '', password: '', from: 'Portal <portal@example.org>' },
      });
      await until('setting read', async () => {
        const token = await loginToken(server, 'manager');
        const res = await put(token, { email: `manager-${Date.now()}@example.org` });
        return res.status === 200 && other.mails.length > 0;
      }, scaled(20_000));
      expect(other.mails[0]!.raw).toContain('portal@example.org');
    } finally {
      await server.ctx.db.delete(schema.config).where(eq(schema.config.key, 'mail'));
      await other.close();
    }
  });
});
