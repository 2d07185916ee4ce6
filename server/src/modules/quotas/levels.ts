import { sql, type SQL } from 'drizzle-orm';
import type { TLimits, TQuota } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import { readOnce, type ReadOnce } from '../../db/read-once';
import type { UserRow } from '../../auth/sessions';

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
