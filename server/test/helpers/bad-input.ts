import { expect } from 'vitest';
import { DESCRIPTION_CODES } from '@vdi/contracts';
import type { RegisteredRoute } from '../../src/app';
import { keysOf, pathOf, paramsOf, sampleOf } from './route-inputs';

// Bad input, sent to every registered route as an attacker or a broken client would (issue 9, finding 2;
// issue 23, finding 4): the cases and the rules an answer is judged by. Run by
// server/test/api/bad-input.test.ts against one in-process server and by
// server/test/processes/matrix-balancer.test.ts through HAProxy in front of three server processes.

const CODES: readonly string[] = DESCRIPTION_CODES;

export type Answer = { status: number; body: unknown; text: string };
export async function sendTo(url: string, path: string, init: { method?: string; token?: string; contentType?: string; body?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.contentType) headers['content-type'] = init.contentType;
  const res = await fetch(`${url}${path}`, { method: init.method ?? 'GET', headers, body: init.body });
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
export function fault(a: Answer): string | null {
  if (a.status >= 500) return `${a.status} ${a.text.slice(0, 200)}`;
  if (a.status < 400) return null;
  const b = a.body as Record<string, unknown> | undefined;
  if (!b || typeof b.description_code !== 'string') return `${a.status} without description_code: ${a.text.slice(0, 200)}`;
  if (!CODES.includes(b.description_code)) return `${a.status} with a code outside the catalogue: ${b.description_code}`;
  for (const key of ['error', 'msg', 'description'] as const) if (typeof b[key] !== 'string') return `${a.status} without ${key}`;
  if (!('params' in b)) return `${a.status} without params`;
  return null;
}

/** A multipart body whose part never ends (the parser fails after reading data). */
export const TRUNCATED_MULTIPART = '--xyz\r\nContent-Disposition: form-data; name="username"\r\n\r\nadmin';

/** One piece of garbage for a route: where it goes and what it is. */
export type Case = { label: string; path: string; method: string; contentType?: string; body?: string };

export function casesOf(route: RegisteredRoute): Case[] {
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
export async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/**
 * Every route's garbage (`casesOf`), signed in as admin (`admin`: that session's token) and anonymously, 6 at a time:
 * expects no 5xx and the catalogue body on every 4xx, and the admin's session alive at the end (or the signed-in
 * half would have tested nothing).
 */
export async function checkBadInput(url: string, routes: RegisteredRoute[], admin: string) {
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
    const a = await sendTo(url, c.path, { method: c.method, token, contentType: c.contentType, body: c.body });
    if (token && a.status !== 401) reachedAsAdmin++;
    const f = fault(a);
    if (f) faults.push(`${route.method} ${route.url} (${who}, ${c.label}): ${f}`);
  });
  expect(faults).toEqual([]);
  expect(reachedAsAdmin).toBeGreaterThan(work.length / 4);
  expect((await sendTo(url, '/api/v3/user', { token: admin })).status).toBe(200);
}

/**
 * The routes nobody signed in may call. Every other one asks for its session or token before it reads any input,
 * so nobody signed in gets a 400 that tells the route's schema (requireAuth / requireToken run first).
 */
export const PUBLIC_ROUTES = new Set([
  'POST /authentication/login',
  // The start of a redirect sign-in (OpenID Connect, SAML): the browser of someone not yet signed in.
  'GET /authentication/login',
  'POST /authentication/renew',
  'POST /authentication/logout',
  'GET /authentication/providers',
  'POST /authentication/signup',
  'POST /authentication/forgot-password',
  'GET /authentication/categories',
  // The OpenID provider's return.
  'GET /authentication/oidc/callback/:id',
  // SAML's addresses for the IdP and the browser (their messages are signed).
  'GET /authentication/saml/metadata/:id',
  'GET /authentication/saml/metadata',
  'GET /authentication/saml/login',
  'POST /authentication/saml/acs/:id',
  'GET /authentication/saml/slo/:id',
  'POST /authentication/saml/slo/:id',
  'POST /isard-admin/login',
  'GET /isard-admin/login',
  'GET /isard-admin/logout/remote',
  'GET /api/v3/user/expired/password-policy',
  'GET /api/v3/maintenance',
  'GET /api/v3/maintenance/text/frontend',
  'GET /api/v3/check',
  // A load balancer's health check.
  'GET /api/v3/health',
  // Monitoring: its own guard (the monitoring token or an allowed address, no session), and no input to read.
  'GET /metrics',
  // The OpenAPI document: the shapes of the calls, for tools that generate clients (no data).
  'GET /api/v3/openapi.json',
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

/**
 * Authentication before validation: expects every route guarded or public, and a 401 from every guarded one to
 * an anonymous call with a bad body, a bad query and a NUL in its ids.
 */
export async function checkAuthFirst(url: string, routes: RegisteredRoute[]) {
  const unguarded = routes.filter((r) => !r.authenticated && !PUBLIC_ROUTES.has(`${r.method} ${r.url}`)).map((r) => `${r.method} ${r.url}`);
  const wrong: string[] = [];
  await pool(
    routes.filter((r) => r.authenticated),
    8,
    async (route) => {
        const query = ['bad_input_unknown=%00', ...keysOf(route.schema?.querystring).map((q) => `${q}=%00`)].join('&');
        const body = route.method === 'GET' ? undefined : { contentType: 'application/json', body: JSON.stringify({ ...(sampleOf(route.schema?.body, 'x\u0000y') as object), bad_input_unknown: [1] }) };
        const path = pathOf(route, Object.fromEntries(paramsOf(route.url).map((p) => [p, 'nul%00byte'])));
        const a = await sendTo(url, `${path}?${query}`, { method: route.method, ...body });
        if (a.status !== 401) wrong.push(`${route.method} ${route.url}: ${a.status} ${a.text.slice(0, 120)}`);
    },
  );
  expect(unguarded).toEqual([]);
  expect(wrong).toEqual([]);
}
