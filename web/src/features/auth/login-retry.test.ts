import { afterEach, describe, expect, it, vi } from 'vitest';
import { login, SIGN_IN_RETRY_DELAYS_MS } from './api';

// A session token as the server answers it (the client only reads its claims).
const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
const TOKEN = `${b64({ alg: 'HS256' })}.${b64({ type: 'login', exp: 9_999_999_999, iat: 1, session_id: 's', data: { role_id: 'user' } })}.sig`;

function answers(...steps: (Response | Error)[]) {
  const fetch = vi.fn(async () => {
    const next = steps.shift()!;
    if (next instanceof Error) throw next;
    return next;
  });
  vi.stubGlobal('fetch', fetch);
  return fetch;
}
const lost = () => new TypeError('Failed to fetch');
const status = (code: number) => new Response(JSON.stringify({ error: 'x', description_code: 'x' }), { status: code, headers: { 'content-type': 'application/json' } });

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('password sign-in whose answer never came', () => {
  it('is sent again after the pauses, and the answer that comes signs in', async () => {
    vi.useFakeTimers();
    const fetch = answers(lost(), status(504), new Response(TOKEN));
    const done = login({ username: 'uma', password: 'pw' });
    await vi.advanceTimersByTimeAsync(SIGN_IN_RETRY_DELAYS_MS[0] + SIGN_IN_RETRY_DELAYS_MS[1]);
    await expect(done).resolves.toBe('login');
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('is not sent again when the server answered (wrong password, too many attempts, its own failure)', async () => {
    for (const code of [401, 429, 500]) {
      const fetch = answers(status(code));
      await expect(login({ username: 'uma', password: 'pw' })).rejects.toMatchObject({ status: code });
      expect(fetch).toHaveBeenCalledTimes(1);
    }
  });

  it('says it failed after its last try', async () => {
    vi.useFakeTimers();
    const fetch = answers(lost(), lost(), lost());
    const done = login({ username: 'uma', password: 'pw' });
    const failed = expect(done).rejects.toBeInstanceOf(TypeError);
    await vi.advanceTimersByTimeAsync(SIGN_IN_RETRY_DELAYS_MS[0] + SIGN_IN_RETRY_DELAYS_MS[1]);
    await failed;
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('a later step (a code, a chosen organisation) is not sent again: the first try may have spent its token', async () => {
    const fetch = answers(lost(), new Response(TOKEN));
    await expect(login({ bearer: 'step-token', code: '123456' })).rejects.toBeInstanceOf(TypeError);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
