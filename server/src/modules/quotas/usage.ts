import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { RUNNING_STATUSES } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { constantList, usagePart } from './applied';

type Running = { count: number; memoryGb: number; vcpus: number };

const d = schema.domains;
const isRunning = sql`${d.status} in (${constantList(RUNNING_STATUSES)})`;

/** What running desktops add up to: how many, their memory (MB) and vCPUs (`only`: of those rows alone). */
const runningSums = (only?: SQL) => {
  const of = only ? sql` filter (where ${only})` : sql``;
  return {
    count: sql<number>`count(*)${of}`.mapWith(Number),
    memoryMb: sql<number>`coalesce(sum((${d.hardware}->>'memoryMb')::float8)${of}, 0)`.mapWith(Number),
    vcpus: sql<number>`coalesce(sum((${d.hardware}->>'vcpus')::float8)${of}, 0)`.mapWith(Number),
  };
};
const asRunning = (row: { count: number; memoryMb: number; vcpus: number } | undefined): Running => ({
  count: row?.count ?? 0,
  memoryGb: (row?.memoryMb ?? 0) / 1024,
  vcpus: row?.vcpus ?? 0,
});
const runningDesktops = [eq(d.kind, 'desktop'), inArray(d.status, [...RUNNING_STATUSES])];

/** Running desktops (and their memory and vCPUs) of a user, a group or a category: one aggregate. */
export async function runningOf(db: Db, scope: { userId?: string; groupId?: string; categoryId?: string }): Promise<Running> {
  const conds = [...runningDesktops];
  // A person's own: a pool's desktops count for the pool (its size), never for the person who holds one.
  if (scope.userId) conds.push(eq(d.userId, scope.userId), isNull(d.poolId));
  if (scope.groupId) conds.push(eq(d.groupId, scope.groupId));
  if (scope.categoryId) conds.push(eq(d.categoryId, scope.categoryId));
  const [row] = await db.select(runningSums()).from(d).where(and(...conds));
  return asRunning(row);
}

/**
 * What runs of a person's own desktops (a pool's excepted), of their group's and of their category's: one pass over the
 * running desktops (a start waits for this).
 */
export async function runningAround(db: Db, user: { id: string; groupId: string; categoryId: string }): Promise<{ mine: Running; group: Running; category: Running }> {
  const mine = sql`${d.userId} = ${user.id} and ${d.poolId} is null`;
  const group = sql`${d.groupId} = ${user.groupId}`;
  const category = sql`${d.categoryId} = ${user.categoryId}`;
  const [mm, gg, cc] = [runningSums(mine), runningSums(group), runningSums(category)];
  const [row] = await db
    .select({ mCount: mm.count, mMemoryMb: mm.memoryMb, mVcpus: mm.vcpus, gCount: gg.count, gMemoryMb: gg.memoryMb, gVcpus: gg.vcpus, cCount: cc.count, cMemoryMb: cc.memoryMb, cVcpus: cc.vcpus })
    .from(d)
    .where(and(...runningDesktops, sql`(${mine} or ${group} or ${category})`));
  return {
    mine: asRunning(row && { count: row.mCount, memoryMb: row.mMemoryMb, vcpus: row.mVcpus }),
    group: asRunning(row && { count: row.gCount, memoryMb: row.gMemoryMb, vcpus: row.gVcpus }),
    category: asRunning(row && { count: row.cCount, memoryMb: row.cMemoryMb, vcpus: row.cVcpus }),
  };
}

/** A user's running desktops by name (a refusal to start one more names those that hold the quota). */
export async function runningDesktopsOf(db: Db, userId: string): Promise<{ id: string; name: string }[]> {
  return db.select({ id: d.id, name: d.name }).from(d).where(and(...runningDesktops, eq(d.userId, userId), isNull(d.poolId))).orderBy(d.name).limit(20);
}

/** The same per host the desktops run on (`hostOf`: the host column's expression); hosts with none are absent. */
export async function runningByHost(db: Db, hostOf: SQL<string>): Promise<Map<string, Running>> {
  const rows = await db
    .select({ host: hostOf, ...runningSums() })
    .from(d)
    .where(and(...runningDesktops))
    // By position: the expression's own parameters would make a second, different one in GROUP BY.
    .groupBy(sql`1`);
  return new Map(rows.map((r) => [r.host, asRunning(r)]));
}

/** The desktops part of a user's `used`: their own desktops (not a deployment's), and what runs of all they own. */
export const desktopUsage = usagePart<{ desktops: number; volatile: number; running: number; memory_mb: number; vcpus: number }>({
  counts: ['desktops', 'volatile', 'running', 'memory', 'vcpus'],
  sql: (owned) => sql`select
      count(*) filter (where ${d.persistent} and ${d.tag} is null) as desktops,
      count(*) filter (where not ${d.persistent} and ${d.tag} is null) as volatile,
      count(*) filter (where ${isRunning}) as running,
      coalesce(sum((${d.hardware}->>'memoryMb')::float8) filter (where ${isRunning}), 0) as memory_mb,
      coalesce(sum((${d.hardware}->>'vcpus')::float8) filter (where ${isRunning}), 0) as vcpus
    from ${d} where ${owned(d.userId)} and ${d.kind} = 'desktop' and ${d.poolId} is null`,
  read: (r) => ({
    desktops: Number(r.desktops ?? 0),
    volatile: Number(r.volatile ?? 0),
    running: Number(r.running ?? 0),
    memory: Number(r.memory_mb ?? 0) / 1024,
    vcpus: Number(r.vcpus ?? 0),
  }),
});
