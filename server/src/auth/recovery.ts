import { createHash } from 'node:crypto';
import { and, eq, ne, sql } from 'drizzle-orm';
import type { AppContext } from '../context';
import { schema } from '../db';
import { badRequest, conflict, forbidden, precondition, unauthorized } from '../http/errors';
import { setPassword } from './password-change';
import { findUserById, verifyPassword } from './passwords';
import { spendToken } from './one-time';
import { assertEmailDomainAllowed } from './registration';
import { tokenType } from './tokens';
import { safeError } from '../http/log';
import { configuredPublicUrl, requirePublicUrl } from '../http/base-url';
import { mailEnabled, sendMail } from '../mail/mailer';
import { emailChangeNotice, resetMail, verificationMail } from '../mail/templates';
import type { UserRow } from './sessions';

/**
 * Where the links of a mail point, once mail can go out: the configured public address (428
 * `email_not_configured` without a mail server, `public_url_not_configured` without the address).
 */
export async function linkMailBase(ctx: AppContext): Promise<string> {
  if (!(await mailEnabled(ctx))) throw precondition('email_not_configured', 'E-mail is not configured on this server');
  return requirePublicUrl(ctx);
}

/** Whether mails with links (password reset, e-mail verification) can be sent: a mail server and a public address. */
export async function linkMailsPossible(ctx: AppContext): Promise<boolean> {
  const [mail, url] = await Promise.all([mailEnabled(ctx), configuredPublicUrl(ctx)]);
  return mail && url !== null;
}

/**
 * A stamp of the password a reset link replaces (a digest of its salted hash): every password change,
 * by a reset, the person's profile or an admin, changes the hash and so ends every earlier link.
 */
const passwordStamp = (user: Pick<UserRow, 'passwordHash'>) =>
  createHash('sha256').update(`password-reset:${user.passwordHash ?? ''}`).digest('base64url').slice(0, 22);

async function userFromToken(ctx: AppContext, bearer: string, allowed: string[]) {
  const claims = await ctx.tokens.verify(bearer);
  const type = tokenType(claims);
  if (!allowed.includes(type)) throw unauthorized('invalid_token', `A ${type} token cannot do this`);
  const userId = type === 'login' ? claims.data?.user_id : claims.user_id;
  if (type === 'login') await ctx.sessions.require(claims);
  const user = userId ? await findUserById(ctx.db, userId) : undefined;
  if (!user) throw unauthorized('user_not_found', 'User not found');
  if (!user.active) throw forbidden('user_disabled', 'disabled user');
  if (type === 'password-reset' && claims.password_stamp !== passwordStamp(user)) {
    throw unauthorized('invalid_token', 'This link was replaced by a password change');
  }
  return { claims, type, user };
}

/**
 * Sends a reset link when the address belongs to an active local user; answers the same either way.
 * `ip` is the client's address: the limits are per (client, e-mail) and per client, so nobody can stop
 * the owner asking from elsewhere; one mailbox gets a bounded number of mails whoever asks.
 */
export async function forgotPassword(ctx: AppContext, categoryId: string, email: string, ip: string) {
  const baseUrl = await linkMailBase(ctx);
  if (!(await ctx.forgotPasswordThrottle.request(ip, email))) return;
  const [user] = await ctx.db
    .select()
    .from(schema.users)
    .where(
      and(
        eq(schema.users.categoryId, categoryId),
        eq(schema.users.provider, 'local'),
        eq(schema.users.active, true),
        sql`lower(${schema.users.email}) = ${email.toLowerCase()}`,
      ),
    );
  if (!user) return;
  try {
    await sendResetLink(ctx, user, baseUrl);
  } catch (err) {
    // The same answer as for an unknown address (a refused send would tell that this one exists);
    // the failure goes to the log for whoever runs the mail server.
    ctx.log.warn({ err: safeError(err) }, 'the password-reset mail was not sent');
  }
}

type ResetMailUser = Parameters<typeof resetMail>[0] & Pick<UserRow, 'id' | 'email' | 'passwordHash'>;

/** Mails the user a one-time link to set a new password (428 when mail is off or no public address is set, 504 when the send fails). */
export async function mailResetLink(ctx: AppContext, user: ResetMailUser) {
  await sendResetLink(ctx, user, await linkMailBase(ctx));
}

async function sendResetLink(ctx: AppContext, user: ResetMailUser, baseUrl: string) {
  const token = await ctx.tokens.signSpecial('password-reset', { user_id: user.id, password_stamp: passwordStamp(user) });
  await sendMail(ctx, resetMail(user, user.email, `${baseUrl}/reset-password?token=${token}`));
}

