import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { ZLoginConfig } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { startMailSink } from '../helpers/mail-sink';
import { scaled } from '../helpers/slowdown';

// Issue 23, findings 1, 2, 3 and 14: links in mails come only from the configured public address (never
// from the request's Host); a password change ends every reset link; only the pending address verifies;
// the sign-in page's "Forgot password?" is offered only where a reset link can be mailed.
//
// The server has a mail server (SMTP_*) and no PUBLIC_URL: the public address is the admin's setting.

let server: TestServer;
let sink: Awaited<ReturnType<typeof startMailSink>>;
let admin: string;

beforeAll(async () => {
  sink = await startMailSink();
  server = await startTestServer({ env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sink.port) } });
  admin = await loginToken(server, 'admin');
}, scaled(120_000));
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

/** A JSON call with the Host header an attacker chooses (fetch does not let one set it). */
function withHost(host: string, path: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(path, server.url);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: path === '/api/v3/user' ? 'PUT' : 'POST',
        headers: { host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const EVIL = 'evil.example';
const forgot = (email: string) => withHost(EVIL, '/authentication/forgot-password', { category_id: 'default', email });
const bearerPost = (path: string, token: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
/** Every link mailed to `to`, oldest first (quoted-printable soft breaks undone). */
const linksTo = (to: string) =>
  sink.mails
    .filter((m) => m.to.includes(to))
    .map((m) => m.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=').match(/https?:\/\/\S+/)?.[0])
    .filter((l): l is string => Boolean(l));
const tokenOfLink = (link: string) => new URL(link).searchParams.get('token')!;
const hideForgot = async () => ZLoginConfig.parse(await (await call(server, '/api/v3/login_config')).json()).providers.form.hide_forgot_password;
const setPublicAddress = (url: string) => call(server, '/api/v3/admin/settings/public_address', { token: admin, method: 'PUT', body: { url } });

describe('links only from the configured public address', () => {
  it('without one: nothing is mailed whatever the Host, each call says why, and the sign-in page hides "Forgot password?"', async () => {
    const before = sink.mails.length;
    const asked = await forgot('student01@example.org');
    expect(asked).toMatchObject({ status: 428, body: { description_code: 'public_url_not_configured' } });

    const student = await loginToken(server, 'student02');
    const change = await withHost(EVIL, '/api/v3/user', { email: 'elsewhere02@example.org' }, student);
    expect(change).toMatchObject({ status: 428, body: { description_code: 'public_url_not_configured' } });
    const [row] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.id, await userIdOf(server, 'student02')));
    expect(row!.emailPending).toBeNull();

    const byAdmin = await withHost(EVIL, `/api/v3/admin/users/${await userIdOf(server, 'student03')}/reset-mail`, {}, admin);
    expect(byAdmin).toMatchObject({ status: 428, body: { description_code: 'public_url_not_configured' } });

    expect(sink.mails.length).toBe(before);
    expect(await hideForgot()).toBe(true);
    const setting = await (await call(server, '/api/v3/admin/settings/public_address', { token: admin })).json();
    expect(setting).toEqual({ url: '', environment: null });
  });

  it("with the admin's public address: the reset link points there, not at the request's Host", async () => {
    expect((await setPublicAddress('not a url')).status).toBe(400);
    expect((await setPublicAddress('https://vdi.example.org/')).status).toBe(200);
    expect(await hideForgot()).toBe(false);
    expect((await forgot('student01@example.org')).status).toBe(200);
    const link = linksTo('student01@example.org').at(-1);
    expect(link).toMatch(/^https:\/\/vdi\.example\.org\/reset-password\?token=/);
    expect(sink.mails.some((m) => m.raw.includes(EVIL))).toBe(false);
  });
});

describe('a password change ends every reset link', () => {
  const email = 'student03@example.org';
  const reset = (link: string, password: string) => bearerPost('/authentication/reset-password', tokenOfLink(link), { password });
  const codeOf = async (res: Response) => ({ status: res.status, code: (await res.json()).description_code });

  it('two links, a reset with the first: the second no longer resets', async () => {
    await forgot(email);
    await forgot(email);
    const [first, second] = linksTo(email).slice(-2);
    expect(first).not.toBe(second);
    expect((await reset(first!, 'first-link-pass-1')).status).toBe(200);
    expect(await codeOf(await reset(second!, 'second-link-pass-1'))).toEqual({ status: 401, code: 'invalid_token' });
  });

  it('a change of the password in the profile, or by an admin, ends the links sent before', async () => {
    await forgot(email);
    const beforeProfile = linksTo(email).at(-1)!;
    const { token } = await login(server, 'student03', 'first-link-pass-1');
    expect((await call(server, '/api/v3/user', { token, method: 'PUT', body: { current_password: 'first-link-pass-1', password: 'profile-pass-22' } })).status).toBe(200);
    expect(await codeOf(await reset(beforeProfile, 'too-late-pass-1'))).toEqual({ status: 401, code: 'invalid_token' });

    await forgot(email);
    const beforeAdmin = linksTo(email).at(-1)!;
    expect(beforeAdmin).not.toBe(beforeProfile);
    const id = await userIdOf(server, 'student03');
    expect((await call(server, `/api/v3/admin/users/${id}`, { token: admin, method: 'PUT', body: { password: 'admin-set-pass-3' } })).status).toBe(200);
    expect(await codeOf(await reset(beforeAdmin, 'too-late-pass-2'))).toEqual({ status: 401, code: 'invalid_token' });
  });
});

describe('only the pending address verifies', () => {
  it('new1 then new2: the link of new1 is superseded, before and after new2 is verified', async () => {
    const token = await loginToken(server, 'student04');
    const put = (email: string) => call(server, '/api/v3/user', { token, method: 'PUT', body: { email } });
    const verify = (link: string) => bearerPost('/authentication/verify-email', tokenOfLink(link));
    expect((await put('new1-04@example.org')).status).toBe(200);
    expect((await put('new2-04@example.org')).status).toBe(200);
    const one = linksTo('new1-04@example.org').at(-1)!;
    const two = linksTo('new2-04@example.org').at(-1)!;
    expect((await verify(one)).status).toBe(401);
    expect((await verify(two)).status).toBe(200);
    const res = await verify(one);
    expect(res.status).toBe(401);
    expect((await res.json()).description_code).toBe('invalid_token');
    const [row] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.id, await userIdOf(server, 'student04')));
    expect(row).toMatchObject({ email: 'new2-04@example.org', emailPending: null });
    expect(one).toMatch(/^https:\/\/vdi\.example\.org\/verify-email\?token=/);
  });
});

describe('"Forgot password?" on the sign-in page', () => {
  it('is hidden without a mail server even with a public address', async () => {
    const plain = await startTestServer({ env: { PUBLIC_URL: 'http://portal.test' } });
    try {
      const cfg = ZLoginConfig.parse(await (await call(plain, '/api/v3/login_config')).json());
      expect(cfg.providers).toEqual({ all: { display_providers: ['form'] }, form: { hide_forgot_password: true } });
      const setting = await (await call(plain, '/api/v3/admin/settings/public_address', { token: await loginToken(plain, 'admin') })).json();
      expect(setting).toEqual({ url: '', environment: 'http://portal.test' });
    } finally {
      await plain.close();
    }
  }, scaled(120_000));
});
