import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { call, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { startMailSink } from '../helpers/mail-sink';

let server: TestServer;
let sink: Awaited<ReturnType<typeof startMailSink>>;
let code: string;

beforeAll(async () => {
  sink = await startMailSink();
  server = await startTestServer({ env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sink.port), PUBLIC_URL: 'http://portal.test' } });
  const [reg] = await server.ctx.db.select().from(schema.registrationCodes);
  code = reg!.code;
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const bearerPost = (path: string, token: string | undefined, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

const tokenFromLink = (link: string | undefined) => new URL(link!).searchParams.get('token')!;

describe('registration with a code', () => {
  const identity = { category_id: 'default', username: 'newbie', name: 'New Person', email: 'newbie@example.org', password: 'long-enough-1' };

  it('signs up, refuses a wrong code, registers with the right one and signs in', async () => {
    const signup = await bearerPost('/authentication/signup', undefined, identity);
    expect(signup.status).toBe(200);
    const registerToken = await signup.text();
    expect(decodeJwt(registerToken)).toMatchObject({ type: 'register', username: 'newbie' });

    const wrong = await call(server, '/api/v3/user/register', { token: registerToken, body: { code: 'not-a-code' } });
    expect(wrong.status).toBe(404);
    expect((await wrong.json()).description_code).toBe('code_not_found');

    const ok = await call(server, '/api/v3/user/register', { token: registerToken, body: { code } });
    expect(ok.status).toBe(200);
    const again = await call(server, '/api/v3/user/register', { token: registerToken, body: { code } });
    expect(again.status).toBe(401);

    const res = await fetch(`${server.url}/authentication/login?provider=form`, { method: 'POST', headers: { authorization: `Bearer ${registerToken}` } });
    expect(res.status).toBe(200);
    const session = await res.text();
    const user = await (await call(server, '/api/v3/user', { token: session })).json();
    expect(user).toMatchObject({ username: 'newbie', group: 'default-students-1b', role: 'user' });
    expect((await login(server, 'newbie', 'long-enough-1')).res.status).toBe(200);
  });

  it('answers 409 for a taken user name and 400 for a weak password', async () => {
    const taken = await bearerPost('/authentication/signup', undefined, { ...identity, username: 'user' });
    expect(taken.status).toBe(409);
    expect((await taken.json()).description_code).toBe('username_exists');
    const weak = await bearerPost('/authentication/signup', undefined, { ...identity, username: 'weakling', password: 'short' });
    expect(weak.status).toBe(400);
    expect(await weak.json()).toMatchObject({ description_code: 'password_policy_length', params: { length: 8 } });
    const bad = await bearerPost('/authentication/signup', undefined, { ...identity, username: 'bad name!' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).description_code).toBe('validation_error');
  });

  it('answers 403 when the e-mail domain is not allowed in the category', async () => {
    await server.ctx.db.update(schema.categories).set({ allowedEmailDomains: ['school.edu'] }).where(eq(schema.categories.id, 'default'));
    try {
      const res = await bearerPost('/authentication/signup', undefined, { ...identity, username: 'outsider' });
      expect(res.status).toBe(403);
      expect((await res.json()).description_code).toBe('email_domain_not_allowed');
    } finally {
      await server.ctx.db.update(schema.categories).set({ allowedEmailDomains: [] }).where(eq(schema.categories.id, 'default'));
    }
  });

  it('answers 401 without a registration token', async () => {
    expect((await call(server, '/api/v3/user/register', { body: { code } })).status).toBe(401);
  });
});

describe('disclaimer', () => {
  it('holds the sign-in until the disclaimer is acknowledged', async () => {
    const admin = await loginToken(server, 'admin');
    const set = await call(server, '/api/v3/admin/settings/disclaimer', { token: admin, method: 'PUT', body: { enabled: true, title: 'Terms', body: 'Be nice.' } });
    expect(set.status).toBe(200);
    try {
      expect(await (await call(server, '/api/v3/disclaimer')).json()).toEqual({ title: 'Terms', body: 'Be nice.' });
      const { token } = await login(server, 'student01');
      expect(decodeJwt(token!).type).toBe('disclaimer-acknowledgement-required');
      expect((await call(server, '/api/v3/user', { token })).status).toBe(401);
      expect((await bearerPost('/authentication/acknowledge-disclaimer', token)).status).toBe(200);
      const res = await fetch(`${server.url}/authentication/login?provider=form`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      const session = await res.text();
      expect(decodeJwt(session).type).toBeUndefined();
      expect((await call(server, '/api/v3/user', { token: session })).status).toBe(200);
      // Acknowledged once, the next sign-in goes straight through.
      expect(decodeJwt((await login(server, 'student01')).token!).type).toBeUndefined();
    } finally {
      await call(server, '/api/v3/admin/settings/disclaimer', { token: admin, method: 'PUT', body: { enabled: false } });
    }
  });
});

describe('password reset', () => {
  it('requires a reset at sign-in when flagged, checks the policy, then signs in with the new password', async () => {
    const id = await userIdOf(server, 'student02');
    await server.ctx.db.update(schema.users).set({ passwordResetRequired: true }).where(eq(schema.users.id, id));
    const { token } = await login(server, 'student02');
    expect(decodeJwt(token!).type).toBe('password-reset-required');
    const policy = await (await call(server, '/api/v3/user/expired/password-policy', { token })).json();
    expect(policy).toMatchObject({ length: 8, type: 'local', subtype: 'password' });
    const weak = await bearerPost('/authentication/reset-password', token, { password: 'short' });
    expect(weak.status).toBe(400);
    expect((await weak.json()).description_code).toBe('password_policy_length');
    expect((await bearerPost('/authentication/reset-password', token, { password: 'a-brand-new-one' })).status).toBe(200);
    const { token: session } = await login(server, 'student02', 'a-brand-new-one');
    expect(decodeJwt(session!).type).toBeUndefined();
  });

  it('mails a one-time reset link for a forgotten password', async () => {
    const res = await bearerPost('/authentication/forgot-password', undefined, { category_id: 'default', email: 'student01@example.org' });
    expect(res.status).toBe(200);
    const link = sink.linkTo('student01@example.org');
    expect(link).toMatch(/^http:\/\/portal\.test\/reset-password\?token=/);
    const token = tokenFromLink(link);
    // A password the policy refuses does not use the link up.
    expect((await bearerPost('/authentication/reset-password', token, { password: 'short' })).status).toBe(400);
    expect((await bearerPost('/authentication/reset-password', token, { password: 'forgotten-and-back' })).status).toBe(200);
    expect((await bearerPost('/authentication/reset-password', token, { password: 'replayed-password' })).status).toBe(401);
    expect((await login(server, 'student01', 'forgotten-and-back')).res.status).toBe(200);
  });

  it('an admin makes a user without a password and mails them the link to set one', async () => {
    const admin = await loginToken(server, 'admin');
    const made = await call(server, '/api/v3/admin/users', {
      token: admin,
      body: { username: 'linked01', name: 'Linked Student', email: 'linked01@example.org', role: 'user', category: 'default', group: 'default-students-1a' },
    });
    expect(made.status).toBe(200);
    const { id } = (await made.json()) as { id: string };
    // No password yet: no sign-in.
    expect((await login(server, 'linked01', 'anything-at-all')).res.status).toBe(401);
    expect((await call(server, `/api/v3/admin/users/${id}/reset-mail`, { token: admin, method: 'POST' })).status).toBe(200);
    const token = tokenFromLink(sink.linkTo('linked01@example.org'));
    expect((await bearerPost('/authentication/reset-password', token, { password: 'my-own-choice-1' })).status).toBe(200);
    expect((await login(server, 'linked01', 'my-own-choice-1')).res.status).toBe(200);
    // Audited, without the link.
    const [entry] = await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.action, 'user.reset_mail'));
    expect(entry).toMatchObject({ objectId: id, actorName: 'admin' });
    expect(JSON.stringify(entry)).not.toContain(token);
  });

  it('answers the same for an unknown address and sends nothing', async () => {
    const before = sink.mails.length;
    const res = await bearerPost('/authentication/forgot-password', undefined, { category_id: 'default', email: 'nobody@example.org' });
    expect(res.status).toBe(200);
    expect(sink.mails.length).toBe(before);
  });

  it('refuses a malformed address with 400', async () => {
    const res = await bearerPost('/authentication/forgot-password', undefined, { category_id: 'default', email: 'not-an-email' });
    expect(res.status).toBe(400);
    expect((await res.json()).description_code).toBe('validation_error');
  });
});

describe('e-mail verification', () => {
  it('requires a verified address where the category asks for one', async () => {
    await server.ctx.db.update(schema.categories).set({ emailVerificationRequired: true }).where(eq(schema.categories.id, 'lab'));
    const id = await userIdOf(server, 'researcher');
    await server.ctx.db.update(schema.users).set({ emailVerifiedAt: null }).where(eq(schema.users.id, id));
    const { token } = await login(server, 'researcher', undefined, 'lab');
    expect(decodeJwt(token!)).toMatchObject({ type: 'email-verification-required', current_email: 'researcher@example.org' });
    expect((await bearerPost('/authentication/request-email-verification', token, { email: 'rui@lab.example.org' })).status).toBe(200);
    const link = sink.linkTo('rui@lab.example.org');
    expect(link).toMatch(/\/verify-email\?token=/);
    expect((await bearerPost('/authentication/verify-email', tokenFromLink(link))).status).toBe(200);
    expect((await bearerPost('/authentication/verify-email', tokenFromLink(link))).status).toBe(401);
    const session = (await login(server, 'researcher', undefined, 'lab')).token!;
    expect(decodeJwt(session).type).toBeUndefined();
    const user = await (await call(server, '/api/v3/user', { token: session })).json();
    expect(user.email).toBe('rui@lab.example.org');
    expect(user.email_verified).toBeGreaterThan(0);
  });
});

describe('without SMTP', () => {
  it('says mail is not configured instead of pretending', async () => {
    const plain = await startTestServer();
    try {
      const res = await fetch(`${plain.url}/authentication/forgot-password`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ category_id: 'default', email: 'user@example.org' }),
      });
      expect(res.status).toBe(428);
      expect((await res.json()).description_code).toBe('email_not_configured');
      expect((await (await call(plain, '/api/v3/login_config')).json()).providers.form.hide_forgot_password).toBe(true);
    } finally {
      await plain.close();
    }
  });
});
