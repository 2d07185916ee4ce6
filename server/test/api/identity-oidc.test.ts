import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import pino from 'pino';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { ZIdentityPreview, ZIdentityProvider } from '@vdi/contracts';
import { schema } from '../../src/db';
import { forgetConfigurations, REQUEST_TIMEOUT_SECONDS } from '../../src/identity/oidc';
import { call, loginToken, login, startTestServer, type TestServer } from '../helpers/server';
import { startOidcIdp, type OidcIdp } from '../helpers/oidc-test-idp';
import { scaled } from '../helpers/slowdown';

// OpenID Connect sign-in (issue 27) against a real OpenID provider in its own process (oidc-provider, with its own
// sign-in form), driven by hand with fetch: every redirect is followed here, the IdP's form is posted. The ID token
// checks that a well-behaved provider never trips (bad signature, wrong audience, expired, another issuer, clock
// skew) use a small fake provider in this file, the unit under test being our validation.

/** The portal's public address: what the IdP sends people back to (this test takes the path to the test server). */
const PUBLIC = 'http://portal.test';
let server: TestServer;
let idp: OidcIdp;
let admin: string;
let providerId: string;
const logged: string[] = [];
/** Every authorization code and ID token seen, to look for in the log. */
const secretsSeen: string[] = [];

const RULES = [
  { attribute: 'groups', value: 'teachers', group_id: 'default-teachers', role: 'advanced' },
  { attribute: 'groups', value: 'students', group_id: 'default-students-1a', role: 'user' },
];

