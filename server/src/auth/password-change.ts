import { eq } from 'drizzle-orm';
import type { AppContext } from '../context';
import { schema } from '../db';
import { badRequest } from '../http/errors';
import { findPolicy, hashPassword, policyViolations } from './passwords';
import type { UserRow } from './sessions';

const HISTORY_KEPT = 10;

/**
 * Checks the applicable policy, then stores the new hash and remembers the old one.
 * `beforeWrite` runs between the two (a one-time link is spent there: never burnt by a
 * password the policy refuses, never reusable once a password was set).
 */
export async function setPassword(ctx: AppContext, user: UserRow, password: string, beforeWrite?: () => Promise<void>) {
  const policy = await findPolicy(ctx.db, user.categoryId, user.roleId);
  const violations = await policyViolations(policy, password, user.username, [
    ...(user.passwordHash ? [user.passwordHash] : []),
    ...user.passwordHistory,
  ]);
  if (violations.length > 0) {
    const first = violations[0]!;
    throw badRequest(first.code, 'The password does not meet the password policy', {
      ...first.params,
      violations: violations.map((v) => v.code),
    });
  }
  await beforeWrite?.();
  const history = [...(user.passwordHash ? [user.passwordHash] : []), ...user.passwordHistory].slice(0, HISTORY_KEPT);
  await ctx.db
    .update(schema.users)
    .set({
      passwordHash: await hashPassword(password),
      passwordHistory: history,
      passwordLastUpdated: new Date(),
      passwordResetRequired: false,
    })
    .where(eq(schema.users.id, user.id));
}
