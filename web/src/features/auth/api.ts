import { ZCategoryPublic, ZLoginConfig, type TTokenType } from '@vdi/contracts';
import { z } from 'zod';
import { api, AUTH, gotNoAnswer, request } from '../../lib/api';
import { withRetries } from '../../lib/retry';
import { session } from '../../lib/session';
import { readToken, typeOf } from '../../lib/token';
import { HANDLES_ERROR } from '../../lib/queries';

export const LOGIN_TIMEOUT_MS = 25_000;
/** A password sign-in whose answer never came is sent again after these pauses (ms), then the page says it failed. */
export const SIGN_IN_RETRY_DELAYS_MS = [1_000, 2_000] as const;

// The sign-in pages go on without these (no session yet: the central handler would sign out).
export const categoriesQuery = { queryKey: ['categories'], queryFn: () => api.get('/categories', z.array(ZCategoryPublic), { bearer: null }), meta: HANDLES_ERROR } as const;
/** A category by its login address (/login/{provider}/{custom_url}); null when there is none. */
export const categoryByUrlQuery = (customUrl: string | undefined) =>
  ({
    queryKey: ['categories', 'by-url', customUrl],
    queryFn: () => api.get(`/category/${encodeURIComponent(customUrl!)}`, ZCategoryPublic, { bearer: null }),
    enabled: Boolean(customUrl),
    retry: false,
    meta: HANDLES_ERROR,
  }) as const;
export const loginConfigQuery = { queryKey: ['login_config'], queryFn: () => api.get('/login_config', ZLoginConfig, { bearer: null }), meta: HANDLES_ERROR } as const;

/**
 * What the sign-in page offers, from the server's provider list: the user/password form while
 * "form" is listed (and until the list is known), and a button per external provider.
 */
export function signInChoices(providers: readonly string[] | undefined): { form: boolean; external: string[] } {
  if (!providers) return { form: true, external: [] };
  return { form: providers.includes('form'), external: providers.filter((p) => p !== 'form') };
}

/** Sends a sign-in (or a step of one), keeps the answered token and tells its type. */
/** The admin area's sign-in (sets its `session` cookie from the portal session). */
const ADMIN_LOGIN = '/isard-admin/login';

export async function login(opts: { username?: string; password?: string; categoryId?: string; bearer?: string; code?: string }): Promise<TTokenType> {
  const form: Record<string, string> = {};
  if (opts.username !== undefined) form.username = opts.username;
  if (opts.password !== undefined) form.password = opts.password;
  if (opts.code !== undefined) form.code = opts.code;
  form.provider = 'form';
  if (opts.categoryId) form.category_id = opts.categoryId;
  const send = () =>
    request<string>(`${AUTH}/login`, {
      method: 'POST',
      query: { provider: 'form', category_id: opts.categoryId },
      form,
      bearer: opts.bearer ?? null,
      text: true,
      timeoutMs: LOGIN_TIMEOUT_MS,
    });
  // The password, sent again when its answer never came (a class signing in at once on a busy portal): another try
  // at worst ends the session the lost answer opened. A later step's token may be spent by the first try: not again.
  const token = opts.bearer ? await send() : await withRetries(send, SIGN_IN_RETRY_DELAYS_MS, { what: "The sign-in's answer", again: gotNoAnswer });
  return adoptToken(token);
}

/** Keeps a sign-in's token (a session or the next step's) and tells its type; a session of an admin or manager opens the admin area's too. */
export async function adoptToken(token: string): Promise<TTokenType> {
  session.store(token);
  const claims = readToken(token);
  const type = claims ? typeOf(claims) : 'login';
  // Admins and managers: the admin area's session opens with the portal's (as the original did).
  if (type === 'login' && (claims?.data?.role_id === 'admin' || claims?.data?.role_id === 'manager')) {
    await request(ADMIN_LOGIN, { method: 'POST', bearer: token }).catch(() => undefined);
  }
  return type;
}

/** Where the browser starts a sign-in with an OpenID or SAML provider. */
export const providerSignInUrl = (p: { id: string; kind: string }, categoryId?: string) =>
  `/authentication/login?${new URLSearchParams({ provider: p.kind, provider_id: p.id, ...(categoryId ? { category_id: categoryId } : {}) })}`;

/** The provider's logout a sign-out offers (kept for the sign-in page that follows). */
export const IDP_LOGOUT_KEY = 'vdi.idpLogout';

/** A step token (from the cookie) when it is of one of the given types. */
export function stepTokenOf(...types: TTokenType[]): string | undefined {
  const token = session.stepToken();
  const claims = readToken(token);
  return claims && types.includes(typeOf(claims)) ? token : undefined;
}
