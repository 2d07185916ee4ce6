import { and, eq, ne, sql } from 'drizzle-orm';
import type { TUserUpdate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { badRequest, conflict, forbidden, precondition } from '../../http/errors';
import { setPassword } from '../../auth/password-change';
import { verifyPassword } from '../../auth/passwords';
import { emailDomainAllowed } from '../../auth/registration';
import type { UserRow } from '../../auth/sessions';
import { mailEnabled, sendMail } from '../../mail/mailer';
import { emailChangeNotice, verificationMail } from '../../mail/templates';
import { audit, type AuditActor as Actor } from '../../audit/record';

/**
 * `PUT /user` (reference §2.15): `{password, current_password}` changes the password under the policy;
 * `{name, email}` renames and/or asks for a new address. A new address is only *pending* until the link
 * mailed to it is followed (`verifyEmail`); the mail goes out before anything is stored, so an SMTP
 * failure changes nothing.
 */
export async function updateUser(ctx: AppContext, actor: Actor, user: UserRow, sessionId: string, body: TUserUpdate, baseUrl: string) {
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
  if (body.email !== undefined) await requestEmailChange(ctx, user, body.email, baseUrl);
  if (body.name !== undefined && body.name !== user.name) {
    await ctx.db.update(schema.users).set({ name: body.name }).where(eq(schema.users.id, user.id));
  }
  if (body.email !== undefined || body.name !== undefined) {
    const [fresh] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, user.id));
    if (fresh) ctx.bus.toUser(user.id, 'users_data', usersData(fresh));
  }
  return {};
}

export const usersData = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  email_verified: u.emailVerifiedAt ? Math.floor(u.emailVerifiedAt.getTime() / 1000) : null,
  email_pending: u.emailPending,
  name: u.name,
});

async function requestEmailChange(ctx: AppContext, user: UserRow, email: string, baseUrl: string) {
  if (!(await mailEnabled(ctx))) throw precondition('email_not_configured', 'E-mail is not configured on this server');
  if (email.toLowerCase() === user.email.toLowerCase() && user.emailVerifiedAt) {
    throw badRequest('email_unchanged', 'That is already your verified address');
  }
  const [category] = await ctx.db.select().from(schema.categories).where(eq(schema.categories.id, user.categoryId));
  if (category && !emailDomainAllowed(category.allowedEmailDomains, email)) {
    throw forbidden('email_domain_not_allowed', 'E-mail domain not allowed in this category');
  }
  const [other] = await ctx.db
    .select({ id: schema.users.id })
    .from(schema.users)
    .where(and(eq(schema.users.categoryId, user.categoryId), ne(schema.users.id, user.id), sql`lower(${schema.users.email}) = ${email.toLowerCase()}`));
  if (other) throw conflict('email_already_in_use', 'That e-mail address is already in use');
  const token = await ctx.tokens.signSpecial('email-verification', { user_id: user.id, email });
  await sendMail(ctx, verificationMail(user, email, `${baseUrl}/verify-email?token=${token}`));
  await ctx.db.update(schema.users).set({ emailPending: email }).where(eq(schema.users.id, user.id));
  // The notice to the old address is informative: its failure must not undo the request.
  if (user.email && user.email.toLowerCase() !== email.toLowerCase()) {
    await sendMail(ctx, emailChangeNotice(user, user.email, email)).catch(() => undefined);
  }
}
