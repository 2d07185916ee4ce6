import { and, eq, ne, sql } from 'drizzle-orm';
import type { AppContext } from '../context';
import { schema } from '../db';
import { conflict, forbidden, precondition, unauthorized } from '../http/errors';
import { setPassword } from './password-change';
import { findUserById } from './passwords';
import { spendToken } from './one-time';
import { emailDomainAllowed } from './registration';
import { tokenType } from './tokens';
import { safeError } from '../http/log';
import { mailEnabled, sendMail } from '../mail/mailer';
import { resetMail, verificationMail } from '../mail/templates';
import { usersData } from '../modules/user/update';

const requireMail = async (ctx: AppContext) => {
  if (!(await mailEnabled(ctx))) throw precondition('email_not_configured', 'E-mail is not configured on this server');
};

async function userFromToken(ctx: AppContext, bearer: string, allowed: string[]) {
  const claims = await ctx.tokens.verify(bearer);
  const type = tokenType(claims);
  if (!allowed.includes(type)) throw unauthorized('invalid_token', `A ${type} token cannot do this`);
  const userId = type === 'login' ? claims.data?.user_id : claims.user_id;
  if (type === 'login') await ctx.sessions.require(claims);
  const user = userId ? await findUserById(ctx.db, userId) : undefined;
  if (!user) throw unauthorized('user_not_found', 'User not found');
  if (!user.active) throw forbidden('user_disabled', 'disabled user');
  return { claims, type, user };
}

/**
 * Sends a reset link when the address belongs to an active local user; answers the same either way.
 * `ip` is the client's address: the limits are per (client, e-mail) and per client, so nobody can stop
 * the owner asking from elsewhere; one mailbox gets a bounded number of mails whoever asks.
 */
export async function forgotPassword(ctx: AppContext, categoryId: string, email: string, baseUrl: string, ip: string) {
  await requireMail(ctx);
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
    await mailResetLink(ctx, user, baseUrl);
  } catch (err) {
    // The same answer as for an unknown address (a refused send would tell that this one exists);
    // the failure goes to the log for whoever runs the mail server.
    ctx.log.warn({ err: safeError(err) }, 'the password-reset mail was not sent');
  }
}

/** Mails the user a one-time link to set a new password (428 when mail is off, 504 when the send fails). */
export async function mailResetLink(ctx: AppContext, user: Parameters<typeof resetMail>[0] & { id: string; email: string }, baseUrl: string) {
  const token = await ctx.tokens.signSpecial('password-reset', { user_id: user.id });
  await sendMail(ctx, resetMail(user, user.email, `${baseUrl}/reset-password?token=${token}`));
}

export async function resetPassword(ctx: AppContext, bearer: string, password: string) {
  const { claims, type, user } = await userFromToken(ctx, bearer, ['password-reset', 'password-reset-required']);
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

export async function requestEmailVerification(ctx: AppContext, bearer: string, email: string, baseUrl: string) {
  await requireMail(ctx);
  const { user } = await userFromToken(ctx, bearer, ['email-verification-required', 'login']);
  const [category] = await ctx.db.select().from(schema.categories).where(eq(schema.categories.id, user.categoryId));
  if (category && !emailDomainAllowed(category.allowedEmailDomains, email)) {
    throw forbidden('email_domain_not_allowed', 'E-mail domain not allowed in this category');
  }
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
  await sendMail(ctx, verificationMail(user, email, `${baseUrl}/verify-email?token=${token}`));
}

export async function verifyEmail(ctx: AppContext, bearer: string) {
  const { claims, user } = await userFromToken(ctx, bearer, ['email-verification']);
  if (!claims.email) throw unauthorized('invalid_token', 'Invalid token');
  await spendToken(ctx.db, claims.jti, claims.exp);
  const [updated] = await ctx.db
    .update(schema.users)
    .set({
      email: claims.email,
      emailVerifiedAt: new Date(),
      // The pending address is settled when it is the one verified; a newer pending one stays pending.
      emailPending: sql`case when lower(${schema.users.emailPending}) = ${claims.email.toLowerCase()} then null else ${schema.users.emailPending} end`,
    })
    .where(eq(schema.users.id, user.id))
    .returning();
  if (updated) ctx.bus.toUser(user.id, 'users_data', usersData(updated));
}
