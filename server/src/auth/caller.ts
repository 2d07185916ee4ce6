import { eq, sql, type SQL } from 'drizzle-orm';
import type { TLimits, TQuota } from '@vdi/contracts';
import { schema, type Db } from '../db';
import { readOnce, type ReadOnce } from '../db/read-once';
import type { UserRow } from './sessions';

// What the request gate learns about the caller in its one query, and primes for the checks of the
// same request: who is asking (the actor of every permission decision) and the quota levels of
// their group and category. Read once per request; the rules that use them live in modules/.

/** Who is asking: what every permission decision needs to know. */
export type Actor = { id: string; role: string; categoryId: string; groupIds: string[] };

export const actorOf: ReadOnce<UserRow, Actor> = readOnce(async (db: Db, user: UserRow) => {
  const secondary = await db
    .select({ id: schema.userSecondaryGroups.groupId })
    .from(schema.userSecondaryGroups)
    .where(eq(schema.userSecondaryGroups.userId, user.id));
  return actorWith(user, secondary.map((g) => g.id));
});

/** The actor of a user whose secondary groups are known. */
export const actorWith = (user: UserRow, secondaryGroupIds: string[]): Actor => ({
  id: user.id, role: user.roleId, categoryId: user.categoryId, groupIds: [user.groupId, ...secondaryGroupIds],
});

/** A user's group or category as quotas and views need it. */
export type Level = { name: string; quota: TQuota | null; limits: TLimits | null };
export type QuotaLevels = { group: Level | null; category: Level | null };

/** A group's or category's level as a JSON column of any query (the request guard reads the caller's in its own). */
export const levelSql = (t: typeof schema.groups | typeof schema.categories, id: SQL | string) =>
  sql<Level | null>`(select json_build_object('name', ${t.name}, 'quota', ${t.quota}, 'limits', ${t.limits}) from ${t} where ${t.id} = ${id})`;

/**
 * The quota, limits and name of the user's group and category: one query, shared by the checks of
 * the same request (they hold the same user row) for a second at most.
 */
export const quotaLevels: ReadOnce<Pick<UserRow, 'groupId' | 'categoryId'>, QuotaLevels> = readOnce(async (db: Db, user: Pick<UserRow, 'groupId' | 'categoryId'>) => {
  const [row] = await db
    .select({ group: levelSql(schema.groups, user.groupId), category: levelSql(schema.categories, user.categoryId) })
    .from(sql`(select 1) as one`);
  return { group: parseLevel(row?.group), category: parseLevel(row?.category) };
});

export const parseLevel = (raw: unknown): Level | null => (raw == null ? null : ((typeof raw === 'string' ? JSON.parse(raw) : raw) as Level));
