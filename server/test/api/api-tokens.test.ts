import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import pino from 'pino';
import { API_TOKEN_MAX_PER_USER, ZAdminApiTokenList, ZApiTokenCreated, ZApiTokenList, type TApiTokenCreated } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, type TestServer } from '../helpers/server';

// Personal API tokens (issue 27): made in the profile, used as `Authorization: Bearer`, acting as their owner.

let server: TestServer;
let user: string;
let admin: string;
let manager: string;
let researcher: string;
/** Every line the server logged during the file (the log is switched on at its most talkative). */
const logged: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { LOG_LEVEL: 'trace' } });
  const stream = (server.ctx.log as unknown as Record<symbol, { write: (s: string) => unknown }>)[pino.symbols.streamSym]!;
  stream.write = (line: string) => logged.push(line);
  [user, admin, manager] = await Promise.all([loginToken(server, 'user'), loginToken(server, 'admin'), loginToken(server, 'manager')]);
  researcher = (await login(server, 'researcher', DEMO_PASSWORD, 'lab')).token!;
}, scaled(120_000));
afterAll(async () => server?.close());

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });
const codeOf = async (res: Response) => `${res.status} ${((await res.json()) as { description_code?: string }).description_code ?? ''}`;
async function create(session: string, body: Record<string, unknown> = {}): Promise<TApiTokenCreated> {
  const res = await call(server, '/api/v3/user/api-tokens', { token: session, body: { name: 'script', scope: 'full', expires: null, ...body } });
  expect(res.status, await res.clone().text()).toBe(200);
  return ZApiTokenCreated.parse(await res.json());
}
const tokenRow = async (id: string) => (await server.ctx.db.select().from(schema.apiTokens).where(eq(schema.apiTokens.id, id)))[0]!;

