import { eq, inArray } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { TAdminPasswordResetAnswer } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { ApiError, badRequest, forbidden } from '../../../http/errors';
import { authOf } from '../../../http/guard';
import { configuredPublicUrl } from '../../../http/base-url';
import { findPolicy, hashPassword } from '../../../auth/passwords';
import type { UserRow } from '../../../auth/sessions';
import { reachableUser } from './service';
import { oneTimePassword } from './one-time-password';

const LOCAL = 'local';
/** Passwords kept in the history (as the person's own change keeps them). */
const HISTORY_KEPT = 10;

/**
 * One-time passwords for classroom accounts: each local user the caller reaches gets a new generated
 * password (only its hash is stored), must change it at the next sign-in (`password-reset-required`),
 * loses their sessions, and has one audit entry. Every other user is refused with its reason; the batch
 * goes on. The passwords are in the answer only: never logged, never kept.
 */
export async function resetPasswords(
  ctx: AppContext,
  request: FastifyRequest,
  ids: string[],
  assertMayTouch: (user: UserRow) => void,
): Promise<TAdminPasswordResetAnswer> {
  const me = authOf(request).user.id;
  const refused: TAdminPasswordResetAnswer['refused'] = [];
  const users: UserRow[] = [];
  for (const id of [...new Set(ids)]) {
    let user: UserRow | undefined;
    try {
      user = await reachableUser(ctx.db, request, id);
      assertMayTouch(user);
      if (user.id === me) throw forbidden('password_reset_self', 'Change your own password in your profile');
      if (user.provider !== LOCAL) throw badRequest('password_reset_not_local', 'The directory holds this password');
      users.push(user);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      refused.push({ id, username: user?.username ?? null, name: user?.name ?? null, description_code: err.code });
    }
  }
  const categoryIds = [...new Set(users.map((u) => u.categoryId))];
  const categories = categoryIds.length
    ? await ctx.db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories).where(inArray(schema.categories.id, categoryIds))
    : [];
  const categoryName = new Map(categories.map((c) => [c.id, c.name]));
  // argon2 runs in libuv's pool: the batch's hashes side by side.
  const made = await Promise.all(
    users.map(async (user) => {
      const password = oneTimePassword(await findPolicy(ctx.db, user.categoryId, user.roleId), user.username);
      return { user, password, hash: await hashPassword(password) };
    }),
  );
  const reset: TAdminPasswordResetAnswer['reset'] = [];
  for (const { user, password, hash } of made) {
    await ctx.db.transaction(async (tx) => {
      await tx
        .update(schema.users)
        .set({
          passwordHash: hash,
          passwordHistory: [user.passwordHash, ...user.passwordHistory].filter((h): h is string => Boolean(h)).slice(0, HISTORY_KEPT),
          passwordLastUpdated: new Date(),
          passwordResetRequired: true,
        })
        .where(eq(schema.users.id, user.id));
      await audit(tx, auditActorOf(request), {
        action: 'user.password_reset', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId,
        detail: { must_change: true },
      });
    });
    // A password set by someone else: the person's sessions end now.
    await ctx.sessions.revokeAllOf(user.id);
    reset.push({ id: user.id, name: user.name, username: user.username, password, organisation: categoryName.get(user.categoryId) ?? user.categoryId });
  }
  const base = await configuredPublicUrl(ctx);
  return { reset, refused, sign_in_url: base ? `${base}/login` : null };
}
