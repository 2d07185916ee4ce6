import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { ZRecoveryCodes, ZTwoFactorCodeBody, ZTwoFactorEnrolment, ZTwoFactorStatus, type TTwoFactorStatus } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import { audit, auditActorOf, type AuditActor } from '../../audit/record';
import { badRequest, conflict, forbidden, unauthorized } from '../../http/errors';
import { authOf, requireAuth, requireToken } from '../../http/guard';
import { configuredPublicUrl } from '../../http/base-url';
import { bearerToken, tokenType } from '../../auth/tokens';
import { findUserById } from '../../auth/passwords';
import type { UserRow } from '../../auth/sessions';
import { verifySecondFactor } from '../../auth/login-flow';
import {
  checkPendingCode,
  enrolmentView,
  hasTwoFactor,
  newTotpSecret,
  recoveryCodesLeft,
  replaceRecoveryCodes,
  sealTotp,
  twoFactorRequired,
} from '../../auth/two-factor';
import { isAdmin, peopleGuards } from '../admin/people/scope';
import { reachableUser } from '../admin/users/service';

const u = schema.users;
const idParams = z.object({ id: z.string().min(1).max(64) });
const userObject = (user: UserRow) => ({ objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });
const personActor = (user: UserRow, ip: string): AuditActor => ({ id: user.id, name: user.username, role: user.roleId, categoryId: user.categoryId, address: ip });

/** The issuer an authenticator app shows: the portal's public host, else the product's name. */
async function issuerOf(ctx: AppContext): Promise<string> {
  const url = await configuredPublicUrl(ctx);
  if (url) {
    try {
      return new URL(url).host;
    } catch {
      /* the stored address is checked on the way in; a bad one falls back */
    }
  }
  return 'VDI Portal';
}

export async function twoFactorStatus(ctx: AppContext, user: UserRow): Promise<TTwoFactorStatus> {
  const enabled = hasTwoFactor(user);
  return {
    enabled,
    enabled_at: enabled ? user.totpEnabledAt!.toISOString() : null,
    pending: !enabled && user.totpPendingSecret !== null,
    required: await twoFactorRequired(ctx.settings, user),
    recovery_codes_left: enabled ? await recoveryCodesLeft(ctx.db, user.id) : 0,
    available: user.provider === 'local',
  };
}

/** A new secret, pending until a code of it is confirmed (a new start replaces an unconfirmed one). */
async function startEnrolment(ctx: AppContext, user: UserRow) {
  if (user.provider !== 'local') throw badRequest('two_factor_local_only', 'Two-factor sign-in is for local accounts');
  if (hasTwoFactor(user)) throw conflict('two_factor_already_enabled', 'Two-factor sign-in is already on');
  const secret = newTotpSecret();
  await ctx.db.update(u).set({ totpPendingSecret: sealTotp(ctx.config.secret, secret) }).where(eq(u.id, user.id));
  return enrolmentView(secret, user.username, await issuerOf(ctx));
}

/** A code of the pending secret turns two-factor on (that code is spent) and gives ten recovery codes. */
async function confirmEnrolment(ctx: AppContext, user: UserRow, code: string, actor: AuditActor) {
  if (hasTwoFactor(user)) throw conflict('two_factor_already_enabled', 'Two-factor sign-in is already on');
  if (!user.totpPendingSecret) throw badRequest('two_factor_no_enrolment', 'Start an enrolment first');
  const step = checkPendingCode(ctx.config.secret, user, code);
  if (step === null) throw badRequest('two_factor_code_invalid', 'Wrong code');
  return ctx.db.transaction(async (tx) => {
    const done = await tx
      .update(u)
      .set({ totpSecret: user.totpPendingSecret, totpPendingSecret: null, totpEnabledAt: new Date(), totpLastStep: step })
      .where(and(eq(u.id, user.id), eq(u.totpPendingSecret, user.totpPendingSecret!), isNull(u.totpEnabledAt)))
      .returning({ id: u.id });
    if (done.length === 0) throw conflict('two_factor_already_enabled', 'Two-factor sign-in changed meanwhile');
    const codes = await replaceRecoveryCodes(tx as unknown as Db, user.id);
    await audit(tx, actor, { action: 'two_factor.enable', ...userObject(user) });
    return { recovery_codes: codes };
  });
}

/** Turns a person's second factor off (their own with a code, or an admin's reset) and forgets its recovery codes. */
async function clearSecondFactor(db: Db, userId: string) {
  await db.transaction(async (tx) => {
    await tx.update(u).set({ totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: 0 }).where(eq(u.id, userId));
    await tx.delete(schema.twoFactorRecoveryCodes).where(eq(schema.twoFactorRecoveryCodes.userId, userId));
  });
}

