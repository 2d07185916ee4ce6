import { scaled } from '../helpers/slowdown';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { schema } from '../../src/db';
import { createLog, safeError } from '../../src/http/log';
import { call, DEMO_PASSWORD, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { checkAuthFirst, checkBadInput, fault, sendTo, TRUNCATED_MULTIPART, type Answer } from '../helpers/bad-input';

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

const send = (path: string, init?: Parameters<typeof sendTo>[2]) => sendTo(server.url, path, init);

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
  it('answers no 5xx and a description_code on every 4xx, signed in as admin and anonymously', async () => {
    await checkBadInput(server.url, server.app.registeredRoutes, admin);
  }, scaled(120_000));
});

/**
 * Authentication before validation (issue 23, finding 4): every route but the public ones asks for
 * its session or token before it reads any input, so nobody signed in gets a 400 that tells the route's
 * schema. A new route is either guarded (requireAuth / requireToken, which run first on every route)
 * or listed as public (PUBLIC_ROUTES, helpers/bad-input.ts).
 */
describe('every route but the public ones authenticates before it reads the input', () => {
  it('answers 401 to an anonymous call with a bad body, a bad query and a NUL in its ids, on every other route', async () => {
    await checkAuthFirst(server.url, server.app.registeredRoutes);
  }, scaled(120_000));
});
