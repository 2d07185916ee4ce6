import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import {
  languageCode,
  toLanguage,
  ZAppliedQuota,
  ZPasswordPolicy,
  ZRegisterBody,
  ZSignInDesktop,
  ZSignInDesktopUpdate,
  ZUser,
  ZUserConfig,
  ZUserUpdate,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth, requireToken, sessionOf } from '../../http/guard';
import { badRequest, unauthorized } from '../../http/errors';
import { findPolicy, findUserById } from '../../auth/passwords';
import { registerWithCode } from './registration';
import { setSignInDesktop, signInDesktop } from './sign-in-desktop';
import { bearerToken, tokenType } from '../../auth/tokens';
import { appliedQuota } from '../quotas/applied';
import { userView } from './user-view';
import { updateUser } from './update';
import { mailEnabled } from '../../mail/mailer';
import { migrationsBlock } from '../migration/settings';
import { auditActorOf } from '../../audit/record';
import type { Bastion } from '../bastion/service';

export async function userRoutes(app: FastifyInstance, ctx: AppContext, bastion: Bastion) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);
  // The account itself (password, e-mail) and the session's own settings: a signed-in person only, never an API token.
  const sessionOnly = requireAuth(ctx, { sessionOnly: true });

  r.get('/user', { preHandler: auth, schema: { response: { 200: ZUser } } }, async (request) =>
    userView(ctx.db, authOf(request).user),
  );

  r.put('/user', { preHandler: sessionOnly, schema: { body: ZUserUpdate } }, async (request) =>
    updateUser(ctx, auditActorOf(request), authOf(request).user, sessionOf(request).id, request.body),
  );

  r.get('/user/config', { preHandler: sessionOnly, schema: { response: { 200: ZUserConfig } } }, async (request) => {
    const { user } = authOf(request);
    const session = sessionOf(request);
    const frontend = await ctx.settings.get('frontend');
    return {
      show_bookings_button: frontend.show_bookings_button || user.roleId === 'admin',
      documentation_url: frontend.documentation_url,
      viewers_documentation_url: frontend.viewers_documentation_url,
      show_change_email_button: await mailEnabled(ctx),
      show_temporal_tab: frontend.show_temporal_tab,
      ...(await bastion.userConfig()),
      can_use_bastion_individual_domains: false,
      migrations_block: await migrationsBlock(ctx, user),
      multiple_hypervisors: (await ctx.db.$count(schema.hypervisors)) > 1,
      session: { id: session.id, max_renew_time: ctx.sessions.maxRenewTime(session), max_time: ctx.sessions.maxTime(session) },
    };
  });

  // What signing in opens (ours): the person's own setting, read by the portal right after the sign-in.
  r.get('/user/sign-in-desktop', { preHandler: sessionOnly, schema: { response: { 200: ZSignInDesktop } } }, async (request) =>
    signInDesktop(ctx, authOf(request).user),
  );
  r.put('/user/sign-in-desktop', { preHandler: sessionOnly, schema: { body: ZSignInDesktopUpdate, response: { 200: ZSignInDesktop } } }, async (request) =>
    setSignInDesktop(ctx, authOf(request).user, request.body.open),
  );

  r.get('/user/appliedquota', { preHandler: auth, schema: { response: { 200: ZAppliedQuota } } }, async (request) =>
    appliedQuota(ctx.db, authOf(request).user),
  );

  r.put(
    '/user/language/:lang',
    { preHandler: requireAuth(ctx, { duringMaintenance: true }), schema: { params: z.object({ lang: z.string().max(16) }) } },
    async (request) => {
      // Every language with a catalogue (spec 001 §9), stored by its code: `de-DE` → `de`, `zh-CN` → `zh_Hans`.
      const lang = toLanguage(request.params.lang);
      if (!lang) throw badRequest('invalid_language', `Unsupported language ${request.params.lang}`);
      await ctx.db.update(schema.users).set({ lang: languageCode(lang) }).where(eq(schema.users.id, authOf(request).user.id));
      return {};
    },
  );

  const policyAnswer = z.union([ZPasswordPolicy, z.literal(false)]);
  r.get('/user/password-policy', { preHandler: auth, schema: { response: { 200: policyAnswer } } }, async (request) => {
    const { user } = authOf(request);
    return (await findPolicy(ctx.db, user.categoryId, user.roleId)) ?? false;
  });

  // Read with the token of a password-reset step, before any session exists.
  r.get('/user/expired/password-policy', { schema: { response: { 200: policyAnswer } } }, async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw unauthorized('missing_token', 'Missing token');
    const claims = await ctx.tokens.verify(token);
    const type = tokenType(claims);
    const userId = type === 'login' ? claims.data?.user_id : claims.user_id;
    if (!['password-reset-required', 'password-reset', 'login'].includes(type) || !userId) {
      throw unauthorized('invalid_token', 'Invalid token');
    }
    const user = await findUserById(ctx.db, userId);
    if (!user) throw unauthorized('user_not_found', 'User not found');
    return (await findPolicy(ctx.db, user.categoryId, user.roleId)) ?? false;
  });

  r.post('/user/register', { preHandler: requireToken(ctx, { missing: 'session_expired' }), schema: { body: ZRegisterBody } }, async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw unauthorized('session_expired', 'Registration session ended');
    return registerWithCode(ctx, token, request.body.code);
  });
}
