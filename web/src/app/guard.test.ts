import { describe, expect, it, vi } from 'vitest';
import { SignJWT } from 'jose';
import type { TUser, TUserConfig } from '@vdi/contracts';
import { HttpError, RequestTimeout } from '../lib/api';
import { GUARD_RETRY_DELAYS_MS, GuardReadError, runGuard, type GuardDeps } from './guard';
import { ROUTES, type AppRoute } from './routes';

const NOW = 1_800_000_000_000;
const key = new TextEncoder().encode('test-secret-test-secret');
const token = (claims: Record<string, unknown>, expInSeconds = 300) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(NOW / 1000).setExpirationTime(NOW / 1000 + expInSeconds).sign(key);

const DATA = { data: { provider: 'local', user_id: 'u', role_id: 'user', category_id: 'default', group_id: 'g', name: 'U' } };
const route = (name: string): AppRoute => ROUTES.find((r) => r.name === name)!;
const url = (path: string) => new URL(`http://x${path}`);

function deps(over: Partial<GuardDeps> & { role?: TUser['role']; migrationsBlock?: boolean } = {}): GuardDeps & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    setTitle: (k) => calls.push(`title:${k}`),
    sessionToken: () => undefined,
    stepToken: () => undefined,
    drift: () => 0,
    now: () => NOW,
    renew: async () => void calls.push('renew'),
    logout: async () => void calls.push('logout'),
    fetchUser: async () => ({ role: over.role ?? 'user' }) as TUser,
    applySavedLanguage: async () => undefined,
    openSocket: () => void calls.push('socket'),
    ensureConfig: async () => ({ migrations_block: over.migrationsBlock ?? false }) as TUserConfig,
    ensureRecycleCutoff: async () => void calls.push('cutoff'),
    isMounted: () => true,
    ...over,
  };
}

