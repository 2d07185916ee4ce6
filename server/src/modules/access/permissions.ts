import { and, eq, inArray, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { Allowed } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';
import type { Actor } from '../../auth/caller';
import { badRequest } from '../../http/errors';

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

/**
 * The one rule of what a role reaches beyond one's own: an admin every category, a manager their
 * own category, nobody else any. The portal's checks (canManage) and the console's (assertReach,
 * the console's lists bound by boundCategory) all decide with it.
 */
export function reachesCategory(who: Pick<Actor, 'role' | 'categoryId'>, categoryId: string): boolean {
  return who.role === 'admin' || (who.role === 'manager' && who.categoryId === categoryId);
}

/** Owner, admin, or a manager of the owner's category: may act on the item. Nobody else. */
export function canManage(actor: Actor, item: Owned): boolean {
  return item.userId === actor.id || reachesCategory(actor, item.categoryId);
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

/**
 * An `allowed` list (who may use a template or media, who gets a deployment's desktops) as
 * chosen by someone: roles and categories reach beyond one category, so they are for admins
 * only; every group and user named must exist and be one every chooser may pick. One out of
 * reach is answered as unknown (400), so that it cannot be probed.
 */
export async function assertChoosable(db: Db, choosers: Chooser[], allowed: Partial<Pick<Allowed, 'roles' | 'categories' | 'groups' | 'users'>>) {
  const admins = choosers.every((c) => c.role === 'admin');
  for (const key of ['roles', 'categories'] as const) {
    const v = allowed[key];
    if (v !== undefined && v !== false && !admins) throw badRequest('bad_request', `Only administrators share by ${key}`, { [key]: v });
  }
  if (allowed.groups && allowed.groups.length) {
    const ids = [...new Set(allowed.groups)];
    const found = await db.select({ id: schema.groups.id }).from(schema.groups)
      .where(and(inArray(schema.groups.id, ids), choosableWhere(choosers, schema.groups.categoryId)));
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw badRequest('bad_request', `Unknown groups: ${missing.join(', ')}`, { groups: missing });
  }
  if (allowed.users && allowed.users.length) {
    const ids = [...new Set(allowed.users)];
    const found = await db.select({ id: schema.users.id }).from(schema.users)
      .where(and(inArray(schema.users.id, ids), choosableWhere(choosers, schema.users.categoryId)));
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw badRequest('user_not_found', `Unknown users: ${missing.join(', ')}`, { users: missing });
  }
}

export const NOT_SHARED: Allowed = { roles: false, categories: false, groups: false, users: false };
export const SHARED_WITH_EVERYONE: Allowed = { roles: [], categories: false, groups: false, users: false };
