import { sql, type SQL } from 'drizzle-orm';
import { QUOTA_FIELDS, type TAppliedQuota, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';

/** The FROM of a query made only of scalar subqueries. */
export const ONE_ROW = sql`(select 1) as one`;

/**
 * A list of constants of the code (statuses…) written into the SQL text, not sent as parameters:
 * fewer parameters make a cheaper query to parse and plan. Never for values from a request.
 */
export const constantList = (values: readonly string[]): SQL => sql.raw(values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', '));

/** The user a usage part counts for: a bound id, or an SQL expression naming one. */
export type UserIdSql = string | SQL;

/** A `json` value as the driver hands it over: parsed already, or its text. */
export const fromJson = <T>(raw: unknown): T => (typeof raw === 'string' ? JSON.parse(raw) : raw) as T;

/** The applied quota is the first set of user, group, category (reference §6.1). */
export function pickAppliedQuota(user: Pick<UserRow, 'quota'>, groupQuota: TQuota | null | undefined, categoryQuota: TQuota | null | undefined): TAppliedQuota {
  if (user.quota) return { quota: user.quota, restriction_applied: 'user_quota' };
  if (groupQuota) return { quota: groupQuota, restriction_applied: 'group_quota' };
  if (categoryQuota) return { quota: categoryQuota, restriction_applied: 'category_quota' };
  return { quota: false, restriction_applied: 'user_quota' };
}

/** The applied quota of a user: none, or one query for their group's and category's. */
export async function appliedQuota(db: Db, user: UserRow): Promise<TAppliedQuota> {
  if (user.quota) return pickAppliedQuota(user, null, null);
  const [row] = await db
    .select({
      group: sql`(select ${schema.groups.quota} from ${schema.groups} where ${schema.groups.id} = ${user.groupId})`.mapWith(schema.groups.quota),
      category: sql`(select ${schema.categories.quota} from ${schema.categories} where ${schema.categories.id} = ${user.categoryId})`.mapWith(
        schema.categories.quota,
      ),
    })
    .from(ONE_ROW);
  return pickAppliedQuota(user, row?.group, row?.category);
}

export const emptyUsage = (): TQuota => Object.fromEntries(QUOTA_FIELDS.map((f) => [f, 0])) as TQuota;

/**
 * What a user consumes. Each area that owns consumable things (desktops, templates, media,
 * storage, deployments) defines its part with `usagePart` and registers it; the sum is the `used`
 * of the profile. A part is one SQL aggregate (count/sum) over the user's rows, so that every part
 * of `used` comes from a single query (`usageOf`, or inside the user view's query: `usageSql`).
 */
export type UsagePartDefinition<R> = {
  /** A query answering one row of aggregates of the user `userId` (its columns are what `fields` reads). */
  sql: (userId: UserIdSql) => SQL;
  /** The part of `used` from that row (numbers as JSON numbers). */
  fields: (row: R) => Partial<TQuota>;
};
export type UsageContributor = UsagePartDefinition<never> & ((db: Db, userId: string) => Promise<Partial<TQuota>>);

/** The row of a part as one `json` column (its columns by name). */
const partJson = (part: UsagePartDefinition<never>, userId: UserIdSql) => sql`(select row_to_json(p) from (${part.sql(userId)}) p)`;

/** A usage part, also callable alone: `part(db, userId)` reads only it, in one query. */
export function usagePart<R>(definition: UsagePartDefinition<R>): UsageContributor {
  const read = async (db: Db, userId: string) => {
    const [row] = await db.select({ part: partJson(definition as UsagePartDefinition<never>, userId) }).from(ONE_ROW);
    return definition.fields(fromJson<R>(row?.part) ?? ({} as R));
  };
  return Object.assign(read, definition) as UsageContributor;
}

const contributors: UsageContributor[] = [];
export const registerUsageContributor = (c: UsageContributor) => void contributors.push(c);

/** Every registered part of a user's usage as one `json` column (an array, one object per part); read it with `usageFrom`. */
export const usageSql = (userId: UserIdSql): SQL<unknown> =>
  contributors.length === 0 ? sql`'[]'::json` : sql`json_build_array(${sql.join(contributors.map((c) => partJson(c, userId)), sql`, `)})`;

/** The `used` of a profile from the column `usageSql` selected. */
export function usageFrom(raw: unknown): TQuota {
  const rows = fromJson<unknown[]>(raw) ?? [];
  const used = emptyUsage();
  contributors.forEach((c, i) => {
    for (const [k, v] of Object.entries(c.fields((rows[i] ?? {}) as never))) used[k as keyof TQuota] += v ?? 0;
  });
  return used;
}

/** What a user consumes, in one query. */
export async function usageOf(db: Db, userId: string): Promise<TQuota> {
  const [row] = await db.select({ used: usageSql(userId) }).from(ONE_ROW);
  return usageFrom(row?.used);
}
