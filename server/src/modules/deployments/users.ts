import { and, asc, eq, inArray, or, type SQL } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { Allowed } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';
import { choosableWhere, mayChoose, type Chooser } from '../access/permissions';

/** Who a deployment is for: groups and users (false = criterion unused, [] = everyone the choosers may pick). */
export type DeploymentAllowed = Pick<Allowed, 'groups' | 'users'>;

/**
 * The choosers of a deployment's users: its owner and, when someone else acts (a co-owner, a
 * manager, an admin), that person too — nobody gets a desktop that the caller could not have
 * picked themselves (their role and category), nor one outside the owner's scope.
 */
export const choosersOf = (owner: Chooser, caller: Chooser): Chooser[] => [owner, caller];

/**
 * The active users a deployment gives a desktop to: members of the groups (main or secondary),
 * the users named, each once, whom every chooser may pick. Sorted by name.
 */
export async function selectedUsers(db: Db, choosers: Chooser[], allowed: DeploymentAllowed): Promise<UserRow[]> {
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
    .where(and(eq(schema.users.active, true), choosableWhere(choosers, schema.users.categoryId), everyone ? undefined : or(...who)))
    .orderBy(asc(schema.users.name));
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

/** The groups and users of a stored list that `caller` could not pick (another category's, for a non-admin). */
export async function beyondReach(db: Db, caller: Chooser, allowed: Pick<Allowed, 'groups' | 'users'>): Promise<{ groups: string[]; users: string[] }> {
  if (caller.role === 'admin') return { groups: [], users: [] };
  const outside = async (table: typeof schema.groups | typeof schema.users, ids: string[] | false) => {
    if (!ids || ids.length === 0) return [];
    const rows = await db.select({ id: table.id, categoryId: table.categoryId }).from(table).where(inArray(table.id, ids));
    return rows.filter((r) => !mayChoose(caller, r)).map((r) => r.id);
  };
  return { groups: await outside(schema.groups, allowed.groups), users: await outside(schema.users, allowed.users) };
}

/** A caller's new list plus the names beyond their reach that it must keep. */
export function withBeyond(input: DeploymentAllowed, beyond: { groups: string[]; users: string[] }): DeploymentAllowed {
  // [] (everyone) already names everyone; false (unused) becomes the kept names.
  const add = (ids: string[] | false, extra: string[]) => (extra.length === 0 || (ids && ids.length === 0) ? ids : [...new Set([...(ids || []), ...extra])]);
  return { groups: add(input.groups, beyond.groups), users: add(input.users, beyond.users) };
}
