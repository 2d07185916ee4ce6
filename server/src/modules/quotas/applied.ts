import { sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { QUOTA_FIELDS, type QuotaField, type TAppliedQuota, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import type { UserRow } from '../../auth/sessions';
import { quotaLevels } from '../../auth/caller';

/** The FROM of a query made only of scalar subqueries. */
export const ONE_ROW = sql`(select 1) as one`;

/**
 * A list of constants of the code (statuses…) written into the SQL text, not sent as parameters:
 * fewer parameters make a cheaper query to parse and plan. Never for values from a request.
 */
export const constantList = (values: readonly string[]): SQL => sql.raw(values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', '));

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
  const { group, category } = await quotaLevels(db, user);
  return pickAppliedQuota(user, group?.quota, category?.quota);
}

export const emptyUsage = (): TQuota => Object.fromEntries(QUOTA_FIELDS.map((f) => [f, 0])) as TQuota;

/**
 * Whose consumption: one user (a bound id, or an SQL expression naming one, as inside the user
 * view's query), or every member of a group or of a category together.
 */
export type UsageScope = { userId: string | SQL } | { groupId: string } | { categoryId: string };

/** "Owned by someone in the scope", on an owner column. */
export type Owned = (owner: AnyColumn) => SQL;

/** The owner filter of a scope: `owner = user`, or `owner in (members)` so that a group or a category is one aggregate, not one per member. */
export function ownedIn(scope: UsageScope): Owned {
  if ('userId' in scope) return (owner) => sql`${owner} = ${scope.userId}`;
  const u = schema.users;
  const member = 'groupId' in scope ? sql`${u.groupId} = ${scope.groupId}` : sql`${u.categoryId} = ${scope.categoryId}`;
  return (owner) => sql`${owner} in (select ${u.id} from ${u} where ${member})`;
}

/**
 * What a scope consumes. Each area that owns consumable things (desktops, templates, media,
 * storage, deployments) defines its part once with `usagePart` and registers it; the sum is the
 * `used` of the profile. A part is one SQL aggregate whose owner filter is the scope's, so that all
 * the parts asked come from a single query (`usageIn`, or inside another query: `usageSql`).
 */
export type UsagePart<R> = {
  /** The quota fields this part counts (a check of some fields asks only the parts that count them). */
  counts: readonly QuotaField[];
  /** A query answering one row of aggregates over the rows `owned` (its columns are what `read` reads). */
  sql: (owned: Owned) => SQL;
  /** The part of `used` from that row (numbers may come as text). */
  read: (row: R) => Partial<TQuota>;
};
export const usagePart = <R>(part: UsagePart<R>): UsagePart<R> => part;

const parts: UsagePart<never>[] = [];
export const registerUsagePart = (part: UsagePart<never>) => void parts.push(part);

/** The registered parts that count any of `fields` (all without). */
const partsFor = (fields?: readonly QuotaField[]) => (fields ? parts.filter((p) => p.counts.some((f) => fields.includes(f))) : parts);

/** The parts asked of a scope as one `json` column (an array, one object per part); read it with `usageFrom` and the same `fields`. */
export function usageSql(scope: UsageScope, fields?: readonly QuotaField[]): SQL<unknown> {
  const asked = partsFor(fields);
  if (asked.length === 0) return sql`'[]'::json`;
  const owned = ownedIn(scope);
  return sql`json_build_array(${sql.join(
    asked.map((p) => sql`(select row_to_json(p) from (${p.sql(owned)}) p)`),
    sql`, `,
  )})`;
}

/** The usage from the column `usageSql(scope, fields)` selected; the fields of parts not asked stay 0. */
export function usageFrom(raw: unknown, fields?: readonly QuotaField[]): TQuota {
  const rows = fromJson<unknown[]>(raw) ?? [];
  const used = emptyUsage();
  partsFor(fields).forEach((p, i) => {
    for (const [k, v] of Object.entries(p.read((rows[i] ?? {}) as never))) used[k as keyof TQuota] += v ?? 0;
  });
  return used;
}

/** The usage query of a kind of scope and a set of fields, built once (per database, and per set of parts registered). */
const usageQueries = new Map<string, ReturnType<typeof usageQuery>>();
const usageQuery = (kind: 'userId' | 'groupId' | 'categoryId', fields?: readonly QuotaField[]) =>
  preparedQuery((db, name) =>
    db
      .select({ used: usageSql({ [kind]: sql.placeholder('id') } as unknown as UsageScope, fields) })
      .from(ONE_ROW)
      .prepare(name),
  );

/** The usage of a scope in one query; with `fields`, only the parts that count them are read. */
export async function usageIn(db: Db, scope: UsageScope, fields?: readonly QuotaField[]): Promise<TQuota> {
  if (partsFor(fields).length === 0) return emptyUsage();
  const kind = 'userId' in scope ? 'userId' : 'groupId' in scope ? 'groupId' : 'categoryId';
  const id = (scope as Record<typeof kind, string | SQL>)[kind];
  if (typeof id !== 'string') {
    const [row] = await db.select({ used: usageSql(scope, fields) }).from(ONE_ROW);
    return usageFrom(row?.used, fields);
  }
  const key = `${kind}:${fields?.join(',') ?? '*'}:${parts.length}`;
  let query = usageQueries.get(key);
  if (!query) usageQueries.set(key, (query = usageQuery(kind, fields)));
  const [row] = await query(db).execute({ id });
  return usageFrom(row?.used, fields);
}

/** What a user consumes (`usageIn` for one user). */
export const usageOf = (db: Db, userId: string, fields?: readonly QuotaField[]): Promise<TQuota> => usageIn(db, { userId }, fields);
