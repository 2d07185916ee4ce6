import { eq } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { Allowed } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';

/** Who is asking: what every permission decision needs to know. */
export type Actor = { id: string; role: string; categoryId: string; groupIds: string[] };

export async function actorOf(db: Db, user: UserRow): Promise<Actor> {
  const secondary = await db
    .select({ id: schema.userSecondaryGroups.groupId })
    .from(schema.userSecondaryGroups)
    .where(eq(schema.userSecondaryGroups.userId, user.id));
  return { id: user.id, role: user.roleId, categoryId: user.categoryId, groupIds: [user.groupId, ...secondary.map((g) => g.id)] };
}

type Owned = { userId: string; categoryId: string };

/** Owner, admin, or a manager of the owner's category: may act on the item. Nobody else. */
export function canManage(actor: Actor, item: Owned): boolean {
  if (actor.role === 'admin') return true;
  if (item.userId === actor.id) return true;
  return actor.role === 'manager' && item.categoryId === actor.categoryId;
}

/**
 * May use a shared item (template, media). For each criterion of `allowed`: false = not used,
 * [] = everyone (groups and users: everyone of the owner's category), a list = those ids.
 */
export function isAllowed(actor: Actor, item: Owned & { allowed: Allowed }): boolean {
  if (canManage(actor, item)) return true;
  const { roles, categories, groups, users } = item.allowed;
  const sameCategory = actor.categoryId === item.categoryId;
  if (roles !== false && (roles.length === 0 || roles.includes(actor.role))) return true;
  if (categories !== false && (categories.length === 0 || categories.includes(actor.categoryId))) return true;
  if (groups !== false && (groups.length === 0 ? sameCategory : groups.some((g) => actor.groupIds.includes(g)))) return true;
  if (users !== false && (users.length === 0 ? sameCategory : users.includes(actor.id))) return true;
  return false;
}

export const NOT_SHARED: Allowed = { roles: false, categories: false, groups: false, users: false };
export const SHARED_WITH_EVERYONE: Allowed = { roles: [], categories: false, groups: false, users: false };
