import { and, eq, inArray, isNull } from 'drizzle-orm';
import { RUNNING_STATUSES, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';

type Running = { count: number; memoryGb: number; vcpus: number };

/** Running desktops (and their memory and vCPUs) of a user, a group or a category. */
export async function runningOf(db: Db, scope: { userId?: string; groupId?: string; categoryId?: string }): Promise<Running> {
  const conds = [eq(schema.domains.kind, 'desktop'), inArray(schema.domains.status, [...RUNNING_STATUSES])];
  if (scope.userId) conds.push(eq(schema.domains.userId, scope.userId));
  if (scope.groupId) conds.push(eq(schema.domains.groupId, scope.groupId));
  if (scope.categoryId) conds.push(eq(schema.domains.categoryId, scope.categoryId));
  const rows = await db.select({ hw: schema.domains.hardware }).from(schema.domains).where(and(...conds));
  return {
    count: rows.length,
    memoryGb: rows.reduce((s, r) => s + r.hw.memoryMb / 1024, 0),
    vcpus: rows.reduce((s, r) => s + r.hw.vcpus, 0),
  };
}

/** The desktops part of a user's `used`. */
export async function desktopUsage(db: Db, userId: string): Promise<Partial<TQuota>> {
  const rows = await db
    .select({ persistent: schema.domains.persistent })
    .from(schema.domains)
    .where(and(eq(schema.domains.userId, userId), eq(schema.domains.kind, 'desktop'), isNull(schema.domains.tag)));
  const running = await runningOf(db, { userId });
  return {
    desktops: rows.filter((r) => r.persistent).length,
    volatile: rows.filter((r) => !r.persistent).length,
    running: running.count,
    memory: running.memoryGb,
    vcpus: running.vcpus,
  };
}
