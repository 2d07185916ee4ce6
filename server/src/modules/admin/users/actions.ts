import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { notifyAdmins } from '../../../socket/admins';
import { authOf } from '../../../http/guard';
import type { UserRow } from '../../../auth/sessions';
import { recycleDomains } from '../../recycle-bin/recycle';
import { deleteUserRow } from '../../recycle-bin/purge';

/**
 * Enables or disables a user. Disabling ends every session of theirs at once: the socket of each
 * gets `logout` (the portal signs out) and the next call is refused (the guard reads `active`).
 */
export async function setUserActive(ctx: AppContext, request: FastifyRequest, user: UserRow, active: boolean) {
  await ctx.db.transaction(async (tx) => {
    await tx.update(schema.users).set({ active }).where(eq(schema.users.id, user.id));
    await audit(tx, auditActorOf(request), {
      action: active ? 'user.enable' : 'user.disable',
      objectType: 'user',
      objectId: user.id,
      objectName: user.username,
      categoryId: user.categoryId,
    });
  });
  // A disabled user is signed out everywhere at once.
  if (!active) await endSessions(ctx, request, user, 'user_disabled');
  notifyAdmins(ctx, user.categoryId, 'user_update', { id: user.id });
}

/** Ends every session of the user (their portal signs out within seconds), audited when there were any. */
async function endSessions(ctx: AppContext, request: FastifyRequest, user: UserRow, reason: string) {
  const ended = await ctx.sessions.revokeAllOf(user.id);
  if (ended.length === 0) return;
  await audit(ctx.db, auditActorOf(request), {
    action: 'auth.session_revoked',
    objectType: 'user',
    objectId: user.id,
    objectName: user.username,
    categoryId: user.categoryId,
    detail: { sessions: ended.length, reason },
  });
}

/**
 * Deletes a user to the recycle bin (item type `user`): the row stays, hidden and unable to sign in
 * (`deleted_at`), with their desktops and templates in one entry; a restore brings all back, a
 * purge of the entry deletes the user for good.
 */
export async function recycleUser(ctx: AppContext, request: FastifyRequest, user: UserRow) {
  const agent = authOf(request).user;
  await ctx.db.transaction(async (tx) => {
    // Disabled too: every list that picks people by `active` (deployment targets…) leaves them out.
    await tx.update(schema.users).set({ deletedAt: new Date(), active: false }).where(eq(schema.users.id, user.id));
    await audit(tx, auditActorOf(request), {
      action: 'user.delete',
      objectType: 'user',
      objectId: user.id,
      objectName: user.username,
      categoryId: user.categoryId,
    });
  });
  await endSessions(ctx, request, user, 'user_deleted');
  const domains = await ctx.db.select().from(schema.domains).where(eq(schema.domains.userId, user.id));
  const entry = await recycleDomains(ctx, {
    agent,
    owner: user,
    itemType: 'user',
    itemName: user.username,
    desktops: domains.filter((d) => d.kind === 'desktop'),
    templates: domains.filter((d) => d.kind === 'template'),
  });
  // Retention 0: gone at once.
  if (entry.permanent) await deleteUserRow(ctx, user.id);
  return entry;
}
