import { and, asc, eq, inArray, or, type SQL } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { Allowed } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';
import { badRequest } from '../../http/errors';

/** Who a deployment is for: groups and users (false = criterion unused, [] = everyone of the owner's scope). */
export type DeploymentAllowed = Pick<Allowed, 'groups' | 'users'>;

/** The owner's scope: everyone for an admin, else the owner's category (as the reference selects users). */
const scopeOf = (owner: Pick<UserRow, 'roleId' | 'categoryId'>): SQL | undefined =>
  owner.roleId === 'admin' ? undefined : eq(schema.users.categoryId, owner.categoryId);

/**
 * The active users a deployment gives a desktop to: members of the groups (main or secondary),
 * the users named, each once, within the owner's scope. Sorted by name.
 */
export async function selectedUsers(db: Db, owner: Pick<UserRow, 'roleId' | 'categoryId'>, allowed: DeploymentAllowed): Promise<UserRow[]> {
  const { groups, users } = allowed;
  if (groups === false && users === false) return [];
  const everyone = (groups !== false && groups.length === 0) || (users !== false && users.length === 0);
  const who: SQL[] = [];
  if (!everyone) {
    if (groups !== false && groups.length > 0) {
      const secondary = await db
        .select({ id: schema.userSecondaryGroups.userId })
        .from(schema.userSecondaryGroups)
        .where(inArray(schema.userSecondaryGroups.groupId, groups));
      who.push(inArray(schema.users.groupId, groups));
      if (secondary.length) who.push(inArray(schema.users.id, secondary.map((s) => s.id)));
    }
    if (users !== false && users.length > 0) who.push(inArray(schema.users.id, users));
    if (who.length === 0) return [];
  }
  return db
    .select()
    .from(schema.users)
    .where(and(eq(schema.users.active, true), scopeOf(owner), everyone ? undefined : or(...who)))
    .orderBy(asc(schema.users.name));
}

/** Every group and user named must exist within the owner's scope (a typo is an error, not silently nobody). */
export async function assertKnown(db: Db, owner: Pick<UserRow, 'roleId' | 'categoryId'>, allowed: DeploymentAllowed) {
  const admin = owner.roleId === 'admin';
  if (allowed.groups && allowed.groups.length) {
    const ids = [...new Set(allowed.groups)];
    const found = await db.select({ id: schema.groups.id }).from(schema.groups)
      .where(and(inArray(schema.groups.id, ids), admin ? undefined : eq(schema.groups.categoryId, owner.categoryId)));
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw badRequest('bad_request', `Unknown groups: ${missing.join(', ')}`, { groups: missing });
  }
  if (allowed.users && allowed.users.length) {
    const ids = [...new Set(allowed.users)];
    const found = await db.select({ id: schema.users.id }).from(schema.users)
      .where(and(inArray(schema.users.id, ids), scopeOf(owner)));
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw badRequest('user_not_found', `Unknown users: ${missing.join(', ')}`, { users: missing });
  }
}

/** The allowed value as stored: roles and categories unused. */
export const storedAllowed = (a: DeploymentAllowed): Allowed => ({ roles: false, categories: false, groups: a.groups, users: a.users });

/** Names for the edit form: [{id, name}] per criterion, false when unused. */
export async function allowedNames(db: Db, a: Allowed) {
  const named = async (table: typeof schema.groups | typeof schema.users, ids: string[] | false) => {
    if (ids === false) return false as const;
    if (ids.length === 0) return [];
    const rows = await db.select({ id: table.id, name: table.name }).from(table).where(inArray(table.id, ids));
    return ids.map((id) => ({ id, name: rows.find((r) => r.id === id)?.name ?? id }));
  };
  return { roles: false as const, categories: false as const, groups: await named(schema.groups, a.groups), users: await named(schema.users, a.users) };
}
