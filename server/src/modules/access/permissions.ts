import { and, eq, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
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

/** Who picks people or groups (to share with, to roll desktops out to, to co-own with): role and category. */
export type Chooser = { role: string; categoryId: string };
export const chooserOf = (user: Pick<UserRow, 'roleId' | 'categoryId'>): Chooser => ({ role: user.roleId, categoryId: user.categoryId });

/** Whom a chooser may pick: anyone for an admin, else the users and groups of their own category. */
export const mayChoose = (chooser: Chooser, target: { categoryId: string }) => chooser.role === 'admin' || target.categoryId === chooser.categoryId;

/**
 * The same as a condition on a category column, for every chooser at once (each narrows: when a
 * co-owner or a manager acts on someone else's deployment, both the owner and the caller must be
 * able to pick the person). Undefined when nobody limits (admins only).
 */
export const choosableWhere = (choosers: Chooser[], categoryColumn: PgColumn): SQL | undefined =>
  and(...choosers.filter((c) => c.role !== 'admin').map((c) => eq(categoryColumn, c.categoryId)));

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