describe('a person’s API tokens', () => {
  it('are shown once, kept as a hash, and listed by their prefix', async () => {
    const made = await create(user, { name: 'backup script' });
    expect(made.token.startsWith(`${made.prefix}_`)).toBe(true);
    expect(made).toMatchObject({ name: 'backup script', scope: 'full', expires: null, last_used: null, revoked: null });
    const row = await tokenRow(made.id);
    expect(JSON.stringify(row)).not.toContain(made.token.slice(made.prefix.length + 1));
    const list = ZApiTokenList.parse(await (await call(server, '/api/v3/user/api-tokens', { token: user })).json());
    expect(list.find((t) => t.id === made.id)?.prefix).toBe(made.prefix);
    expect(JSON.stringify(list)).not.toContain(made.token);
  });

  it('act as their owner, never more', async () => {
    const { token } = await create(user);
    const me = await json(await call(server, '/api/v3/user', { token }));
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('user');
    expect(await codeOf(await call(server, '/api/v3/admin/users', { token }))).toBe('403 forbidden');
    // A full token writes what its owner may write.
    expect((await call(server, '/api/v3/user/language/es', { token, method: 'PUT' })).status).toBe(200);
  });

  it('never make or end tokens, nor change the account', async () => {
    const made = await create(user);
    expect(await codeOf(await call(server, '/api/v3/user/api-tokens', { token: made.token }))).toBe('403 api_token_session_only');
    expect(await codeOf(await call(server, '/api/v3/user/api-tokens', { token: made.token, body: { name: 'x', scope: 'full', expires: null } }))).toBe('403 api_token_session_only');
    expect(await codeOf(await call(server, '/api/v3/user', { token: made.token, method: 'PUT', body: { current_password: DEMO_PASSWORD, password: 'Another-pass-9' } }))).toBe('403 api_token_session_only');
  });

  it('read-only: reads, and is refused on a write with a catalogue code', async () => {
    const { token } = await create(user, { scope: 'read' });
    expect((await call(server, '/api/v3/user/desktops', { token })).status).toBe(200);
    expect(await codeOf(await call(server, '/api/v3/user/language/en', { token, method: 'PUT' }))).toBe('403 api_token_read_only');
  });

  it('expired or revoked: refused', async () => {
    const expiring = await create(user, { expires: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await call(server, '/api/v3/user', { token: expiring.token })).status).toBe(200);
    await server.ctx.db.update(schema.apiTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(schema.apiTokens.id, expiring.id));
    expect(await codeOf(await call(server, '/api/v3/user', { token: expiring.token }))).toBe('401 token_expired');

    const revoked = await create(user);
    expect((await call(server, `/api/v3/user/api-tokens/${revoked.id}`, { token: user, method: 'DELETE' })).status).toBe(200);
    expect(await codeOf(await call(server, '/api/v3/user', { token: revoked.token }))).toBe('401 invalid_token');
    expect(await codeOf(await call(server, `/api/v3/user/api-tokens/${revoked.id}`, { token: user, method: 'DELETE' }))).toBe('404 api_token_not_found');
    // A guessed secret for a real id, and a made-up token: the same refusal.
    expect(await codeOf(await call(server, '/api/v3/user', { token: `${expiring.prefix}_${'A'.repeat(43)}` }))).toBe('401 invalid_token');
    expect(await codeOf(await call(server, '/api/v3/user', { token: 'vdi_nonsense' }))).toBe('401 invalid_token');
    // Create and revoke are in the owner's audit log.
    const entries = await server.ctx.db.select().from(schema.auditLog).where(and(eq(schema.auditLog.objectType, 'user'), eq(schema.auditLog.action, 'api_token.revoke')));
    expect(entries.map((e) => e.detail)).toContainEqual(expect.objectContaining({ token: revoked.prefix }));
    const created = await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.action, 'api_token.create'));
    expect(created.map((e) => (e.detail as { token: string }).token)).toContain(revoked.prefix);
  });

  it('stop working while their owner is disabled', async () => {
    const { token } = await create(user);
    const [owner] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'user'));
    const set = (active: boolean) => call(server, `/api/v3/admin/user/${owner!.id}/active`, { token: admin, method: 'PUT', body: { active } });
    expect((await set(false)).status).toBe(200);
    try {
      expect(await codeOf(await call(server, '/api/v3/user', { token }))).toBe('403 user_disabled');
    } finally {
      expect((await set(true)).status).toBe(200);
    }
    expect((await call(server, '/api/v3/user', { token })).status).toBe(200);
    user = await loginToken(server, 'user');
  });

  it('record their last use at most once a minute', async () => {
    const made = await create(user, { scope: 'read' });
    await call(server, '/api/v3/user', { token: made.token });
    const first = (await tokenRow(made.id)).lastUsedAt;
    expect(first).not.toBeNull();
    await call(server, '/api/v3/user', { token: made.token });
    expect((await tokenRow(made.id)).lastUsedAt).toEqual(first);
    const earlier = new Date(Date.now() - 120_000);
    await server.ctx.db.update(schema.apiTokens).set({ lastUsedAt: earlier }).where(eq(schema.apiTokens.id, made.id));
    await call(server, '/api/v3/user', { token: made.token });
    expect((await tokenRow(made.id)).lastUsedAt!.getTime()).toBeGreaterThan(earlier.getTime());
    const listed = ZApiTokenList.parse(await (await call(server, '/api/v3/user/api-tokens', { token: user })).json());
    expect(listed.find((t) => t.id === made.id)?.last_used).not.toBeNull();
  });

  it('refuse a bad expiry and more than the limit', async () => {
    expect(await codeOf(await call(server, '/api/v3/user/api-tokens', { token: manager, body: { name: 'x', scope: 'full', expires: new Date(Date.now() - 1000).toISOString() } }))).toBe('400 api_token_expiry_invalid');
    expect(await codeOf(await call(server, '/api/v3/user/api-tokens', { token: manager, body: { name: 'x', scope: 'full', expires: '2400-01-01T00:00:00Z' } }))).toBe('400 api_token_expiry_invalid');
    expect(await codeOf(await call(server, '/api/v3/user/api-tokens', { token: manager, body: { name: '', scope: 'full', expires: null } }))).toBe('400 validation_error');
    const [me] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'student01'));
    const student = await loginToken(server, 'student01');
    for (let i = 0; i < API_TOKEN_MAX_PER_USER; i++) await create(student, { name: `t${i}` });
    expect(await codeOf(await call(server, '/api/v3/user/api-tokens', { token: student, body: { name: 'one more', scope: 'read', expires: null } }))).toBe('409 api_token_limit');
    await server.ctx.db.delete(schema.apiTokens).where(eq(schema.apiTokens.userId, me!.id));
  });
});