const requireOn = (user: UserRow) => {
  if (!hasTwoFactor(user)) throw badRequest('two_factor_not_enabled', 'Two-factor sign-in is off');
};

/**
 * Two-factor sign-in: the profile's own (/user/two-factor…: with a signed-in session, never an API token), the
 * console's reset (DELETE /admin/users/{id}/two-factor: admins, managers for their category's non-admins).
 */
export async function twoFactorRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const sessionOnly = requireAuth(ctx, { sessionOnly: true });
  const { staff } = peopleGuards(ctx);
  const me = async (request: FastifyRequest) => (await findUserById(ctx.db, authOf(request).user.id))!;

  r.get('/user/two-factor', { preHandler: sessionOnly, schema: { response: { 200: ZTwoFactorStatus } } }, async (request) => twoFactorStatus(ctx, await me(request)));

  r.post('/user/two-factor/enrolment', { preHandler: sessionOnly, schema: { response: { 200: ZTwoFactorEnrolment } } }, async (request) => startEnrolment(ctx, await me(request)));

  r.post(
    '/user/two-factor/enrolment/confirm',
    { preHandler: sessionOnly, schema: { body: ZTwoFactorCodeBody, response: { 200: ZRecoveryCodes } } },
    async (request) => confirmEnrolment(ctx, await me(request), request.body.code, auditActorOf(request)),
  );

  r.post('/user/two-factor/recovery-codes', { preHandler: sessionOnly, schema: { body: ZTwoFactorCodeBody, response: { 200: ZRecoveryCodes } } }, async (request) => {
    const user = await me(request);
    requireOn(user);
    await verifySecondFactor(ctx, user, request.body.code, request.ip);
    return ctx.db.transaction(async (tx) => {
      const codes = await replaceRecoveryCodes(tx as unknown as Db, user.id);
      await audit(tx, auditActorOf(request), { action: 'two_factor.recovery_codes_regenerated', ...userObject(user) });
      return { recovery_codes: codes };
    });
  });

  r.post('/user/two-factor/disable', { preHandler: sessionOnly, schema: { body: ZTwoFactorCodeBody } }, async (request) => {
    const user = await me(request);
    requireOn(user);
    if (await twoFactorRequired(ctx.settings, user)) throw forbidden('two_factor_required', 'Two-factor sign-in is required of you');
    await verifySecondFactor(ctx, user, request.body.code, request.ip);
    await clearSecondFactor(ctx.db, user.id);
    await audit(ctx.db, auditActorOf(request), { action: 'two_factor.disable', ...userObject(user) });
    return { enabled: false };
  });

  r.delete('/admin/users/:id/two-factor', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const user = await reachableUser(ctx.db, request, request.params.id);
    if (!isAdmin(authOf(request)) && user.roleId === 'admin') throw forbidden('forbidden', 'Only admins manage admins');
    const had = hasTwoFactor(user);
    await clearSecondFactor(ctx.db, user.id);
    await audit(ctx.db, auditActorOf(request), { action: 'two_factor.reset', ...userObject(user), detail: { was_enabled: had } });
    return { reset: true, was_enabled: had };
  });
}

/**
 * The enrolment a sign-in leads to when two-factor is required (Bearer: the `two-factor-enrolment-required` step
 * token): start, then confirm; then POST /authentication/login with the same token signs in.
 */
export async function twoFactorAuthenticationRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const token = requireToken(ctx);
  const stepUser = async (request: FastifyRequest) => {
    const claims = await ctx.tokens.verify(bearerToken(request.headers.authorization)!);
    if (tokenType(claims) !== 'two-factor-enrolment-required') throw unauthorized('invalid_token', 'Not an enrolment step');
    const user = claims.user_id ? await findUserById(ctx.db, claims.user_id) : undefined;
    if (!user) throw unauthorized('user_not_found', 'User not found');
    if (!user.active) throw forbidden('user_disabled', 'disabled user');
    return user;
  };

  r.post('/two-factor/enrolment', { preHandler: token, schema: { response: { 200: ZTwoFactorEnrolment } } }, async (request) => startEnrolment(ctx, await stepUser(request)));

  r.post('/two-factor/enrolment/confirm', { preHandler: token, schema: { body: ZTwoFactorCodeBody, response: { 200: ZRecoveryCodes } } }, async (request) => {
    const user = await stepUser(request);
    return confirmEnrolment(ctx, user, request.body.code, personActor(user, request.ip));
  });
}

