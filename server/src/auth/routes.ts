import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZForgotPasswordBody,
  ZLoginQuery,
  ZProvidersAnswer,
  ZRenewAnswer,
  ZRequestEmailVerificationBody,
  ZResetPasswordBody,
  ZSignupBody,
} from '@vdi/contracts';
import { eq } from 'drizzle-orm';
import type { AppContext } from '../context';
import { schema } from '../db';
import { badRequest, unauthorized } from '../http/errors';
import { continueLogin, passwordLogin, type LoginResult, type SignInHooks } from './login-flow';
import { acknowledgeDisclaimer, forgotPassword, requestEmailVerification, resetPassword, verifyEmail } from './recovery';
import { listedProviders } from './providers';
import { signup } from './registration';
import { bearerToken } from './tokens';
import { requireToken } from '../http/guard';
import { ApiError } from '../http/errors';
import { auditActorOf, audit, type AuditActor } from '../audit/record';
import { findUserById } from './passwords';
import type { UserRow } from './sessions';

/** The audit actor of a sign-in step or sign-out: the person, from the request's address. */
const actorFor = (user: UserRow, ip: string): AuditActor => ({
  id: user.id,
  name: user.username,
  role: user.roleId,
  categoryId: user.categoryId,
  address: ip,
});
const userObject = (user: UserRow) => ({ objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });

/** Form fields arrive as strings (multipart or urlencoded); every one optional, checked per flow. */
const ZLoginFields = z
  .object({
    username: z.string().max(128).optional(),
    password: z.string().max(512).optional(),
    provider: z.string().max(32).optional(),
    category_id: z.string().max(64).optional(),
    /** The second factor's step: a TOTP code or a recovery code. */
    code: z.string().max(64).optional(),
  })
  .nullish();

const requireBearer = (header: string | undefined) => {
  const token = bearerToken(header);
  if (!token) throw unauthorized('missing_token', 'Missing token');
  return token;
};

/** The original service answers the raw JWT as text, also in a header and a short cookie. */
function sendToken(reply: FastifyReply, result: LoginResult, secure: boolean) {
  return reply
    .header('authorization', `Bearer ${result.token}`)
    .setCookie('authorization', result.token, { path: '/', maxAge: 300, sameSite: 'strict', secure, httpOnly: false })
    .type('text/plain')
    .send(result.token);
}

