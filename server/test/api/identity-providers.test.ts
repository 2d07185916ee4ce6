import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { ZIdentityProvider, ZLoginConfig, type TIdentityProvider, type TTokenClaims } from '@vdi/contracts';
import { schema } from '../../src/db';
import type { ExternalIdentity } from '../../src/modules/identity/mapping';
import { PASSWORD_PROTOCOLS, REDIRECT_PROTOCOLS } from '../../src/modules/identity/protocols';
import { finishRedirect } from '../../src/modules/identity/routes';
import { loadProvider } from '../../src/modules/identity/providers';
import { call, login, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';

// The shared part of sign-in providers (issue 27), with doubles for the protocols (each protocol has its own
// tests with the real directory or IdP): storing a provider, the rules, and what a sign-in through one does.

/** The "directory" of the password double: name → password and the person. */
const people = new Map<string, { password: string; identity: ExternalIdentity }>();
const person = (username: string, groups: string[], attributes: Record<string, string[]> = {}): ExternalIdentity => ({
  uid: `uid-${username}`, username, name: `${username} Person`, email: `${username}@school.test`, photo: '', groups, attributes,
});
const saved = { password: { ...PASSWORD_PROTOCOLS }, redirect: { ...REDIRECT_PROTOCOLS } };
PASSWORD_PROTOCOLS.ldap = {
  authenticate: async (_ctx, _provider, username, password) => {
    const p = people.get(username);
    return p && p.password === password ? p.identity : null;
  },
};
/** The redirect double: "the IdP" signs in whoever the test named, straight back to our callback. */
let nextIdentity: ExternalIdentity | null = null;
REDIRECT_PROTOCOLS.oidc = {
  begin: async (_ctx, provider, flow) => `${server.url}/authentication/double/callback/${provider.id}?test=${flow.test ? 1 : 0}&category=${flow.categoryId ?? ''}`,
  logout: async (_ctx, provider) => `http://idp.test/logout?provider=${provider.id}`,
  routes: async (app: FastifyInstance, ctx) => {
    app.get<{ Params: { id: string }; Querystring: { test: string; category: string } }>('/double/callback/:id', async (request, reply) => {
      const provider = (await loadProvider(ctx, request.params.id))!;
      return finishRedirect(ctx, reply, provider, nextIdentity!, {
        test: request.query.test === '1', categoryId: request.query.category || undefined, external: { providerId: provider.id, idToken: 'id-token' },
      });
    });
  },
};

let server: TestServer;
let admin: string;
beforeAll(async () => {
  server = await startTestServer();
  admin = await loginToken(server, 'admin');
}, scaled(120_000));
afterAll(async () => {
  await server?.close();
  Object.assign(PASSWORD_PROTOCOLS, saved.password);
  Object.assign(REDIRECT_PROTOCOLS, saved.redirect);
});

const A = '/api/v3/admin/identity-providers';
const ldapBody = (over: Record<string, unknown> = {}) => ({
  kind: 'ldap',
  name: 'School directory',
  category_id: 'default',
  settings: { url: 'ldaps://directory.school.test', user_base: 'ou=people,dc=school,dc=test' },
  secret: 'bind-secret-1',
  rules: [
    { attribute: 'groups', value: 'cn=teachers,*', group_id: 'default-teachers', role: 'advanced' },
    { attribute: 'groups', value: 'cn=students,*', group_id: 'default-students-1a', role: 'user' },
  ],
  ...over,
});
async function create(body: Record<string, unknown>): Promise<TIdentityProvider> {
  const res = await call(server, A, { token: admin, body });
  expect(res.status, await res.clone().text()).toBe(200);
  return ZIdentityProvider.parse(await res.json());
}
const codeOf = async (res: Response) => `${res.status} ${((await res.clone().json()) as { description_code?: string }).description_code ?? ''}`;
const userRow = async (username: string) =>
  (await server.ctx.db.select().from(schema.users).where(and(eq(schema.users.username, username), eq(schema.users.provider, 'ldap'))))[0];
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as TTokenClaims;
const removeProviders = () => server.ctx.db.delete(schema.identityProviders);

describe('a provider as stored', () => {
  it('keeps its secret sealed and never answers it; an update without one keeps it, an empty one clears it', async () => {
    const made = await create(ldapBody());
    expect(made.secret_set).toBe(true);
    expect(JSON.stringify(made)).not.toContain('bind-secret-1');
    const [row] = await server.ctx.db.select().from(schema.identityProviders).where(eq(schema.identityProviders.id, made.id));
    expect(row!.secret).not.toContain('bind-secret-1');
    expect((await loadProvider(server.ctx, made.id))!.secretPlain).toBe('bind-secret-1');
    const kept = await call(server, `${A}/${made.id}`, { token: admin, method: 'PUT', body: { ...ldapBody({ name: 'Renamed' }), secret: undefined } });
    expect(kept.status).toBe(200);
    expect((await loadProvider(server.ctx, made.id))!.secretPlain).toBe('bind-secret-1');
    const cleared = await call(server, `${A}/${made.id}`, { token: admin, method: 'PUT', body: ldapBody({ secret: '' }) });
    expect(ZIdentityProvider.parse(await cleared.json()).secret_set).toBe(false);
    const list = await call(server, A, { token: admin });
    expect(JSON.stringify(await list.json())).not.toContain('bind-secret');
    expect((await call(server, `${A}/${made.id}`, { token: admin, method: 'PUT', body: { ...ldapBody(), kind: 'oidc', settings: { issuer: 'http://idp.test', client_id: 'x' } } })).status).toBe(400);
    expect((await call(server, `${A}/${made.id}`, { token: admin, method: 'DELETE' })).status).toBe(200);
    expect(await codeOf(await call(server, `${A}/${made.id}`, { token: admin, method: 'DELETE' }))).toBe('404 identity_provider_not_found');
  });

  it('refuses a rule above the highest role, or with a group outside its organisation, and bad settings', async () => {
    const above = await call(server, A, { token: admin, body: ldapBody({ max_role: 'user' }) });
    expect(await codeOf(above)).toBe('400 identity_role_not_allowed');
    const elsewhere = await call(server, A, { token: admin, body: ldapBody({ rules: [{ attribute: 'groups', value: 'x', group_id: 'lab-default', role: 'user' }] }) });
    expect(await codeOf(elsewhere)).toBe('400 identity_group_not_found');
    const badUrl = await call(server, A, { token: admin, body: ldapBody({ settings: { url: 'http://x', user_base: 'dc=x' } }) });
    expect(badUrl.status).toBe(400);
    expect(await server.ctx.db.select().from(schema.identityProviders)).toHaveLength(0);
  });
});

describe('a sign-in through a directory (the form)', () => {
  let providerId = '';
  beforeAll(async () => {
    await removeProviders();
    providerId = (await create(ldapBody())).id;
    people.set('tina', { password: 'tina-pass', identity: person('tina', ['cn=teachers,ou=groups,dc=school,dc=test']) });
    people.set('nobody', { password: 'nobody-pass', identity: person('nobody', ['cn=visitors,ou=groups']) });
  });

  it('makes the person from the first matching rule, then finds them again', async () => {
    const first = await login(server, 'tina', 'tina-pass');
    expect(first.res.status).toBe(200);
    expect(claimsOf(first.token!).data?.role_id).toBe('advanced');
    const row = (await userRow('tina'))!;
    expect({ group: row.groupId, role: row.roleId, uid: row.uid, provider: row.provider, idp: row.identityProviderId, email: row.email }).toEqual({
      group: 'default-teachers', role: 'advanced', uid: 'uid-tina', provider: 'ldap', idp: providerId, email: 'tina@school.test',
    });
    const again = await login(server, 'tina', 'tina-pass');
    expect(claimsOf(again.token!).data?.user_id).toBe(row.id);
    expect((await login(server, 'tina', 'wrong')).res.status).toBe(401);
    const [made] = await server.ctx.db.select().from(schema.auditLog).where(and(eq(schema.auditLog.action, 'user.create'), eq(schema.auditLog.objectId, row.id)));
    expect(made?.detail).toMatchObject({ kind: 'ldap', rule: 1, role: 'advanced' });
  });

  it('follows the directory on each sign-in only when the admin chose so', async () => {
    people.get('tina')!.identity = person('tina', ['cn=students,ou=groups']);
    await login(server, 'tina', 'tina-pass');
    expect((await userRow('tina'))!.roleId).toBe('advanced');
    await call(server, `${A}/${providerId}`, { token: admin, method: 'PUT', body: ldapBody({ update_on_signin: true }) });
    const token = (await login(server, 'tina', 'tina-pass')).token!;
    expect(claimsOf(token).data?.role_id).toBe('user');
    expect((await userRow('tina'))!.groupId).toBe('default-students-1a');
  });

  it('refuses someone no rule matches, with a clear code', async () => {
    const { res } = await login(server, 'nobody', 'nobody-pass');
    expect(await codeOf(res)).toBe('403 identity_not_allowed');
    expect(await userRow('nobody')).toBeUndefined();
  });

  it('keeps a person disabled here refused, whatever the directory says', async () => {
    await server.ctx.db.update(schema.users).set({ active: false }).where(eq(schema.users.uid, 'uid-tina'));
    expect(await codeOf((await login(server, 'tina', 'tina-pass')).res)).toBe('403 user_disabled');
    await server.ctx.db.update(schema.users).set({ active: true }).where(eq(schema.users.uid, 'uid-tina'));
  });

  it('refuses a rule whose role is now above the highest role', async () => {
    people.get('tina')!.identity = person('tina', ['cn=teachers,ou=groups']);
    await server.ctx.db.update(schema.identityProviders).set({ maxRole: 'user' }).where(eq(schema.identityProviders.id, providerId));
    expect(await codeOf((await login(server, 'tina', 'tina-pass')).res)).toBe('403 identity_role_not_allowed');
    await server.ctx.db.update(schema.identityProviders).set({ maxRole: 'advanced' }).where(eq(schema.identityProviders.id, providerId));
  });

  it('sends someone no rule matches to the registration-code step when the admin chose so', async () => {
    await call(server, `${A}/${providerId}`, { token: admin, method: 'PUT', body: ldapBody({ unmatched: 'register' }) });
    const { token } = await login(server, 'nobody', 'nobody-pass');
    expect(claimsOf(token!).type).toBe('register');
    const code = `code-${Date.now()}`;
    await server.ctx.db.insert(schema.registrationCodes).values({ code, categoryId: 'default', groupId: 'default-students-1b', roleId: 'user' });
    const reg = await call(server, '/api/v3/user/register', { token: token!, body: { code } });
    expect(reg.status, await reg.clone().text()).toBe(200);
    const row = (await userRow('nobody'))!;
    expect({ uid: row.uid, group: row.groupId, idp: row.identityProviderId, password: row.passwordHash }).toEqual({ uid: 'uid-nobody', group: 'default-students-1b', idp: providerId, password: null });
    // From then on the directory signs them in as that account.
    expect(claimsOf((await login(server, 'nobody', 'nobody-pass')).token!).data?.user_id).toBe(row.id);
  });

  it('a test shows what would happen and creates nothing', async () => {
    people.set('newbie', { password: 'newbie-pass', identity: person('newbie', ['cn=students,ou=groups']) });
    const res = await call(server, `${A}/${providerId}/test`, { token: admin, body: { username: 'newbie', password: 'newbie-pass' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { preview: unknown }).preview).toMatchObject({ outcome: 'create', group_id: 'default-students-1a', role: 'user', rule: 1, identity: { uid: 'uid-newbie' } });
    expect(await userRow('newbie')).toBeUndefined();
    expect(await codeOf(await call(server, `${A}/${providerId}/test`, { token: admin, body: { username: 'newbie', password: 'nope' } }))).toBe('400 login_failed');
  });

  it('a provider for every organisation: a person with no category chosen picks one, then registers', async () => {
    await removeProviders();
    const global = await create(ldapBody({ category_id: null, unmatched: 'register', rules: [] }));
    people.set('roamer', { password: 'roamer-pass', identity: person('roamer', []) });
    const { token } = await login(server, 'roamer', 'roamer-pass', null);
    const claims = claimsOf(token!);
    expect(claims.type).toBe('category-select');
    expect(claims.categories?.map((c) => c.id)).toEqual(expect.arrayContaining(['default', 'lab']));
    const form = new FormData();
    const res = await fetch(`${server.url}/authentication/login?provider=form&category_id=lab`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const next = claimsOf(await res.text());
    expect({ type: next.type, category: next.category_id }).toEqual({ type: 'register', category: 'lab' });
    await call(server, `${A}/${global.id}`, { token: admin, method: 'DELETE' });
  });
});

describe('a redirect sign-in (OpenID / SAML)', () => {
  let provider: TIdentityProvider;
  beforeAll(async () => {
    await removeProviders();
    provider = await create({
      kind: 'oidc', name: 'School IdP', category_id: 'default', settings: { issuer: 'http://idp.test', client_id: 'portal' }, secret: 'client-secret',
      rules: [{ attribute: 'affiliation', value: 'staff', group_id: 'default-teachers', role: 'advanced' }],
    });
  });

  it('is a button on the sign-in page of its organisation, and a kind GET /authentication/providers lists', async () => {
    const config = ZLoginConfig.parse(await (await fetch(`${server.url}/api/v3/login_config`)).json());
    expect(config.identity_providers).toEqual([{ id: provider.id, kind: 'oidc', name: 'School IdP', logo: '', category_id: 'default' }]);
    expect(await (await fetch(`${server.url}/authentication/providers`)).json()).toEqual({ providers: ['form', 'oidc'] });
  });

  it('hands the session to the web through the step cookie, and its sign-out offers the provider’s', async () => {
    nextIdentity = person('sam', [], { affiliation: ['staff'] });
    const start = await fetch(`${server.url}/authentication/login?provider=oidc&provider_id=${provider.id}&category_id=default`, { redirect: 'manual' });
    expect(start.status).toBe(303);
    const back = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    expect(back.headers.get('location')).toBe('/login/done');
    const token = /authorization=([^;]+)/.exec(back.headers.get('set-cookie') ?? '')![1]!;
    expect(claimsOf(token).data?.role_id).toBe('advanced');
    const out = await call(server, '/authentication/logout', { token, method: 'POST' });
    expect(await out.json()).toEqual({ redirect: `http://idp.test/logout?provider=${provider.id}` });
  });

  it('goes back to the sign-in page with the refusal’s code', async () => {
    nextIdentity = person('stranger', [], { affiliation: ['guest'] });
    const start = await fetch(`${server.url}/authentication/login?provider=oidc&provider_id=${provider.id}`, { redirect: 'manual' });
    const back = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    expect(back.headers.get('location')).toBe('/login?error=identity_not_allowed');
    const unknown = await fetch(`${server.url}/authentication/login?provider=saml&provider_id=${provider.id}`, { redirect: 'manual' });
    expect(unknown.headers.get('location')).toBe('/login?error=identity_provider_not_found');
  });

  it('a test brings the admin back to the console with a preview, and creates nothing', async () => {
    nextIdentity = person('preview-person', [], { affiliation: ['staff'] });
    const res = await call(server, `${A}/${provider.id}/test`, { token: admin, body: {} });
    const { url } = (await res.json()) as { url: string };
    const back = await fetch(url, { redirect: 'manual' });
    const location = back.headers.get('location')!;
    expect(location).toMatch(/^\/isard-admin\/identity_providers\?preview=/);
    const id = new URL(location, server.url).searchParams.get('preview')!;
    const preview = await call(server, `${A}/previews/${id}`, { token: admin });
    expect(await preview.json()).toMatchObject({ outcome: 'create', group_id: 'default-teachers', role: 'advanced' });
    expect((await call(server, `${A}/previews/${id}`, { token: await loginToken(server, 'manager') })).status).toBe(403);
    const [made] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'preview-person'));
    expect(made).toBeUndefined();
  });
});