describe('the console’s list', () => {
  it('shows an admin everyone’s and a manager their category’s; both revoke what they see', async () => {
    const mine = await create(user, { name: 'listed default' });
    const lab = await create(researcher, { name: 'listed lab', scope: 'read' });
    const list = async (session: string, query = '') => ZAdminApiTokenList.parse(await (await call(server, `/api/v3/admin/api-tokens?per_page=500${query}`, { token: session })).json());
    const all = await list(admin);
    expect(all.items.map((t) => t.id)).toEqual(expect.arrayContaining([mine.id, lab.id]));
    expect(all.items.find((t) => t.id === lab.id)).toMatchObject({ username: 'researcher', category: 'lab', scope: 'read' });
    expect((await list(admin, '&category=lab')).items.every((t) => t.category === 'lab')).toBe(true);
    expect((await list(admin, '&scope=read')).items.every((t) => t.scope === 'read')).toBe(true);
    expect((await list(admin, '&search=listed%20lab')).items.map((t) => t.id)).toEqual([lab.id]);
    const managed = await list(manager);
    expect(managed.items.map((t) => t.id)).toContain(mine.id);
    expect(managed.items.every((t) => t.category === 'default')).toBe(true);
    // Another category's token is "not found" to a manager; theirs they revoke.
    expect(await codeOf(await call(server, `/api/v3/admin/api-tokens/${lab.id}`, { token: manager, method: 'DELETE' }))).toBe('404 api_token_not_found');
    expect((await call(server, `/api/v3/admin/api-tokens/${mine.id}`, { token: manager, method: 'DELETE' })).status).toBe(200);
    expect((await call(server, `/api/v3/admin/api-tokens/${lab.id}`, { token: admin, method: 'DELETE' })).status).toBe(200);
    expect(await codeOf(await call(server, '/api/v3/user', { token: lab.token }))).toBe('401 invalid_token');
    expect((await list(admin, '&state=revoked')).items.map((t) => t.id)).toEqual(expect.arrayContaining([mine.id, lab.id]));
    expect((await list(admin, '&state=active')).items.map((t) => t.id)).not.toContain(lab.id);
    // Nobody else lists them.
    expect(await codeOf(await call(server, '/api/v3/admin/api-tokens', { token: user }))).toBe('403 forbidden');
  });
});

describe('the log', () => {
  it('never holds a token, its secret or its hash', async () => {
    const made = await create(user, { scope: 'read' });
    await call(server, '/api/v3/user', { token: made.token });
    await call(server, '/api/v3/user/language/en', { token: made.token, method: 'PUT' });
    await call(server, `/api/v3/desktop/start/nothing?x=${made.token}`, { token: made.token });
    const secret = made.token.slice(made.prefix.length + 1);
    const text = logged.join('');
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain('incoming request');
    expect(text).not.toContain(secret);
    expect(text).not.toContain((await tokenRow(made.id)).secretHash);
  });
});

describe('the OpenAPI document', () => {
  it('describes every /api/v3 route the server registers, with its input and answer', async () => {
    const res = await fetch(`${server.url}/api/v3/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown>; security?: unknown }>> };
    expect(doc.openapi).toMatch(/^3\./);
    const missing = server.app.registeredRoutes
      .filter((r) => r.url.startsWith('/api/v3/'))
      .map((r) => [r.method.toLowerCase(), r.url.slice('/api/v3'.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}')] as const)
      .filter(([method, path]) => !doc.paths[path]?.[method])
      .map(([m, p]) => `${m} ${p}`);
    expect(missing).toEqual([]);
    const create = doc.paths['/user/api-tokens']!.post!;
    expect(JSON.stringify(create.requestBody)).toContain('"scope"');
    expect(JSON.stringify(create.responses['200'])).toContain('"token"');
    expect(create.security).toBeDefined();
    expect(doc.paths['/openapi.json']!.get!.security).toBeUndefined();
  });
});
