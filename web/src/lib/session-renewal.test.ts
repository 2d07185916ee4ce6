import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from './api';
import { session } from './session';
import './session-actions';

// A call made with a session token in its last 30 s renews it first: a page the browser could not run
// for a while (a laptop waking up, a starved machine) fires its queued calls before the session
// keeper's next tick, and the server answers an expired token 401, which signs the person out.

const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
/** A login token as the server issues it (the client only reads its claims), ending in `seconds`. */
const tokenEnding = (seconds: number, tag: string) => {
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'HS256' })}.${b64({ type: 'login', iat: now, exp: now + seconds, session_id: 's', sub: tag, data: { provider: 'local', user_id: 'u', role_id: 'user', category_id: 'default', group_id: 'g', name: 'U' } })}.sig`;
};

type Call = { url: string; bearer: string | null };
function server(renew: () => Response) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ url, bearer: new Headers(init.headers).get('authorization') });
      return url.endsWith('/renew') ? renew() : new Response(JSON.stringify({ ok: true }), { headers: { 'content-type': 'application/json' } });
    }),
  );
  return calls;
}

beforeEach(() => session.clear());
afterEach(() => {
  vi.unstubAllGlobals();
  session.clear();
});

describe('a call with a session about to end', () => {
  it('renews the session first and goes with the fresh token', async () => {
    const old = tokenEnding(10, 'old');
    const fresh = tokenEnding(300, 'fresh');
    session.store(old);
    const calls = server(() => new Response(JSON.stringify({ token: fresh }), { headers: { 'content-type': 'application/json' } }));
    await api.get('/user');
    expect(calls).toEqual([
      { url: '/authentication/renew', bearer: `Bearer ${old}` },
      { url: '/api/v3/user', bearer: `Bearer ${fresh}` },
    ]);
    expect(session.token()).toBe(fresh);
  });

  it('renews once for calls made together', async () => {
    session.store(tokenEnding(5, 'old'));
    const calls = server(() => new Response(JSON.stringify({ token: tokenEnding(300, 'fresh') }), { headers: { 'content-type': 'application/json' } }));
    await Promise.all([api.get('/user'), api.get('/user/desktops'), api.get('/user/config')]);
    expect(calls.filter((c) => c.url.endsWith('/renew'))).toHaveLength(1);
    expect(calls).toHaveLength(4);
  });

  it('a session with time left goes as it is', async () => {
    const token = tokenEnding(200, 'now');
    session.store(token);
    const calls = server(() => new Response('{}'));
    await api.get('/user');
    expect(calls).toEqual([{ url: '/api/v3/user', bearer: `Bearer ${token}` }]);
  });

  it('a renewal refused leaves the call to go with the token it has (the server answers it)', async () => {
    const old = tokenEnding(10, 'old');
    session.store(old);
    const calls = server(() => new Response(JSON.stringify({ error: 'x', description_code: 'session_expired' }), { status: 401 }));
    await api.get('/user');
    expect(calls.map((c) => c.url)).toEqual(['/authentication/renew', '/api/v3/user']);
    expect(calls[1]!.bearer).toBe(`Bearer ${old}`);
  });
});