export async function resetPassword(ctx: AppContext, bearer: string, password: string) {
  const { claims, type, user } = await userFromToken(ctx, bearer, ['password-reset', 'password-reset-required']);
  // Told to change it (a one-time password an admin handed out): the same one again is no change, whatever the policy keeps.
  if (type === 'password-reset-required' && (await verifyPassword(user.passwordHash, password))) {
    throw badRequest('password_unchanged', 'Choose a password different from the current one');
  }
  await setPassword(ctx, user, password, async () => {
    if (type === 'password-reset') await spendToken(ctx.db, claims.jti, claims.exp);
  });
  // A reset password ends the sessions that used the old one.
  const ended = await ctx.sessions.revokeAllOf(user.id);
  return { user, ended: ended.length };
}

export async function acknowledgeDisclaimer(ctx: AppContext, bearer: string) {
  const { user } = await userFromToken(ctx, bearer, ['disclaimer-acknowledgement-required']);
  await ctx.db.update(schema.users).set({ disclaimerAcknowledged: true }).where(eq(schema.users.id, user.id));
}

export async function requestEmailVerification(ctx: AppContext, bearer: string, email: string) {
  const baseUrl = await linkMailBase(ctx);
  const { user } = await userFromToken(ctx, bearer, ['email-verification-required', 'login']);
  await mailVerificationLink(ctx, user, email, baseUrl);
}

/**
 * Mails `email` a link that makes it the user's address, and makes it the pending one: only the link
 * of the address now pending verifies (an earlier request's link is superseded). The mail goes out
 * before anything is stored, so an SMTP failure changes nothing.
 */
export async function mailVerificationLink(ctx: AppContext, user: UserRow, email: string, baseUrl?: string) {
  const base = baseUrl ?? (await linkMailBase(ctx));
  const [category] = await ctx.db.select().from(schema.categories).where(eq(schema.categories.id, user.categoryId));
  assertEmailDomainAllowed(category, email);
  const [other] = await ctx.db
    .select({ id: schema.users.id })
    .from(schema.users)
    .where(
      and(
        eq(schema.users.categoryId, user.categoryId),
        ne(schema.users.id, user.id),
        sql`lower(${schema.users.email}) = ${email.toLowerCase()}`,
      ),
    );
  if (other) throw conflict('email_already_in_use', 'That e-mail address is already in use');
  const token = await ctx.tokens.signSpecial('email-verification', { user_id: user.id, email });
  await sendMail(ctx, verificationMail(user, email, `${base}/verify-email?token=${token}`));
  await ctx.db.update(schema.users).set({ emailPending: email }).where(eq(schema.users.id, user.id));
}

/**
 * A signed-in person's change of address (PUT /user): the checks of mailVerificationLink, and not
 * the address already verified; the old address is told (informative: its failure undoes nothing).
 */
export async function requestEmailChange(ctx: AppContext, user: UserRow, email: string) {
  if (email.toLowerCase() === user.email.toLowerCase() && user.emailVerifiedAt) {
    throw badRequest('email_unchanged', 'That is already your verified address');
  }
  await mailVerificationLink(ctx, user, email);
  if (user.email && user.email.toLowerCase() !== email.toLowerCase()) {
    await sendMail(ctx, emailChangeNotice(user, user.email, email)).catch(() => undefined);
  }
}

/** The `users_data` event: a person's own name and addresses, live. */
export const usersData = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  email_verified: u.emailVerifiedAt ? Math.floor(u.emailVerifiedAt.getTime() / 1000) : null,
  email_pending: u.emailPending,
  name: u.name,
});

export async function verifyEmail(ctx: AppContext, bearer: string) {
  const { claims, user } = await userFromToken(ctx, bearer, ['email-verification']);
  // Only the link of the address now pending verifies: a newer request (or a verified one) supersedes it.
  const pending = (address: string) => and(eq(schema.users.id, user.id), sql`lower(${schema.users.emailPending}) = ${address.toLowerCase()}`);
  if (!claims.email || user.emailPending?.toLowerCase() !== claims.email.toLowerCase()) {
    throw unauthorized('invalid_token', 'This link is for an address that is no longer the one waiting for verification');
  }
  await spendToken(ctx.db, claims.jti, claims.exp);
  const [updated] = await ctx.db
    .update(schema.users)
    .set({ email: claims.email, emailVerifiedAt: new Date(), emailPending: null })
    .where(pending(claims.email))
    .returning();
  if (!updated) throw unauthorized('invalid_token', 'This link is for an address that is no longer the one waiting for verification');
  if (updated) ctx.bus.toUser(user.id, 'users_data', usersData(updated));
}
