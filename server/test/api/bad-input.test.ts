import { scaled } from '../helpers/slowdown';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { DESCRIPTION_CODES } from '@vdi/contracts';
import type { RegisteredRoute } from '../../src/app';
import { schema } from '../../src/db';
import { createLog, safeError } from '../../src/http/log';
import { call, DEMO_PASSWORD, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { keysOf, pathOf, paramsOf, sampleOf } from '../helpers/route-inputs';

/**
 * Bad input, sent to every registered route as an attacker or a broken client would: it must never
 * answer 5xx, and every 4xx carries the catalogue body with a known `description_code`.
 * Only garbage is sent (made-up ids, malformed bodies), so no real object is changed and no machine starts.
 */

let server: TestServer;
let admin: string;
beforeAll(async () => {
  // No floor delay on unknown direct links: the suite sends many.
  server = await startTestServer({ env: { DIRECT_VIEWER_DELAY_MS: '0' } });
  admin = await loginToken(server, 'admin');
});
afterAll(async () => server?.close());

const CODES: readonly string[] = DESCRIPTION_CODES;

type Answer = { status: number; body: unknown; text: string };
async function send(path: string, init: { method?: string; token?: string; contentType?: string; body?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.contentType) headers['content-type'] = init.contentType;
  const res = await fetch(`${server.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body });
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: judged by the caller */
  }
  return { status: res.status, body, text };
}

/** What is wrong with an answer to bad input, or null: no 5xx; a 4xx is the catalogue body with a known code. */
function fault(a: Answer): string | null {
  if (a.status >= 500) return `${a.status} ${a.text.slice(0, 200)}`;
  if (a.status < 400) return null;
  const b = a.body as Record<string, unknown> | undefined;
  if (!b || typeof b.description_code !== 'string') return `${a.status} without description_code: ${a.text.slice(0, 200)}`;
  if (!CODES.includes(b.description_code)) return `${a.status} with a code outside the catalogue: ${b.description_code}`;
  for (const key of ['error', 'msg', 'description'] as const) if (typeof b[key] !== 'string') return `${a.status} without ${key}`;
  if (!('params' in b)) return `${a.status} without params`;
  return null;
}

const expectRefused = (a: Answer, status: number, code: string) => {
  expect(a.status, a.text).toBe(status);
  expect(fault(a)).toBeNull();
  expect((a.body as { description_code: string }).description_code).toBe(code);
};

const loginForm = (fields: Record<string, string>) => {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
};

/** A multipart body whose part never ends (the parser fails after reading data). */
const TRUNCATED_MULTIPART = '--xyz\r\nContent-Disposition: form-data; name="username"\r\n\r\nadmin';

describe('the reproductions of issue 9, finding 2', () => {
  it('a NUL in an id is a 400 invalid_characters, not a database failure', async () => {
    expectRefused(await send('/api/v3/desktop/start/nul%00byte', { token: admin }), 400, 'invalid_characters');
    // Nobody signed in learns nothing of the input's rules: the session is asked for first.
    expectRefused(await send('/api/v3/desktop/start/nul%00byte'), 401, 'missing_token');
    // Other control characters have no place in an id either.
    expectRefused(await send('/api/v3/domain/info/a%01b', { token: admin }), 400, 'invalid_characters');
  });

  it('a NUL in a text field is a 400 invalid_characters and changes nothing', async () => {
    const [desktop] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.name, 'Demo desktop'));
    const before = desktop!.description;
    const res = await call(server, `/api/v3/domain/${desktop!.id}`, { token: admin, method: 'PUT', body: { description: 'x\u0000y' } });
    expectRefused({ status: res.status, text: '', body: await res.json() }, 400, 'invalid_characters');
    const [after] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktop!.id));
    expect(after!.description).toBe(before);
    // A NUL in a key of a free-form body (stored as jsonb) too.
    const settings = await call(server, '/api/v3/admin/settings/status_bar', { token: admin, method: 'PUT', body: { 'te\u0000xt': 'a' } });
    expect(settings.status).toBe(400);
    expect((await settings.json()).description_code).toBe('invalid_characters');
    // Line breaks and tabs stay allowed in text.
    const ok = await call(server, `/api/v3/domain/${desktop!.id}`, { token: admin, method: 'PUT', body: { description: 'line 1\n\tline 2' } });
    expect(ok.status).toBe(200);
  });

  it('signing in with a NUL category or a malformed multipart body is a 400', async () => {
    const nul = await fetch(`${server.url}/authentication/login?provider=form&category_id=%00`, {
      method: 'POST',
      body: loginForm({ username: 'admin', password: 'wrong' }),
    });
    expectRefused({ status: nul.status, text: '', body: await nul.json() }, 400, 'invalid_characters');
    const inForm = await fetch(`${server.url}/authentication/login?provider=form`, {
      method: 'POST',
      body: loginForm({ username: 'ad\u0000min', password: 'wrong', category_id: 'default' }),
    });
    expectRefused({ status: inForm.status, text: '', body: await inForm.json() }, 400, 'invalid_characters');
    for (const contentType of ['multipart/form-data; boundary=xyz', 'multipart/form-data']) {
      const bad = await send('/authentication/login?provider=form', { method: 'POST', contentType, body: TRUNCATED_MULTIPART });
      expectRefused(bad, 400, 'bad_request');
    }
    // A well-formed form still signs in.
    const good = await fetch(`${server.url}/authentication/login?provider=form&category_id=default`, {
      method: 'POST',
      body: loginForm({ username: 'manager', password: DEMO_PASSWORD }),
    });
    expect(good.status).toBe(200);
  });

  it('a setting named like a property of every object is not found', async () => {
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expectRefused(await send(`/api/v3/admin/settings/${key}`, { token: admin }), 404, 'not_found');
      const put = await send(`/api/v3/admin/settings/${key}`, { token: admin, method: 'PUT', contentType: 'application/json', body: '{}' });
      expectRefused(put, 404, 'not_found');
    }
    expect((await send('/api/v3/admin/settings/maintenance', { token: admin })).status).toBe(200);
  });

  it("Fastify's own refusals (a too long parameter, a bad URL) carry the catalogue body", async () => {
    expectRefused(await send(`/api/v3/desktop/start/${'a'.repeat(10_000)}`, { token: admin }), 414, 'validation_error');
    expectRefused(await send('/api/v3/desktop/start/%', { token: admin }), 400, 'bad_request');
    expectRefused(await send('/api/v3/desktop/start/a%zz'), 400, 'bad_request');
    expectRefused(await send('/api/v3/desktop/start/%ED%A0%80'), 400, 'bad_request');
    // Bodies the parsers refuse keep their status, in the catalogue body.
    expectRefused(await send('/api/v3/persistent_desktop', { token: admin, method: 'POST', contentType: 'application/json', body: '{"name":' }), 400, 'bad_request');
    expectRefused(await send('/api/v3/persistent_desktop', { token: admin, method: 'POST', contentType: 'application/xml', body: '<a/>' }), 415, 'bad_request');
    // Nesting too deep for a recursive walk is no stack overflow.
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    expect((await send('/api/v3/persistent_desktop', { token: admin, method: 'POST', contentType: 'application/json', body: deep })).status).toBe(400);
    const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}"x\\u0000"${'}'.repeat(depth)}`;
    const tooDeep = await send('/api/v3/admin/settings/bad-input', { token: admin, method: 'PUT', contentType: 'application/json', body: deepObject(50_000) });
    expect(tooDeep.status).toBe(400);
    expect(fault(tooDeep)).toBeNull();
    expectRefused(await send('/api/v3/admin/settings/bad-input', { token: admin, method: 'PUT', contentType: 'application/json', body: deepObject(5_000) }), 400, 'invalid_characters');
    const huge = JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) });
    expectRefused(await send('/api/v3/persistent_desktop', { token: admin, method: 'POST', contentType: 'application/json', body: huge }), 413, 'bad_request');
  });

  it("the direct viewer's 404 is the catalogue body (with the original's error and msg)", async () => {
    const a = await send('/api/v3/direct/no-such-link-no-such-link-no-such-link');
    expectRefused(a, 404, 'not_found');
    expect(a.body).toMatchObject({ error: 'not_found', msg: 'Not found' });
    expectRefused(await send('/api/v3/direct/no-such-link-no-such-link-no-such-link/start', { method: 'PUT' }), 404, 'not_found');
  });

  it('what the HTTP parser refuses is answered with the catalogue body', async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
        let got = '';
        socket.on('data', (d) => (got += d.toString()));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
        socket.write(request);
      });
    const bodyOf = (answer: string) => ({ status: Number(answer.split(' ')[1]), text: answer, body: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) });
    expectRefused(bodyOf(await raw('GET /api/v3/check HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n')), 400, 'bad_request');
    expectRefused(bodyOf(await raw(`GET /api/v3/check HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)), 431, 'bad_request');
  });

  it('a failed query is logged without the values it ran with', async () => {
    const secret = 'secret-value-42';
    const err = await server.ctx.db
      .select()
      .from(schema.users)
      .where(eq(schema.users.username, `${secret}\u0000`))
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(JSON.stringify(safeError(err))).not.toContain(secret);
    // The server's own logger serializes errors that way.
    const serializeErr = (server.ctx.log as unknown as Record<symbol, Record<string, (e: unknown) => unknown>>)[pino.symbols.serializersSym]!.err!;
    expect(JSON.stringify(serializeErr(err))).toContain('Failed query');
    expect(JSON.stringify(serializeErr(err))).not.toContain(secret);
    // Written out, as the error handler logs an unexpected error, and a request line.
    const lines: string[] = [];
    const log = createLog('info', { write: (line: string) => void lines.push(line) });
    log.error({ err }, 'unhandled error');
    log.info({ req: { method: 'GET', url: `/x?token=${secret}` } }, 'incoming request');
    // Direct-viewer codes are secrets carried in the path.
    log.info({ req: { method: 'GET', url: `/vw/${secret}` } }, 'incoming request');
    log.info({ req: { method: 'PUT', url: `/api/v3/direct/${secret}/reset` } }, 'incoming request');
    expect(lines.join('')).toContain('Failed query');
    expect(lines.join('')).not.toContain(secret);
  });
});

/** Every route, with garbage in each place input enters it. */
describe('every registered route refuses bad input with a catalogue code', () => {
  type Case = { label: string; path: string; method: string; contentType?: string; body?: string };

  function casesOf(route: RegisteredRoute): Case[] {
    const cases: Case[] = [];
    const add = (label: string, path: string, body?: { contentType: string; text: string }) =>
      cases.push({ label, path, method: route.method, contentType: body?.contentType, body: body?.text });
    const params = paramsOf(route.url);
    for (const p of params) {
      add(`NUL in :${p}`, pathOf(route, { [p]: 'nul%00byte' }));
      add(`control character in :${p}`, pathOf(route, { [p]: 'a%0Ab' }));
      add(`10k characters in :${p}`, pathOf(route, { [p]: 'a'.repeat(10_000) }));
      add(`bad percent-encoding in :${p}`, pathOf(route, { [p]: 'a%zz' }));
    }
    for (const q of keysOf(route.schema?.querystring)) {
      add(`NUL in ?${q}`, `${pathOf(route)}?${q}=%00`);
      add(`10k characters in ?${q}`, `${pathOf(route)}?${q}=${'a'.repeat(10_000)}`);
    }
    if (route.method === 'GET') return cases;
    const path = pathOf(route);
    const json = (text: string) => ({ contentType: 'application/json', text });
    // Refused by the parsers before any handler: safe on every route.
    add('malformed JSON', path, json('{"a":'));
    add('not a body type the server reads', path, { contentType: 'application/xml', text: '<a/>' });
    add('malformed multipart', path, { contentType: 'multipart/form-data; boundary=xyz', text: TRUNCATED_MULTIPART });
    add('multipart without a boundary', path, { contentType: 'multipart/form-data', text: TRUNCATED_MULTIPART });
    // Parsed bodies reach the handler when the route declares no body: sent only where the made-up ids of
    // the path keep the call from touching anything (so `logout` or `recycle_bin/empty` are spared).
    if (!route.schema?.body && params.length === 0) return cases;
    add('NUL in every string of the body', path, json(JSON.stringify(sampleOf(route.schema?.body, 'x\u0000y'))));
    add('NUL in a body key', path, json(JSON.stringify({ 'a\u0000b': 1 })));
    add('a prototype key', path, json('{"__proto__": {"role": "admin"}}'));
    add('a constructor.prototype key', path, json('{"constructor": {"prototype": {"role": "admin"}}}'));
    for (const wrong of ['5', '"text"', '[1, 2]', '[{}]', 'null', 'true', '{}']) add(`body ${wrong}`, path, json(wrong));
    const sample = sampleOf(route.schema?.body, 'bad-input');
    add('unknown fields', path, json(JSON.stringify({ ...(typeof sample === 'object' && sample ? sample : {}), bad_input_unknown: { x: [1] } })));
    add('form body of made-up values', path, { contentType: 'application/x-www-form-urlencoded', text: 'a=%00&b=c' });
    return cases;
  }

  /** Runs `fn` over `items`, `limit` at a time. */
  async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
    let next = 0;
    await Promise.all(Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }));
  }

  it('answers no 5xx and a description_code on every 4xx, signed in as admin and anonymously', async () => {
    const routes = server.app.registeredRoutes;
    expect(routes.length).toBeGreaterThan(100);
    const work = routes.flatMap((route) =>
      casesOf(route).flatMap((c) => [
        { route, c, token: admin, who: 'admin' },
        { route, c, token: undefined, who: 'anonymous' },
      ]),
    );
    const faults: string[] = [];
    let reachedAsAdmin = 0;
    await pool(work, 6, async ({ route, c, token, who }) => {
      const a = await send(c.path, { method: c.method, token, contentType: c.contentType, body: c.body });
      if (token && a.status !== 401) reachedAsAdmin++;
      const f = fault(a);
      if (f) faults.push(`${route.method} ${route.url} (${who}, ${c.label}): ${f}`);
    });
    expect(faults).toEqual([]);
    // The admin's session survived the garbage (or the signed-in half would have tested nothing).
    expect(reachedAsAdmin).toBeGreaterThan(work.length / 4);
    expect((await send('/api/v3/user', { token: admin })).status).toBe(200);
  }, scaled(120_000));
});

/**
 * Authentication before validation (issue 23, finding 4): every route but the public ones below asks for
 * its session or token before it reads any input, so nobody signed in gets a 400 that tells the route's
 * schema. A new route is either guarded (requireAuth / requireToken, which run first on every route)
 * or listed here as public.
 */
describe('every route but the public ones authenticates before it reads the input', () => {
  const PUBLIC = new Set([
    'POST /authentication/login',
    'POST /authentication/renew',
    'POST /authentication/logout',
    'GET /authentication/providers',
    'POST /authentication/signup',
    'POST /authentication/forgot-password',
    'GET /authentication/categories',
    'POST /isard-admin/login',
    'GET /isard-admin/login',
    'GET /isard-admin/logout/remote',
    'GET /api/v3/user/expired/password-policy',
    'GET /api/v3/maintenance',
    'GET /api/v3/maintenance/text/frontend',
    'GET /api/v3/check',
    'GET /api/v3/health',
    'GET /api/v3/categories',
    'GET /api/v3/category/:id',
    'GET /api/v3/login_config',
    'GET /api/v3/disclaimer',
    'GET /api/v3/direct/docs',
    'GET /api/v3/direct/:token',
    'PUT /api/v3/direct/:token/:action',
    'GET /assets/img/desktops/stock/:file',
    'GET /assets/img/desktops/user/:file',
  ]);

  it('answers 401 to an anonymous call with a bad body, a bad query and a NUL in its ids, on every other route', async () => {
    const routes = server.app.registeredRoutes;
    const unguarded = routes.filter((r) => !r.authenticated && !PUBLIC.has(`${r.method} ${r.url}`)).map((r) => `${r.method} ${r.url}`);
    expect(unguarded).toEqual([]);
    const wrong: string[] = [];
    await Promise.all(
      routes
        .filter((r) => r.authenticated)
        .map(async (route) => {
          const query = ['bad_input_unknown=%00', ...keysOf(route.schema?.querystring).map((q) => `${q}=%00`)].join('&');
          const body = route.method === 'GET' ? undefined : { contentType: 'application/json', body: JSON.stringify({ ...(sampleOf(route.schema?.body, 'x\u0000y') as object), bad_input_unknown: [1] }) };
          const path = pathOf(route, Object.fromEntries(paramsOf(route.url).map((p) => [p, 'nul%00byte'])));
          const a = await send(`${path}?${query}`, { method: route.method, ...body });
          if (a.status !== 401) wrong.push(`${route.method} ${route.url}: ${a.status} ${a.text.slice(0, 120)}`);
        }),
    );
    expect(wrong).toEqual([]);
  }, scaled(120_000));
});
