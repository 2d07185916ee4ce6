import type { TRole, TTokenClaims, TUser, TUserConfig } from '@vdi/contracts';
import { needsRenewal, readToken, typeOf } from '../lib/token';
import { STEP_ROUTES } from '../lib/sign-in-steps';
import { mayPass } from '../lib/api';
import { withRetries } from '../lib/retry';
import type { AppRoute } from './routes';

/** The guard's reads that fail on the way (no answer in time on a starved machine, a dropped connection, a server error) are made again after these pauses. */
export const GUARD_RETRY_DELAYS_MS = [1_000, 2_000, 4_000] as const;

/** What a screen needs (the session user, the configuration) did not arrive, tried again: the route says so, with a retry. */
export class GuardReadError extends Error {
  constructor(readonly reason: unknown) {
    super(`What the screen needs did not arrive: ${reason instanceof Error ? reason.message : String(reason)}`);
    this.name = 'GuardReadError';
  }
}

const readAgain = <T>(read: () => Promise<T>) => withRetries(read, GUARD_RETRY_DELAYS_MS, { what: 'The session', again: mayPass });

export type GuardDeps = {
  setTitle(titleKey: string): void;
  sessionToken(): string | undefined;
  stepToken(): string | undefined;
  drift(): number;
  now(): number;
  renew(): Promise<void>;
  logout(): Promise<void>;
  fetchUser(): Promise<TUser>;
  /** Applies the user's language saved on the server (the screen is shown in it). */
  applySavedLanguage(code: string | null | undefined): Promise<void>;
  /** Opens the live socket; the screen is shown once it is there (its subscriptions need it). */
  openSocket(): void | Promise<void>;
  ensureConfig(): Promise<TUserConfig>;
  /** The maximum recycle time (hours), kept for the screens that delete. */
  ensureRecycleCutoff(): Promise<unknown>;
  isMounted(path: string): boolean;
};

/** The access guard of spec core §2, step by step; answers a path to go to, or null to proceed. */
export async function runGuard(route: AppRoute, url: URL, deps: GuardDeps): Promise<string | null> {
  // 1. The page title.
  deps.setTitle(route.title);
  if (route.access === 'public') return null;

  // 2. A session, else a stored step token; else sign in (token routes may go on with a query token).
  const queryToken = url.searchParams.get('token');
  const token = deps.sessionToken() ?? deps.stepToken();
  if (!token) return route.access === 'token' && queryToken ? null : '/login';
  const claims: TTokenClaims | null = readToken(token);
  if (!claims) {
    await deps.logout();
    return '/login';
  }
  const type = typeOf(claims);

  // 3. Registration and category choice continue on their own pages.
  if (type === 'register') return '/register';
  if (type === 'category-select') return '/login';

  // 8. Other unfinished steps go to their page (and may stay there).
  if (type !== 'login') {
    const to = STEP_ROUTES[type] ?? '/login';
    return route.path === to ? null : to;
  }

  // 4. Renew when the token expires within 30 s on the server's clock; failing, sign out.
  if (needsRenewal(claims, deps.drift(), deps.now())) {
    try {
      await deps.renew();
    } catch {
      await deps.logout();
      return '/login';
    }
  }

  // 5. The session user.
  let user: TUser;
  try {
    user = await readAgain(deps.fetchUser);
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 503) return '/maintenance';
    // Only the server saying the session or the user is no longer valid signs out. A request that
    // failed on the way or was cancelled, or a server error, is not the session's fault: it is made
    // again a few times, then the screen says it could not be loaded (with a retry) and the person
    // stays signed in.
    if (status === 401 || status === 403) {
      await deps.logout();
      return '/login';
    }
    throw new GuardReadError(err);
  }

  // 6. Without a query token, the role must be allowed.
  const role: TRole = user.role;
  if (!queryToken && typeof route.access !== 'string' && !route.access.includes(role)) return '/desktops';

  // 7. The live socket, the configuration and the maximum recycle time (a failure of the last one
  // blocks nothing); blocked migrations force the export page.
  // The saved language too, so the screen shows in it from its first frame.
  const [, config] = await Promise.all([
    deps.openSocket(),
    readAgain(deps.ensureConfig).catch((err: unknown) => Promise.reject(new GuardReadError(err))),
    deps.ensureRecycleCutoff().catch(() => undefined),
    deps.applySavedLanguage(user.lang).catch(() => undefined),
  ]);
  if (config.migrations_block && route.name !== 'export-user' && deps.isMounted('/export-user')) return '/export-user';
  return null;
}
