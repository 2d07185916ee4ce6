import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { ApiError, conflict, notFound, precondition, unauthorized } from '../../http/errors';
import { assertEmailDomainAllowed } from '../../auth/registration';
import { tokenType } from '../../auth/tokens';
import { userLimitProblem } from '../quotas/users';

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
        .where(
          pending.uid
            ? // a person of a directory or identity provider is one account per (category, kind, uid)
              and(eq(schema.users.categoryId, pending.categoryId), eq(schema.users.provider, pending.provider), eq(schema.users.uid, pending.uid))
            : and(eq(schema.users.categoryId, pending.categoryId), eq(schema.users.username, pending.username)),
        );
      if (taken) throw conflict('user_exists', 'The user already exists');
      // Signing up creates a user: the group's and the category's `users` limits hold.
      const limit = await userLimitProblem(tx, reg.groupId, pending.categoryId);
      if (limit) throw precondition(limit.code, 'User limit reached', limit.params);
      await tx.insert(schema.users).values({
        id: pending.id,
        uid: pending.uid ?? pending.username,
        username: pending.username,
        provider: pending.provider,
        categoryId: pending.categoryId,
        groupId: reg.groupId,
        roleId: reg.roleId,
        name: pending.name,
        email: pending.email,
        passwordHash: pending.passwordHash,
        passwordLastUpdated: pending.passwordHash ? new Date() : null,
        photo: pending.photo,
        identityProviderId: pending.identityProviderId,
        emailVerifiedAt: pending.uid && pending.email ? new Date() : null,
      });
      await tx.delete(schema.pendingRegistrations).where(eq(schema.pendingRegistrations.id, pending.id));
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw conflict('user_exists', 'The user already exists');
  }
  return { id: pending.id };
}