async function createProvider(body: { issuer: string; client_id: string; secret: string; name: string; enabled?: boolean }) {
  const res = await call(server, '/api/v3/admin/identity-providers', {
    token: admin,
    body: {
      kind: 'oidc', name: body.name, category_id: 'default', enabled: body.enabled ?? true, rules: RULES, unmatched: 'refuse', max_role: 'advanced',
      settings: { issuer: body.issuer, client_id: body.client_id, scopes: 'openid profile email groups' },
      secret: body.secret,
    },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ZIdentityProvider.parse(await res.json());
}

beforeAll(async () => {
  idp = await startOidcIdp(PUBLIC);
  server = await startTestServer({ env: { PUBLIC_URL: PUBLIC, LOG_LEVEL: 'trace' } });
  const stream = (server.ctx.log as unknown as Record<symbol, { write: (s: string) => unknown }>)[pino.symbols.streamSym]!;
  stream.write = (line: string) => logged.push(line);
  admin = await loginToken(server, 'admin');
  const made = await createProvider({ issuer: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, name: 'Test IdP' });
  providerId = made.id;
  expect(made.callback_url).toBe(`${PUBLIC}/authentication/oidc/callback/${made.id}`);
  expect(made.secret_set).toBe(true);
}, scaled(120_000));
afterAll(async () => {
  await server?.close();
  await idp?.close();
});

/** A browser's cookies for one origin (the IdP's): enough for its session and interaction cookies. */
class Jar {
  cookies = new Map<string, string>();
  header = () => [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  take(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (!value || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** The portal's address of a URL on its public address (the test server listens elsewhere). */
const onServer = (url: string) => {
  const u = new URL(url, PUBLIC);
  return `${server.url}${u.pathname}${u.search}`;
};

/** GET /authentication/login for the provider from the browser `jar` (it keeps the portal's flow cookie): the 303's Location. */
async function begin(id = providerId, jar = new Jar()) {
  const res = await fetch(`${server.url}/authentication/login?provider=oidc&provider_id=${id}`, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(res);
  expect(res.status).toBe(303);
  return res.headers.get('location')!;
}

/**
 * A browser at the IdP from `url` (its authorization or end-session address): redirects followed, the sign-in form
 * posted with `account` when asked, until the IdP sends the browser back to the portal. Answers that address and
 * whether the password was asked.
 */
async function atIdp(url: string, jar: Jar, account?: string): Promise<{ back: string; asked: boolean }> {
  let asked = false;
  let next: { url: string; init?: RequestInit } = { url };
  for (let hops = 0; hops < 20; hops++) {
    if (next.url.startsWith(PUBLIC)) return { back: next.url, asked };
    const res = await fetch(next.url, { ...next.init, redirect: 'manual', headers: { ...(next.init?.headers as Record<string, string>), cookie: jar.header() } });
    jar.take(res);
    if (res.status >= 300 && res.status < 400) {
      next = { url: new URL(res.headers.get('location')!, next.url).href };
      continue;
    }
    const html = await res.text();
    expect(res.status, html).toBe(200);
    const login = /<form method="post" action="([^"]+)"/.exec(html);
    if (login) {
      if (!account) throw new Error('the IdP asks for a password');
      asked = true;
      next = {
        url: new URL(login[1]!, next.url).href,
        init: { method: 'POST', body: new URLSearchParams({ login: account, password: idp.password }), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      };
      continue;
    }
    // The end-session page: its confirmation form, posted with logout=yes.
    const logout = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html) ?? /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (logout) {
      const fields = new URLSearchParams({ logout: 'yes' });
      for (const m of logout[2]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(m[1]!, m[2]!);
      next = { url: new URL(logout[1]!, next.url).href, init: { method: 'POST', body: fields, headers: { 'content-type': 'application/x-www-form-urlencoded' } } };
      continue;
    }
    return { back: '', asked };
  }
  throw new Error('too many redirects at the IdP');
}

/** The portal's callback in the browser `jar`: where it sends the browser (and the step cookie's token, when it signs in). */
async function callback(url: string, jar = new Jar()) {
  const code = new URL(url).searchParams.get('code');
  if (code && code.length > 16) secretsSeen.push(code);
  const res = await fetch(onServer(url), { redirect: 'manual', headers: { cookie: jar.header() } });
  expect(res.status).toBe(303);
  const token = /(?:^|;\s*)authorization=([^;]+)/.exec(res.headers.getSetCookie().join('; '))?.[1];
  return { location: res.headers.get('location')!, token };
}

/** The whole dance: begin, the IdP's sign-in, the callback. */
async function dance(account: string, jar = new Jar(), tamper: (url: string) => string = (u) => u) {
  const { back, asked } = await atIdp(tamper(await begin(providerId, jar)), jar, account);
  return { ...(await callback(back, jar)), back, asked, jar };
}

const oidcUser = async (uid: string) => (await server.ctx.db.select().from(schema.users).where(and(eq(schema.users.provider, 'oidc'), eq(schema.users.uid, uid))))[0];
const sessionsOf = async (userId: string) => server.ctx.db.select().from(schema.sessions).where(eq(schema.sessions.userId, userId));

describe('OpenID Connect sign-in with a real provider', () => {
  it('the admin’s test shows what a first sign-in would make, and makes nothing', async () => {
    const res = await call(server, `/api/v3/admin/identity-providers/${providerId}/test`, { token: admin, body: {} });
    expect(res.status).toBe(200);
    const { url } = (await res.json()) as { url: string };
    expect(url.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    const { back } = await atIdp(url, new Jar(), idp.accounts.student);
    const done = await callback(back);
    expect(done.token).toBeUndefined();
    const preview = new URL(done.location, PUBLIC);
    expect(preview.pathname).toBe('/isard-admin/identity_providers');
    const got = await call(server, `/api/v3/admin/identity-providers/previews/${preview.searchParams.get('preview')}`, { token: admin });
    expect(got.status).toBe(200);
    const shown = ZIdentityPreview.parse(await got.json());
    expect(shown).toMatchObject({ outcome: 'create', role: 'user', group_id: 'default-students-1a', category_id: 'default', rule: 1 });
    expect(shown.identity).toMatchObject({ uid: 'sam-student', username: 'sam-student', name: 'Sam Student', email: 'sam.student@idp.test', groups: ['students'] });
    expect(await oidcUser('sam-student')).toBeUndefined();
  });

  it('asks for PKCE (S256), a state and a nonce, and the registered redirect URI', async () => {
    const url = new URL(await begin());
    expect(url.origin).toBe(idp.issuer);
    const q = url.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(32);
    expect(q.get('nonce')!.length).toBeGreaterThanOrEqual(32);
    expect(q.get('redirect_uri')).toBe(`${PUBLIC}/authentication/oidc/callback/${providerId}`);
    expect(q.get('client_id')).toBe(idp.clientId);
    expect(q.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['openid', 'groups']));
  });

  it('a first sign-in creates the person from the rules; the next finds them', async () => {
    const first = await dance(idp.accounts.teacher);
    expect(first.asked).toBe(true);
    expect(first.location).toBe('/login/done');
    expect(first.token).toBeTruthy();
    const me = await call(server, '/api/v3/user', { token: first.token });
    expect(me.status).toBe(200);
    const user = await oidcUser('ada-teacher');
    expect(user).toMatchObject({ username: 'ada-teacher', name: 'Ada Teacher', email: 'ada.teacher@idp.test', roleId: 'advanced', groupId: 'default-teachers', categoryId: 'default', identityProviderId: providerId });
    expect(user!.passwordHash ?? null).toBeNull();
    const [session] = await sessionsOf(user!.id);
    expect(session!.external).toMatchObject({ providerId });
    expect(session!.external!.idToken!.split('.')).toHaveLength(3);
    secretsSeen.push(session!.external!.idToken!);
    // The same browser: the IdP's session signs in without the password; the same account.
    const again = await dance(idp.accounts.teacher, first.jar);
    expect(again.asked).toBe(false);
    expect(again.location).toBe('/login/done');
    expect((await oidcUser('ada-teacher'))!.id).toBe(user!.id);
  });

  it('the student gets the student group and role; someone in no mapped group is refused', async () => {
    const student = await dance(idp.accounts.student);
    expect(student.location).toBe('/login/done');
    expect(await oidcUser('sam-student')).toMatchObject({ roleId: 'user', groupId: 'default-students-1a' });
    const outsider = await dance(idp.accounts.outsider);
    expect(outsider.location).toBe('/login?error=identity_not_allowed');
    expect(outsider.token).toBeUndefined();
    expect(await oidcUser('olly-outsider')).toBeUndefined();
  });

  it('the callback needs nothing of the process that began: the flow is a database row, spent on use', async () => {
    const jar = new Jar();
    const start = await begin(providerId, jar);
    const state = new URL(start).searchParams.get('state')!;
    const [row] = await server.ctx.db.select().from(schema.identityFlows).where(eq(schema.identityFlows.id, `oidc:${state}`));
    expect(row).toMatchObject({ providerId, data: { state, test: false, categoryId: 'default' } });
    expect((row!.expiresAt.getTime() - Date.now()) / 1000).toBeGreaterThan(500);
    expect(row!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(600_000);
    // As another process would: no discovery in memory.
    forgetConfigurations();
    const { back } = await atIdp(start, jar, idp.accounts.student);
    expect((await callback(back, jar)).location).toBe('/login/done');
    expect(await server.ctx.db.select().from(schema.identityFlows).where(eq(schema.identityFlows.id, `oidc:${state}`))).toEqual([]);
  });

  it('a replayed callback (the same code and state) is refused', async () => {
    const first = await dance(idp.accounts.student);
    expect(first.location).toBe('/login/done');
    const replay = await callback(first.back, first.jar);
    expect(replay.location).toBe('/login?error=identity_flow_expired');
    expect(replay.token).toBeUndefined();
  });

  it('a state that is not ours is refused (and the IdP’s code is never exchanged)', async () => {
    const jar = new Jar();
    const { back } = await atIdp(await begin(providerId, jar), jar, idp.accounts.student);
    const forged = new URL(back);
    forged.searchParams.set('state', randomBytes(32).toString('base64url'));
    expect((await callback(forged.href, jar)).location).toBe('/login?error=identity_flow_expired');
    // No state at all: the same.
    forged.searchParams.delete('state');
    expect((await callback(forged.href, jar)).location).toBe('/login?error=identity_flow_expired');
    // The real callback still works once (the forged ones spent nothing of it).
    expect((await callback(back, jar)).location).toBe('/login/done');
  });

  it('a callback opened in another browser than the one that started the sign-in is refused (login CSRF)', async () => {
    // Someone signs in as themselves up to the IdP's answer, and hands the callback address to a victim.
    const attacker = new Jar();
    const { back } = await atIdp(await begin(providerId, attacker), attacker, idp.accounts.student);
    const victim = new Jar();
    const got = await callback(back, victim);
    expect(got.location).toBe('/login?error=identity_flow_expired');
    expect(got.token).toBeUndefined();
    // The flow is spent: the attacker's own browser cannot use it afterwards either.
    expect((await callback(back, attacker)).location).toBe('/login?error=identity_flow_expired');
  });

  it('a nonce that is not the one we sent is refused', async () => {
    const before = (await sessionsOf((await oidcUser('sam-student'))!.id)).length;
    const swapped = await dance(idp.accounts.student, new Jar(), (u) => {
      const url = new URL(u);
      url.searchParams.set('nonce', randomBytes(32).toString('base64url'));
      return url.href;
    });
    expect(swapped.location).toBe('/login?error=identity_sign_in_failed');
    expect(logged.filter((l) => l.includes('OpenID sign-in refused')).at(-1)).toMatch(/nonce/);
    expect(swapped.token).toBeUndefined();
    expect((await sessionsOf((await oidcUser('sam-student'))!.id)).length).toBe(before);
  });

  it('an error from the IdP goes back to the sign-in page; an unknown provider too', async () => {
    const url = new URL(await begin());
    const state = url.searchParams.get('state')!;
    const refused = await callback(`${PUBLIC}/authentication/oidc/callback/${providerId}?error=access_denied&state=${state}`);
    expect(refused.location).toBe('/login?error=identity_sign_in_failed');
    expect((await callback(`${PUBLIC}/authentication/oidc/callback/nope?code=x&state=y`)).location).toBe('/login?error=identity_provider_not_found');
    // Bad input: a 4xx with a code, never a 5xx.
    const long = await fetch(`${server.url}/authentication/oidc/callback/${providerId}?state=${'x'.repeat(600)}`, { redirect: 'manual' });
    expect(long.status).toBe(400);
    expect(((await long.json()) as { description_code: string }).description_code).toBeTruthy();
  });

  it('sign-out answers the IdP’s end-session address; following it ends the IdP’s session', async () => {
    const signedIn = await dance(idp.accounts.teacher);
    expect(signedIn.asked).toBe(true);
    const out = await fetch(`${server.url}/authentication/logout`, { method: 'POST', headers: { authorization: `Bearer ${signedIn.token}` } });
    expect(out.status).toBe(200);
    const { redirect } = (await out.json()) as { redirect?: string };
    const end = new URL(redirect!);
    expect(`${end.origin}${end.pathname}`).toBe(`${idp.issuer}/session/end`);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${PUBLIC}/login`);
    const [session] = (await sessionsOf((await oidcUser('ada-teacher'))!.id)).filter((s) => s.revokedAt);
    expect(end.searchParams.get('id_token_hint')).toBeTruthy();
    expect(session).toBeTruthy();
    // The browser follows it: the IdP asks to confirm, then sends it back to the portal's sign-in page.
    const { back } = await atIdp(redirect!, signedIn.jar);
    expect(back.startsWith(`${PUBLIC}/login`)).toBe(true);
    // Signing in again asks for the password.
    const again = await dance(idp.accounts.teacher, signedIn.jar);
    expect(again.asked).toBe(true);
    expect(again.location).toBe('/login/done');
  });

  it('without a public address the provider cannot be saved or used', async () => {
    const saved = server.ctx.config.publicUrl;
    (server.ctx.config as { publicUrl?: string }).publicUrl = undefined;
    try {
      const res = await call(server, '/api/v3/admin/identity-providers', {
        token: admin,
        body: { kind: 'oidc', name: 'No address', category_id: 'default', settings: { issuer: idp.issuer, client_id: 'x' } },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { description_code: string }).description_code).toBe('identity_public_url_missing');
      const started = await fetch(`${server.url}/authentication/login?provider=oidc&provider_id=${providerId}`, { redirect: 'manual' });
      expect(started.headers.get('location')).toBe('/login?error=identity_public_url_missing');
    } finally {
      (server.ctx.config as { publicUrl?: string }).publicUrl = saved;
    }
  });
});

describe('a provider that is down', () => {
  it('begin answers a clear error, the test too, and local accounts still sign in', async () => {
    // A port nothing listens on (a server opened and closed).
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const down = await createProvider({ issuer: `http://127.0.0.1:${port}`, client_id: 'c', secret: 'down-secret-value', name: 'Down IdP' });
    const started = Date.now();
    const res = await fetch(`${server.url}/authentication/login?provider=oidc&provider_id=${down.id}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?error=identity_provider_unavailable');
    expect(Date.now() - started).toBeLessThan(scaled(10_000));
    const test = await call(server, `/api/v3/admin/identity-providers/${down.id}/test`, { token: admin, body: {} });
    expect(test.status).toBe(503);
    expect(((await test.json()) as { description_code: string }).description_code).toBe('identity_provider_unavailable');
    const local = await login(server, 'user');
    expect(local.res.status).toBe(200);
    await call(server, `/api/v3/admin/identity-providers/${down.id}`, { token: admin, method: 'DELETE' });
  });

  it('a provider that takes the connection and never answers fails within the bounded time', async () => {
    const held: Socket[] = [];
    const silent = createNetServer((socket) => held.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const mute = await createProvider({ issuer: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, client_id: 'c', secret: 'mute-secret-value', name: 'Mute IdP' });
      const started = Date.now();
      const res = await fetch(`${server.url}/authentication/login?provider=oidc&provider_id=${mute.id}`, { redirect: 'manual' });
      expect(res.headers.get('location')).toBe('/login?error=identity_provider_unavailable');
      // REQUEST_TIMEOUT_SECONDS (5 s), with room for a loaded machine.
      expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_SECONDS * 1000 - 500);
      expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_SECONDS * 1000 + scaled(5_000));
      await call(server, `/api/v3/admin/identity-providers/${mute.id}`, { token: admin, method: 'DELETE' });
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// ID tokens a real provider would not send, from a fake provider in this file: discovery, JWKS, an authorization
// endpoint that answers at once, and a token endpoint whose ID token is made per case.
type Case = 'ok' | 'bad-signature' | 'wrong-audience' | 'expired' | 'other-issuer' | 'future' | 'slight-skew' | 'token-down';

describe('ID tokens that must be refused', () => {
  let fake: Server;
  let fakeUrl: string;
  let fakeProvider: string;
  let current: Case = 'ok';
  let key: CryptoKey;
  let otherKey: CryptoKey;
  const kid = 'fake-key';
  const pending = new Map<string, { nonce: string; sub: string }>();
  let subject = 'fake-student-1';

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    key = pair.privateKey;
    otherKey = (await generateKeyPair('RS256')).privateKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' };
    fake = createServer(async (req, res) => {
      const url = new URL(req.url!, fakeUrl);
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/.well-known/openid-configuration') {
        return json({
          issuer: fakeUrl, authorization_endpoint: `${fakeUrl}/auth`, token_endpoint: `${fakeUrl}/token`, jwks_uri: `${fakeUrl}/jwks`,
          response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'], token_endpoint_auth_methods_supported: ['client_secret_post'],
        });
      }
      if (url.pathname === '/jwks') return json({ keys: [publicJwk] });
      if (url.pathname === '/auth') {
        const code = randomBytes(16).toString('hex');
        pending.set(code, { nonce: url.searchParams.get('nonce')!, sub: subject });
        const back = new URL(url.searchParams.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state')!);
        res.writeHead(302, { location: back.href });
        return res.end();
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        // The provider goes away between the sign-in and the code's exchange.
        if (current === 'token-down') return req.socket.destroy();
        let body = '';
        for await (const chunk of req) body += chunk;
        const form = new URLSearchParams(body);
        const grant = pending.get(form.get('code') ?? '');
        // client_secret_post, as the discovery says.
        if (!grant || form.get('client_secret') !== 'fake-secret-value' || !form.get('code_verifier')) {
          res.writeHead(400, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: 'invalid_grant' }));
        }
        pending.delete(form.get('code')!);
        const now = Math.floor(Date.now() / 1000);
        const claims = { nonce: grant.nonce, preferred_username: grant.sub, name: 'Fake Student', groups: ['students'] };
        let iat = now;
        let exp = now + 300;
        if (current === 'expired') [iat, exp] = [now - 600, now - 120];
        if (current === 'future') [iat, exp] = [now + 600, now + 900];
        if (current === 'slight-skew') [iat, exp] = [now + 30, now + 330];
        const jwt = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid })
          .setIssuer(current === 'other-issuer' ? 'http://127.0.0.1:1/another' : fakeUrl)
          .setAudience(current === 'wrong-audience' ? 'someone-else' : 'fake-client')
          .setSubject(grant.sub)
          .setIssuedAt(iat)
          .setExpirationTime(exp)
          .sign(current === 'bad-signature' ? otherKey : key);
        return json({ access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: jwt });
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    fakeProvider = (await createProvider({ issuer: fakeUrl, client_id: 'fake-client', secret: 'fake-secret-value', name: 'Fake IdP' })).id;
    forgetConfigurations();
  });
  afterAll(async () => {
    fake?.closeAllConnections();
    await new Promise<void>((r) => (fake ? fake.close(() => r()) : r()));
  });

  /** begin → the fake's /auth (answers at once) → the callback. */
  async function through(which: Case, sub: string) {
    current = which;
    subject = sub;
    const jar = new Jar();
    const auth = await fetch(await begin(fakeProvider, jar), { redirect: 'manual' });
    expect(auth.status).toBe(302);
    return callback(auth.headers.get('location')!, jar);
  }

  it('a well-formed token signs in (the fake itself is sound)', async () => {
    const ok = await through('ok', 'fake-student-ok');
    expect(ok.location).toBe('/login/done');
    expect((await oidcUser('fake-student-ok'))?.roleId).toBe('user');
  });

  // Each refused for its own reason (the log line says which check failed).
  const REASONS = { 'bad-signature': /signature/i, 'wrong-audience': /audience/, expired: /expiration/, 'other-issuer': /issuer/, future: /in the future/ } as const;
  for (const which of ['bad-signature', 'wrong-audience', 'expired', 'other-issuer', 'future'] as const) {
    it(`an ID token with ${which} is refused, and nobody is made`, async () => {
      const sub = `fake-${which}`;
      const seen = logged.length;
      const got = await through(which, sub);
      expect(got.location).toBe('/login?error=identity_sign_in_failed');
      expect(got.token).toBeUndefined();
      expect(await oidcUser(sub)).toBeUndefined();
      const line = logged.slice(seen).find((l) => l.includes('OpenID sign-in refused'));
      expect(line).toMatch(REASONS[which]);
    });
  }

  it('a clock a little ahead (within the allowance of a minute) is taken', async () => {
    const got = await through('slight-skew', 'fake-skew-ok');
    expect(got.location).toBe('/login/done');
    // A provider without an end-session endpoint: our sign-out offers none.
    const out = await fetch(`${server.url}/authentication/logout`, { method: 'POST', headers: { authorization: `Bearer ${got.token}` } });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({});
  });

  it('a provider that goes away before the code is exchanged: the provider is unavailable, nobody is made', async () => {
    const got = await through('token-down', 'fake-token-down');
    expect(got.location).toBe('/login?error=identity_provider_unavailable');
    expect(await oidcUser('fake-token-down')).toBeUndefined();
  });
});

describe('the log', () => {
  it('holds no client secret, password, code or ID token', () => {
    const text = logged.join('');
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain('OpenID');
    for (const secret of [idp.clientSecret, idp.password, 'fake-secret-value', 'down-secret-value', 'mute-secret-value', ...secretsSeen]) expect(text).not.toContain(secret);
    expect(secretsSeen.length).toBeGreaterThan(3);
  });
});