/** The authentication service, mounted under /authentication. */
export async function authenticationRoutes(app: FastifyInstance, ctx: AppContext, hooks: SignInHooks = {}) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/login', { schema: { querystring: ZLoginQuery, body: ZLoginFields } }, async (request, reply) => {
    const form = request.body ?? {};
    const categoryId = request.query.category_id || form.category_id || undefined;
    const bearer = bearerToken(request.headers.authorization);
    let result: LoginResult;
    if (bearer && !form.username) {
      try {
        result = await continueLogin(ctx, bearer, categoryId, hooks, { code: form.code, ip: request.ip });
      } catch (err) {
        // A wrong second-factor code: written as a failed sign-in of that person (never the code).
        if (err instanceof ApiError && err.code === 'two_factor_code_invalid') {
          const claims = await ctx.tokens.verify(bearer).catch(() => undefined);
          const user = claims?.user_id ? await findUserById(ctx.db, claims.user_id) : undefined;
          if (user) {
            await audit(ctx.db, { ...actorFor(user, request.ip), id: null, role: null }, {
              action: 'auth.sign_in_failed',
              ...userObject(user),
              detail: { reason: err.code },
            });
          }
        }
        throw err;
      }
    } else {
      const username = form.username?.trim();
      if (!username || !form.password) throw badRequest('missing_required_data', 'Username and password are required');
      try {
        result = await passwordLogin(ctx, username, form.password, categoryId, request.ip, hooks.directoryLogin);
      } catch (err) {
        // A wrong name or password, with the name as typed (never the password). Attempts the limits
        // hold back (429) are not written: they cost no password check and would let one client
        // fill the log at its request rate.
        if (err instanceof ApiError && err.status === 401) {
          await audit(ctx.db, auditActorOf(request, { name: username.slice(0, 128), categoryId: categoryId ?? null }), {
            action: 'auth.sign_in_failed',
            objectType: 'user',
            objectName: username.slice(0, 128),
            detail: { reason: err.code },
          });
        }
        throw err;
      }
    }
    if (result.recoveryCodeUsed) {
      const { user, left } = result.recoveryCodeUsed;
      await audit(ctx.db, actorFor(user, request.ip), { action: 'two_factor.recovery_code_used', ...userObject(user), detail: { left } });
    }
    if (result.type === 'login' && result.user) {
      await audit(ctx.db, actorFor(result.user, request.ip), { action: 'auth.sign_in', ...userObject(result.user) });
      if (result.endedSessions) {
        await audit(ctx.db, actorFor(result.user, request.ip), {
          action: 'auth.session_revoked',
          ...userObject(result.user),
          detail: { sessions: result.endedSessions, reason: 'signed_in_again' },
        });
      }
    }
    return sendToken(reply, result, request.protocol === 'https');
  });

  r.post('/renew', { schema: { response: { 200: ZRenewAnswer } } }, async (request) => ({
    token: await ctx.sessions.renew(requireBearer(request.headers.authorization)),
  }));

  r.post('/logout', async (request) => {
    const claims = await ctx.tokens.verifySignatureOnly(requireBearer(request.headers.authorization));
    let redirect: string | undefined;
    if (claims.session_id) {
      const [session] = await ctx.db.select({ external: schema.sessions.external, revokedAt: schema.sessions.revokedAt }).from(schema.sessions).where(eq(schema.sessions.id, claims.session_id));
      await ctx.sessions.revoke(claims.session_id);
      const user = claims.sub ? await findUserById(ctx.db, claims.sub) : undefined;
      if (user) await audit(ctx.db, actorFor(user, request.ip), { action: 'auth.sign_out', ...userObject(user) });
      // A session a provider opened offers the provider's own logout (once: not for a session already ended).
      if (session?.external && !session.revokedAt && hooks.logoutRedirect) redirect = await hooks.logoutRedirect(session.external).catch(() => undefined);
    }
    return redirect ? { redirect } : {};
  });

  r.get('/providers', { schema: { response: { 200: ZProvidersAnswer } } }, async () => ({ providers: listedProviders(['local', ...((await hooks.listedKinds?.()) ?? [])]) }));

  r.post('/signup', { schema: { body: ZSignupBody } }, async (request, reply) =>
    sendToken(reply, { type: 'register', token: await signup(ctx, request.body) }, request.protocol === 'https'),
  );

  // Calls made with a step or link token: the token is checked before the body is (requireToken).
  const token = requireToken(ctx);

  r.post('/acknowledge-disclaimer', { preHandler: token }, async (request) => {
    await acknowledgeDisclaimer(ctx, requireBearer(request.headers.authorization));
    return {};
  });

  r.post(
    '/forgot-password',
    { schema: { body: ZForgotPasswordBody } },
    async (request) => {
      await forgotPassword(ctx, request.body.category_id, request.body.email, request.ip);
      return {};
    },
  );

  r.post('/reset-password', { preHandler: token, schema: { body: ZResetPasswordBody } }, async (request) => {
    const { user, ended } = await resetPassword(ctx, requireBearer(request.headers.authorization), request.body.password);
    await audit(ctx.db, actorFor(user, request.ip), { action: 'auth.password_change', ...userObject(user), detail: { ended_sessions: ended } });
    return {};
  });

  r.post('/request-email-verification', { preHandler: token, schema: { body: ZRequestEmailVerificationBody } }, async (request) => {
    await requestEmailVerification(ctx, requireBearer(request.headers.authorization), request.body.email);
    return {};
  });

  r.post('/verify-email', { preHandler: token }, async (request) => {
    await verifyEmail(ctx, requireBearer(request.headers.authorization));
    return {};
  });
}