describe('access guard', () => {
  it('1. sets the title of every route, public ones included', async () => {
    const d = deps();
    expect(await runGuard(route('login'), url('/login'), d)).toBeNull();
    expect(d.calls).toEqual(['title:routes.login']);
  });

  it('2. without any token goes to sign in, except token routes with a query token', async () => {
    expect(await runGuard(route('desktops'), url('/desktops'), deps())).toBe('/login');
    expect(await runGuard(route('reset-password'), url('/reset-password'), deps())).toBe('/login');
    expect(await runGuard(route('reset-password'), url('/reset-password?token=t'), deps())).toBeNull();
    expect(await runGuard(route('verify-email'), url('/verify-email?token=t'), deps())).toBeNull();
  });

  it('3. register and category-select tokens continue on their pages', async () => {
    const reg = await token({ type: 'register' });
    expect(await runGuard(route('desktops'), url('/desktops'), deps({ stepToken: () => reg }))).toBe('/register');
    const cat = await token({ type: 'category-select' });
    expect(await runGuard(route('profile'), url('/profile'), deps({ stepToken: () => cat }))).toBe('/login');
  });

  it('4. renews a token about to expire; a failed renewal signs out', async () => {
    const soon = await token(DATA, 20);
    const d = deps({ sessionToken: () => soon });
    expect(await runGuard(route('desktops'), url('/desktops'), d)).toBeNull();
    expect(d.calls).toContain('renew');
    const failing = deps({ sessionToken: () => soon, renew: () => Promise.reject(new Error('401')) });
    expect(await runGuard(route('desktops'), url('/desktops'), failing)).toBe('/login');
    expect(failing.calls).toContain('logout');
    const fresh = deps({ sessionToken: () => soon, drift: () => -60 });
    await runGuard(route('desktops'), url('/desktops'), fresh);
    expect(fresh.calls).not.toContain('renew');
  });

  it('5. signs out when the session user cannot be fetched; 503 goes to maintenance', async () => {
    const t = await token(DATA);
    const gone = deps({ sessionToken: () => t, fetchUser: () => Promise.reject(Object.assign(new Error('x'), { status: 401 })) });
    expect(await runGuard(route('desktops'), url('/desktops'), gone)).toBe('/login');
    expect(gone.calls).toContain('logout');
    const maint = deps({ sessionToken: () => t, fetchUser: () => Promise.reject(Object.assign(new Error('x'), { status: 503 })) });
    expect(await runGuard(route('desktops'), url('/desktops'), maint)).toBe('/maintenance');
    const disabled = deps({ sessionToken: () => t, fetchUser: () => Promise.reject(Object.assign(new Error('x'), { status: 403 })) });
    expect(await runGuard(route('desktops'), url('/desktops'), disabled)).toBe('/login');
  });

  it('5. a failed or cancelled request for the user, or a server error, does not sign out: the screen says what did not arrive', async () => {
    vi.useFakeTimers();
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const t = await token(DATA);
      for (const failure of [new TypeError('Failed to fetch'), Object.assign(new Error('cancelled'), { name: 'CancelledError' }), new HttpError(500, { error: 'x', msg: 'x', description_code: 'generic_error', description: '', params: null }, new Headers())]) {
        const d = deps({ sessionToken: () => t, fetchUser: () => Promise.reject(failure) });
        const outcome = runGuard(route('desktops'), url('/desktops'), d).catch((e: unknown) => e);
        await vi.advanceTimersByTimeAsync(GUARD_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0));
        const err = await outcome;
        expect(err).toBeInstanceOf(GuardReadError);
        expect((err as GuardReadError).reason).toBe(failure);
        expect(d.calls).not.toContain('logout');
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('5/7. a read that failed on the way (no answer in time, a dropped connection, a server error) is made again; an answer about the session is not', async () => {
    vi.useFakeTimers();
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const t = await token(DATA);
      let userTries = 0;
      let configTries = 0;
      const d = deps({
        sessionToken: () => t,
        fetchUser: async () => (++userTries < 3 ? Promise.reject(new RequestTimeout('generic_error')) : ({ role: 'user' } as TUser)),
        ensureConfig: async () => (++configTries < 2 ? Promise.reject(new TypeError('Failed to fetch')) : ({ migrations_block: false } as TUserConfig)),
      });
      const outcome = runGuard(route('desktops'), url('/desktops'), d);
      await vi.advanceTimersByTimeAsync(GUARD_RETRY_DELAYS_MS[0] + GUARD_RETRY_DELAYS_MS[1] + GUARD_RETRY_DELAYS_MS[0]);
      expect(await outcome).toBeNull();
      expect([userTries, configTries]).toEqual([3, 2]);

      // The server saying the session is over is believed at once.
      let tries = 0;
      const over = deps({ sessionToken: () => t, fetchUser: () => (tries++, Promise.reject(new HttpError(401, { error: 'x', msg: 'x', description_code: 'unauthorized', description: '', params: null }, new Headers()))) });
      expect(await runGuard(route('desktops'), url('/desktops'), over)).toBe('/login');
      expect(tries).toBe(1);
      // A configuration that never arrives: the screen says so.
      const never = deps({ sessionToken: () => t, ensureConfig: () => Promise.reject(new RequestTimeout('generic_error')) });
      const failed = runGuard(route('desktops'), url('/desktops'), never).catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(GUARD_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0));
      expect(await failed).toBeInstanceOf(GuardReadError);
    } finally {
      vi.useRealTimers();
    }
  });

  it('6. a role outside the route goes to the desktops', async () => {
    const t = await token(DATA);
    expect(await runGuard(route('deployments'), url('/deployments'), deps({ sessionToken: () => t, role: 'user' }))).toBe('/desktops');
    expect(await runGuard(route('deployments'), url('/deployments'), deps({ sessionToken: () => t, role: 'advanced' }))).toBeNull();
    expect(await runGuard(route('planning'), url('/planning'), deps({ sessionToken: () => t, role: 'manager' }))).toBe('/desktops');
    expect(await runGuard(route('planning'), url('/planning'), deps({ sessionToken: () => t, role: 'admin' }))).toBeNull();
  });

  it('7. opens the socket for allowed users and forces export when migrations are blocked', async () => {
    const t = await token(DATA);
    const d = deps({ sessionToken: () => t });
    await runGuard(route('desktops'), url('/desktops'), d);
    expect(d.calls).toContain('socket');
    // …and fetches the maximum recycle time; its failure blocks nothing.
    expect(d.calls).toContain('cutoff');
    const failing = deps({ sessionToken: () => t, ensureRecycleCutoff: () => Promise.reject(new Error('503')) });
    expect(await runGuard(route('desktops'), url('/desktops'), failing)).toBeNull();
    expect(await runGuard(route('desktops'), url('/desktops'), deps({ sessionToken: () => t, migrationsBlock: true }))).toBe('/export-user');
    expect(await runGuard(route('desktops'), url('/desktops'), deps({ sessionToken: () => t, migrationsBlock: true, isMounted: () => false }))).toBeNull();
  });

  it('7. the screen waits for the language the user saved on the server', async () => {
    const t = await token(DATA);
    let applied = '';
    let release!: () => void;
    const d = deps({
      sessionToken: () => t,
      fetchUser: async () => ({ role: 'user', lang: 'ca' }) as TUser,
      applySavedLanguage: (code) => new Promise<void>((resolve) => (release = () => ((applied = code ?? ''), resolve()))),
    });
    let done = false;
    const guarded = runGuard(route('desktops'), url('/desktops'), d).then((to) => ((done = true), to));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    release();
    expect(await guarded).toBeNull();
    expect(applied).toBe('ca');
  });

  it('8. unfinished steps go to their page and may stay there', async () => {
    const cases = [
      ['disclaimer-acknowledgement-required', '/disclaimer'],
      ['email-verification-required', '/verify-email'],
      ['password-reset-required', '/reset-password'],
    ] as const;
    for (const [type, to] of cases) {
      const t = await token({ type });
      expect(await runGuard(route('desktops'), url('/desktops'), deps({ stepToken: () => t }))).toBe(to);
    }
    const reset = await token({ type: 'password-reset-required' });
    expect(await runGuard(route('reset-password'), url('/reset-password'), deps({ stepToken: () => reset }))).toBeNull();
  });

  it('signs out on an unreadable token', async () => {
    const d = deps({ sessionToken: () => 'garbage' });
    expect(await runGuard(route('desktops'), url('/desktops'), d)).toBe('/login');
    expect(d.calls).toContain('logout');
  });
});

describe('guard deps are called lazily', () => {
  it('does not fetch the user for public routes', async () => {
    const fetchUser = vi.fn();
    await runGuard(route('maintenance'), url('/maintenance'), deps({ fetchUser }));
    expect(fetchUser).not.toHaveBeenCalled();
  });
});
