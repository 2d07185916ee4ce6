import { sql } from 'drizzle-orm';
import type { TLimits, TQuota } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import { readOnce } from '../../db/read-once';
import type { UserRow } from '../../auth/sessions';

/** A user's group or category as quotas and views need it. */
export type Level = { name: string; quota: TQuota | null; limits: TLimits | null };
export type QuotaLevels = { group: Level | null; category: Level | null };

const levelOf = (t: typeof schema.groups | typeof schema.categories, id: string) =>
  sql<Level | null>`(select json_build_object('name', ${t.name}, 'quota', ${t.quota}, 'limits', ${t.limits}) from ${t} where ${t.id} = ${id})`;

/**
 * The quota, limits and name of the user's group and category: one query, shared by the checks of
 * the same request (they hold the same user row) for a second at most.
 */
export const quotaLevels: (db: Db, user: Pick<UserRow, 'groupId' | 'categoryId'>) => Promise<QuotaLevels> = readOnce(async (db: Db, user: Pick<UserRow, 'groupId' | 'categoryId'>) => {
  const [row] = await db
    .select({ group: levelOf(schema.groups, user.groupId), category: levelOf(schema.categories, user.categoryId) })
    .from(sql`(select 1) as one`);
  return { group: parse(row?.group), category: parse(row?.category) };
});

const parse = (raw: unknown): Level | null => (raw == null ? null : ((typeof raw === 'string' ? JSON.parse(raw) : raw) as Level));
