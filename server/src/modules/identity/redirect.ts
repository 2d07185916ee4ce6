/**
 * The end of a redirect sign-in (OpenID Connect, SAML), shared by the protocols' callbacks: kept apart from
 * routes.ts, which imports the protocols' registry (protocols.ts), so that a protocol importing these makes no cycle.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context';
import type { ExternalSession } from '../../db/schema';
import { ApiError } from '../../http/errors';
import { planSignIn, previewOf, signInExternal } from './external';
import type { ExternalIdentity } from './mapping';
import { putFlow } from './flows';
import type { RedirectFlow } from './protocol-types';
import type { LoadedProvider } from './providers';

/** How long a test preview waits for the console to read it. */
const PREVIEW_SECONDS = 600;
/** The step cookie's life when a redirect sign-in hands its token to the web (it reads it at once). */
const HANDOFF_SECONDS = 300;
/** The cookie that ties a redirect sign-in to the browser that started it (RedirectFlow.browser). */
export const FLOW_COOKIE = 'idp_flow';
const FLOW_COOKIE_SECONDS = 600;

/** The browser's flow value: the one it holds (several tabs share it), or a new one set on `reply`. */
export function browserBinding(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): string {
  const held = request.cookies[FLOW_COOKIE];
  const value = held && /^[\w-]{22,64}$/.test(held) ? held : randomBytes(24).toString('base64url');
  reply.setCookie(FLOW_COOKIE, value, {
    path: '/authentication', maxAge: FLOW_COOKIE_SECONDS, sameSite: 'lax', httpOnly: true, secure: ctx.config.publicUrl?.startsWith('https:') ?? false,
  });
  return value;
}

/** Whether this request comes from the browser that started a flow bound with `browser` (an unbound flow: yes). */
export const sameBrowser = (request: FastifyRequest, browser: unknown) => browser === undefined || browser === null || request.cookies[FLOW_COOKIE] === browser;

/** The provider could not be reached (a clear answer; local accounts keep working). */
export const unavailable = (err: unknown) =>
  new ApiError('service_unavailable', 'identity_provider_unavailable', `The sign-in provider cannot be reached (${(err as Error).message?.slice(0, 200) ?? 'error'})`);

/**
 * The end of a redirect sign-in, on the protocol's callback: a test shows the console what would happen; a sign-in
 * hands its token (a session, or the next step's) to the web at /login/done through the step cookie; a refusal or
 * failure goes back to the sign-in page with its code.
 */
export async function finishRedirect(
  ctx: AppContext,
  reply: FastifyReply,
  provider: LoadedProvider,
  identity: ExternalIdentity,
  flow: RedirectFlow & { external?: ExternalSession; ip?: string },
) {
  if (flow.test) {
    const preview = previewOf(identity, await planSignIn(ctx, provider, identity, flow.categoryId));
    const id = randomBytes(16).toString('base64url');
    await putFlow(ctx, `preview:${id}`, provider.id, preview as unknown as Record<string, unknown>, PREVIEW_SECONDS);
    return reply.redirect(`/isard-admin/identity_providers?preview=${id}&provider=${encodeURIComponent(provider.id)}`, 303);
  }
  try {
    const result = await signInExternal(ctx, provider, identity, { categoryId: flow.categoryId, external: flow.external, ip: flow.ip });
    return reply
      .setCookie('authorization', result.token, { path: '/', maxAge: HANDOFF_SECONDS, sameSite: 'lax', secure: ctx.config.publicUrl?.startsWith('https:') ?? false, httpOnly: false })
      .redirect('/login/done', 303);
  } catch (err) {
    return failRedirect(reply, err);
  }
}

/** Back to the sign-in page with the refusal's code (`identity_sign_in_failed` for anything that is not an answer of ours). */
export function failRedirect(reply: FastifyReply, err: unknown) {
  const code = err instanceof ApiError ? err.code : 'identity_sign_in_failed';
  return reply.redirect(`/login?error=${encodeURIComponent(code)}`, 303);
}
