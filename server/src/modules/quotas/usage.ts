import { and, count, eq, inArray, sql } from 'drizzle-orm';
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

/** The desktops part of `used` (own desktops: not deployment ones; running: all), by one aggregate query. */
export async function desktopUsage(db: Db, scope: UsageScope): Promise<Partial<TQuota>> {
  const running = inArray(schema.domains.status, [...RUNNING_STATUSES]);
  const [row] = await db
    .select({
      desktops: sql<string>`count(*) filter (where ${schema.domains.tag} is null and ${schema.domains.persistent})`,
      volatile: sql<string>`count(*) filter (where ${schema.domains.tag} is null and not ${schema.domains.persistent})`,
      running: sql<string>`count(*) filter (where ${running})`,
      memoryMb: sql<string>`coalesce(sum((${schema.domains.hardware}->>'memoryMb')::numeric) filter (where ${running}), 0)`,
      vcpus: sql<string>`coalesce(sum((${schema.domains.hardware}->>'vcpus')::numeric) filter (where ${running}), 0)`,
    })
    .from(schema.domains)
    .where(and(ownedIn(db, schema.domains.userId, scope), eq(schema.domains.kind, 'desktop')));
  return {
    desktops: Number(row?.desktops ?? 0),
    volatile: Number(row?.volatile ?? 0),
    running: Number(row?.running ?? 0),
    memory: Number(row?.memoryMb ?? 0) / 1024,
    vcpus: Number(row?.vcpus ?? 0),
  };
}
