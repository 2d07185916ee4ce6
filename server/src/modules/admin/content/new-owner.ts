import type { FastifyRequest } from 'fastify';
import { and, eq, isNull } from 'drizzle-orm';
import { PRIVILEGED_ROLES } from '@vdi/contracts';
import { schema, type Db } from '../../../db';
import { badRequest, notFound } from '../../../http/errors';
import type { UserRow } from '../../../auth/sessions';
import { inReach } from '../people/scope';

/**
 * The person an item of the console goes to: a live account the caller reaches (a manager: their category's;
 * another is not found). Templates, media and deployments go only to those who may own them (`privileged`:
 * advanced users, managers, admins); a desktop to anyone.
 */
export async function newOwnerFor(db: Db, request: FastifyRequest, id: string, opts: { privileged: boolean }): Promise<UserRow> {
  const [user] = await db.select().from(schema.users).where(and(eq(schema.users.id, id), isNull(schema.users.deletedAt)));
  if (!user || !inReach(request, user.categoryId)) throw notFound('user_not_found', 'User not found');
  if (opts.privileged && !(PRIVILEGED_ROLES as readonly string[]).includes(user.roleId)) {
    throw badRequest('new_owner_role_not_allowed', 'The new owner must be an advanced user, a manager or an admin', { role: user.roleId });
  }
  return user;
}

/** The owner's columns of an item (its owner, and the owner's category and group). */
export const ownerColumnsOf = (user: UserRow) => ({ userId: user.id, categoryId: user.categoryId, groupId: user.groupId });
