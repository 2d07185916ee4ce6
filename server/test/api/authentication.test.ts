import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { hashPassword } from '../../src/auth/passwords';
import { loadConfig } from '../../src/config';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('POST /authentication/login', () => {
  it.each(['admin', 'manager', 'advanced', 'user'])('signs in %s with a session token of that role', async (role) => {
    const { res, token } = await login(server, role);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect(res.headers.get('authorization')).toBe(`Bearer ${token}`);
    const claims = decodeJwt(token!);
    expect(claims.type).toBeUndefined();
    expect((claims.data as { role_id: string }).role_id).toBe(role);
    expect(claims.iss).toBe('isard-authentication');
    // 300 s by default (test servers: times the machine's slowdown, helpers/server.ts)
    expect(loadConfig({}).session.tokenSeconds).toBe(300);
    expect(claims.exp! - claims.iat!).toBe(server.config.session.tokenSeconds);
  });

  it('accepts urlencoded form data too', async () => {
    const res = await fetch(`${server.url}/authentication/login?provider=form&category_id=default`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=user&password=${DEMO_PASSWORD}`,
    });
    expect(res.status).toBe(200);
  });

  it('answers 401 login_failed for a wrong password or an unknown user', async () => {
    for (const username of ['user', 'nobody-here']) {
      const { res } = await login(server, username, 'wrong-password');
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body).toMatchObject({ error: 'unauthorized', description_code: 'login_failed' });
      expect(body).toHaveProperty('msg');
      expect(body).toHaveProperty('params');
    }
  });

  it('answers 400 with a code when the form is incomplete', async () => {
    const form = new FormData();
    form.append('username', 'user');
    const res = await fetch(`${server.url}/authentication/login?provider=form`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect((await res.json()).description_code).toBe('missing_required_data');
  });

  it('answers 403 user_disabled for a disabled user, only after a right password', async () => {
    const admin = await loginToken(server, 'admin');
    const id = await userIdOf(server, 'student04');
    const r = await call(server, `/api/v3/admin/user/${id}/active`, { token: admin, method: 'PUT', body: { active: false } });
    expect(r.status).toBe(200);
    const { res } = await login(server, 'student04');
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'forbidden', description_code: 'user_disabled' });
    expect((await login(server, 'student04', 'wrong')).res.status).toBe(401);
    await call(server, `/api/v3/admin/user/${id}/active`, { token: admin, method: 'PUT', body: { active: true } });
    expect((await login(server, 'student04')).res.status).toBe(200);
  });

  it('blocks after 10 failures with 429 and the time to retry, then doubles', async () => {
    for (let i = 0; i < 10; i++) expect((await login(server, 'student03', 'nope')).res.status).toBe(401);
    const { res } = await login(server, 'student03');
    expect(res.status).toBe(429);
    const retryAfter = res.headers.get('retry-after')!;
    const body = await res.json();
    expect(body.description_code).toBe('login_too_many_attempts');
    const until = new Date(body.params.retry_after).getTime();
    expect(new Date(retryAfter).getTime()).toBe(Math.floor(until / 1000) * 1000);
    expect(until - Date.now()).toBeGreaterThan(50_000);
    expect(until - Date.now()).toBeLessThanOrEqual(60_000);
    // The block is per client address and user name: another account is unaffected.
    expect((await login(server, 'student02')).res.status).toBe(200);
    // Once the first block has passed, the next failure blocks for twice as long.
    await server.ctx.db
      .update(schema.loginThrottle)
      .set({ blockedUntil: new Date(Date.now() - 1000) })
      .where(eq(schema.loginThrottle.key, server.ctx.loginThrottle.keys('127.0.0.1', 'student03').pair));
    expect((await login(server, 'student03', 'nope')).res.status).toBe(401);
    const second = await login(server, 'student03');
    expect(second.res.status).toBe(429);
    const until2 = new Date((await second.res.json()).params.retry_after).getTime();
    expect(until2 - Date.now()).toBeGreaterThan(110_000);
  });

  it('offers a category choice when the user name and password match in several categories', async () => {
    const hash = await hashPassword('twin-password');
    for (const [cat, group] of [['default', 'default-default'], ['lab', 'lab-default']] as const) {
      await server.ctx.db.insert(schema.users).values({
        id: `twin-${cat}`, uid: 'twin', username: 'twin', provider: 'local', categoryId: cat, groupId: group, roleId: 'user', name: `Twin ${cat}`, passwordHash: hash,
      });
    }
    const { res, token } = await login(server, 'twin', 'twin-password', null);
    expect(res.status).toBe(200);
    const claims = decodeJwt(token!);
    expect(claims.type).toBe('category-select');
    expect((claims.categories as { id: string }[]).map((c) => c.id).sort()).toEqual(['default', 'lab']);
    // The token alone gives no session.
    expect((await call(server, '/api/v3/user', { token })).status).toBe(401);
    const chosen = await fetch(`${server.url}/authentication/login?provider=form&category_id=lab`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(chosen.status).toBe(200);
    const session = await chosen.text();
    const user = await (await call(server, '/api/v3/user', { token: session })).json();
    expect(user).toMatchObject({ username: 'twin', category: 'lab' });
    const refused = await fetch(`${server.url}/authentication/login?provider=form&category_id=nowhere`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(400);
  });
});

describe('sessions', () => {
  it('renews a token, keeps the session id, and refuses a revoked one', async () => {
    const token = await loginToken(server, 'advanced');
    const res = await fetch(`${server.url}/authentication/renew`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const { token: renewed } = await res.json();
    expect(decodeJwt(renewed).session_id).toBe(decodeJwt(token).session_id);
    expect((await call(server, '/api/v3/user', { token: renewed })).status).toBe(200);
  });

  it('allows one session per user: a new sign-in ends the previous one', async () => {
    const first = await loginToken(server, 'manager');
    expect((await call(server, '/api/v3/user', { token: first })).status).toBe(200);
    const second = await loginToken(server, 'manager');
    const r = await call(server, '/api/v3/user', { token: first });
    expect(r.status).toBe(401);
    expect((await r.json()).description_code).toBe('session_expired');
    expect((await call(server, '/api/v3/user', { token: second })).status).toBe(200);
  });

  it('refuses renewal outside the renewal window and after the absolute limit', async () => {
    const token = await loginToken(server, 'student01');
    const sid = decodeJwt(token).session_id as string;
    await server.ctx.db.update(schema.sessions).set({ lastRenewAt: new Date(Date.now() - 31 * 60_000) }).where(eq(schema.sessions.id, sid));
    const late = await fetch(`${server.url}/authentication/renew`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(late.status).toBe(401);
    const token2 = await loginToken(server, 'student01');
    const sid2 = decodeJwt(token2).session_id as string;
    await server.ctx.db.update(schema.sessions).set({ maxTimeAt: new Date(Date.now() - 1000) }).where(eq(schema.sessions.id, sid2));
    expect((await call(server, '/api/v3/user', { token: token2 })).status).toBe(401);
  });

  it('refuses a forged token and a missing one', async () => {
    const token = await loginToken(server, 'user');
    const [h, p] = token.split('.');
    const forged = `${h}.${p}.${'A'.repeat(43)}`;
    expect((await call(server, '/api/v3/user', { token: forged })).status).toBe(401);
    const missing = await call(server, '/api/v3/user');
    expect(missing.status).toBe(401);
    expect((await missing.json()).description_code).toBe('missing_token');
  });

  it('logs out: the token stops working', async () => {
    const token = await loginToken(server, 'student02');
    const out = await fetch(`${server.url}/authentication/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(out.status).toBe(200);
    expect((await call(server, '/api/v3/user', { token })).status).toBe(401);
  });

  it('GET /user/config tells the session limits as absolute epoch seconds', async () => {
    const token = await loginToken(server, 'user');
    const config = await (await call(server, '/api/v3/user/config', { token })).json();
    const now = Math.floor(Date.now() / 1000);
    expect(config.session.max_renew_time).toBeGreaterThanOrEqual(now + 1790);
    expect(config.session.max_time).toBeGreaterThanOrEqual(now + 8 * 3600 - 10);
    expect(config).toMatchObject({ migrations_block: false, can_use_bastion: false });
  });
});

describe('GET /authentication/providers and /categories', () => {
  it('lists the form sign-in (no external providers) and the public categories', async () => {
    expect(await (await fetch(`${server.url}/authentication/providers`)).json()).toEqual({ providers: ['form'] });
    const cats = await (await fetch(`${server.url}/authentication/categories`)).json();
    expect(cats.map((c: { id: string }) => c.id).sort()).toEqual(['default', 'lab']);
  });
});
