import { eq } from 'drizzle-orm';
import type { TUserUpdate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { badRequest, forbidden } from '../../http/errors';
import { setPassword } from '../../auth/password-change';
import { verifyPassword } from '../../auth/passwords';
import { requestEmailChange, usersData } from '../../auth/recovery';
import type { UserRow } from '../../auth/sessions';
import { audit, type AuditActor as Actor } from '../../audit/record';

/**
 * `PUT /user` (reference §2.15): `{password, current_password}` changes the password under the policy;
 * `{name, email}` renames and/or asks for a new address. A new address is only *pending* until the link
 * mailed to it is followed (`verifyEmail`); the mail goes out before anything is stored, so an SMTP
 * failure changes nothing.
 */
export async function updateUser(ctx: AppContext, actor: Actor, user: UserRow, sessionId: string, body: TUserUpdate) {
  if ('password' in body) {
    if (user.provider !== 'local') throw forbidden('forbidden', 'Only local accounts have a password here');
    if (!(await verifyPassword(user.passwordHash, body.current_password))) {
      throw badRequest('password_wrong_current', 'The current password is wrong');
    }
    if (await verifyPassword(user.passwordHash, body.password)) {
      throw badRequest('password_same_as_current', 'The new password is the current one');
    }
    await setPassword(ctx, user, body.password);
    // Other sessions signed in with the old password end; this one goes on.
    await ctx.sessions.revokeAllOf(user.id, sessionId);
    await audit(ctx.db, actor, { action: 'user.password', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });
    return {};
  }
  if (body.email !== undefined) await requestEmailChange(ctx, user, body.email);
  if (body.name !== undefined && body.name !== user.name) {
    await ctx.db.update(schema.users).set({ name: body.name }).where(eq(schema.users.id, user.id));
  }
  if (body.email !== undefined || body.name !== undefined) {
    const [fresh] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, user.id));
    if (fresh) ctx.bus.toUser(user.id, 'users_data', usersData(fresh));
  }
  return {};
}

