import { randomUUID } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import type { z } from 'zod';
import type { ZSignupBody } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import { ApiError, badRequest, conflict, forbidden, notFound, precondition, unauthorized } from '../http/errors';
import { userLimitProblem } from '../modules/quotas/users';
import { findPolicy, hashPassword, policyViolations } from './passwords';
import { TOKEN_LIFETIME, tokenType } from './tokens';

export const emailDomainAllowed = (allowed: string[], email: string) =>
  allowed.length === 0 || allowed.some((d) => email.toLowerCase().endsWith(`@${d.toLowerCase().replace(/^@/, '')}`));

/** An address a user of the category may have (sign-up, the code step, a change of address), else 403. */
export function assertEmailDomainAllowed(category: { allowedEmailDomains: string[] } | undefined, email: string) {
  if (category && !emailDomainAllowed(category.allowedEmailDomains, email)) {
    throw forbidden('email_domain_not_allowed', 'E-mail domain not allowed in this category');
  }
}

/** Self sign-up: checks the identity, keeps it aside and answers a `register` token for the code step. */
export async function signup(ctx: AppContext, body: z.infer<typeof ZSignupBody>) {
  const [category] = await ctx.db.select().from(schema.categories).where(eq(schema.categories.id, body.category_id));
  if (!category) throw notFound('category_not_found', 'Category not found');
  const [existing] = await ctx.db
    .select({ id: schema.users.id })
    .from(schema.users)
    .where(and(eq(schema.users.categoryId, category.id), eq(schema.users.username, body.username)));
  if (existing) throw conflict('username_exists', 'That username is taken in this category');
  assertEmailDomainAllowed(category, body.email);
  const policy = await findPolicy(ctx.db, category.id, 'user');
  const violations = await policyViolations(policy, body.password, body.username, []);
  if (violations[0]) throw badRequest(violations[0].code, 'The password does not meet the password policy', violations[0].params);

  await ctx.db.delete(schema.pendingRegistrations).where(lt(schema.pendingRegistrations.expiresAt, new Date()));
  const id = randomUUID();
  await ctx.db.insert(schema.pendingRegistrations).values({
    id,
    provider: 'local',
    categoryId: category.id,
    username: body.username,
    name: body.name,
    email: body.email,
    passwordHash: await hashPassword(body.password),
    expiresAt: new Date(Date.now() + TOKEN_LIFETIME.register * 1000),
  });
  return ctx.tokens.signSpecial('register', {
    provider: 'local',
    user_id: id,
    username: body.username,
    category_id: category.id,
    name: body.name,
    email: body.email,
  });
}

/** The code step: the code gives the group and role; the pending identity becomes a user. */
export async function registerWithCode(ctx: AppContext, bearer: string, code: string) {
  const claims = await ctx.tokens.verify(bearer);
  if (tokenType(claims) !== 'register' || !claims.user_id) throw unauthorized('invalid_token', 'Not a registration token');
  const [pending] = await ctx.db
    .select()
    .from(schema.pendingRegistrations)
    .where(eq(schema.pendingRegistrations.id, claims.user_id));
  if (!pending || pending.expiresAt < new Date()) throw unauthorized('session_expired', 'Registration session ended');
  const [reg] = await ctx.db.select().from(schema.registrationCodes).where(eq(schema.registrationCodes.code, code));
  if (!reg || reg.categoryId !== pending.categoryId) throw notFound('code_not_found', 'Registration code not found');
  const [category] = await ctx.db.select().from(schema.categories).where(eq(schema.categories.id, pending.categoryId));
  assertEmailDomainAllowed(category, pending.email);
  try {
    await ctx.db.transaction(async (tx) => {
      const [taken] = await tx
        .select({ id: schema.users.id })
        .from(schema.users)
        .where(and(eq(schema.users.categoryId, pending.categoryId), eq(schema.users.username, pending.username)));
      if (taken) throw conflict('user_exists', 'The user already exists');
      // Signing up creates a user: the group's and the category's `users` limits hold.
      const limit = await userLimitProblem(tx, reg.groupId, pending.categoryId);
      if (limit) throw precondition(limit.code, 'User limit reached', limit.params);
      await tx.insert(schema.users).values({
        id: pending.id,
        uid: pending.username,
        username: pending.username,
        provider: pending.provider,
        categoryId: pending.categoryId,
        groupId: reg.groupId,
        roleId: reg.roleId,
        name: pending.name,
        email: pending.email,
        passwordHash: pending.passwordHash,
        passwordLastUpdated: new Date(),
      });
      await tx.delete(schema.pendingRegistrations).where(eq(schema.pendingRegistrations.id, pending.id));
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw conflict('user_exists', 'The user already exists');
  }
  return { id: pending.id };
}
