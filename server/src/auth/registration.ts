import { randomUUID } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import type { z } from 'zod';
import type { ZSignupBody } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import { badRequest, conflict, forbidden, notFound } from '../http/errors';
import { findPolicy, hashPassword, policyViolations } from './passwords';
import { TOKEN_LIFETIME } from './tokens';

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
