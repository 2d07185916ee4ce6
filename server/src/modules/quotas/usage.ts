import { and, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import { RUNNING_STATUSES, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { ownedIn, type UsageScope } from './applied';

type Running = { count: number; memoryGb: number; vcpus: number };

/** Running desktops (and their memory and vCPUs) of a user, a group or a category: one aggregate query. */
export async function runningOf(db: Db, scope: { userId?: string; groupId?: string; categoryId?: string }): Promise<Running> {
  const conds = [eq(schema.domains.kind, 'desktop'), inArray(schema.domains.status, [...RUNNING_STATUSES])];
  if (scope.userId) conds.push(eq(schema.domains.userId, scope.userId));
  if (scope.groupId) conds.push(eq(schema.domains.groupId, scope.groupId));
  if (scope.categoryId) conds.push(eq(schema.domains.categoryId, scope.categoryId));
  const [row] = await db
    .select({
      count: count(),
      memoryMb: sql<string>`coalesce(sum((${schema.domains.hardware}->>'memoryMb')::numeric), 0)`,
      vcpus: sql<string>`coalesce(sum((${schema.domains.hardware}->>'vcpus')::numeric), 0)`,
    })
    .from(schema.domains)
    .where(and(...conds));
  return { count: Number(row?.count ?? 0), memoryGb: Number(row?.memoryMb ?? 0) / 1024, vcpus: Number(row?.vcpus ?? 0) };
}

/** The desktops part of `used` (a user's own desktops, not deployment ones), by aggregates. */
export async function desktopUsage(db: Db, scope: UsageScope): Promise<Partial<TQuota>> {
  const [rows] = await db
    .select({
      desktops: sql<string>`count(*) filter (where ${schema.domains.persistent})`,
      volatile: sql<string>`count(*) filter (where not ${schema.domains.persistent})`,
    })
    .from(schema.domains)
    .where(and(ownedIn(db, schema.domains.userId, scope), eq(schema.domains.kind, 'desktop'), isNull(schema.domains.tag)));
  const [running] = await db
    .select({
      count: count(),
      memoryMb: sql<string>`coalesce(sum((${schema.domains.hardware}->>'memoryMb')::numeric), 0)`,
      vcpus: sql<string>`coalesce(sum((${schema.domains.hardware}->>'vcpus')::numeric), 0)`,
    })
    .from(schema.domains)
    .where(and(ownedIn(db, schema.domains.userId, scope), eq(schema.domains.kind, 'desktop'), inArray(schema.domains.status, [...RUNNING_STATUSES])));
  return {
    desktops: Number(rows?.desktops ?? 0),
    volatile: Number(rows?.volatile ?? 0),
    running: Number(running?.count ?? 0),
    memory: Number(running?.memoryMb ?? 0) / 1024,
    vcpus: Number(running?.vcpus ?? 0),
  };
}
