import { and, asc, eq, inArray } from 'drizzle-orm';
import type { TStorageDisk, TStorageOperation, TStoragePriority } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import type { DiskStore } from '../../engine/storage';

export type StorageRow = typeof schema.storage.$inferSelect;

/** The job kind of a disk growth (persisted, published as the `storage` event). */
export const DISK_RESIZE_JOB = 'disk_resize';

/** Kinds listed on the storage screen: a temporary desktop's disk lives only while it runs. */
const LISTED_KINDS = ['desktop', 'template'] as const;
/** A disk under an operation stays on the list (with its progress): it is still the user's disk. */
const LISTED_STATUSES = ['ready', 'maintenance'] as const;

const epoch = (d: Date | string | null | undefined) => (d ? Math.floor(new Date(d).getTime() / 1000) : null);

export async function findStorage(db: Db, id: string): Promise<StorageRow | undefined> {
  return (await db.select().from(schema.storage).where(eq(schema.storage.id, id)))[0];
}

/** The domains (desktops, templates) that use each disk. */
export async function domainsOfStorages(db: Db, storageIds: string[]) {
  if (storageIds.length === 0) return [];
  return db
    .select({
      storageId: schema.domainDisks.storageId,
      id: schema.domains.id,
      name: schema.domains.name,
      kind: schema.domains.kind,
      status: schema.domains.status,
      accessedAt: schema.domains.accessedAt,
    })
    .from(schema.domainDisks)
    .innerJoin(schema.domains, eq(schema.domains.id, schema.domainDisks.domainId))
    .where(inArray(schema.domainDisks.storageId, storageIds))
    .orderBy(asc(schema.domains.name));
}

/**
 * Reads each disk's sizes again with the engine's `info` (works while a machine holds the image)
 * and stores what changed. A missing file keeps the last known sizes.
 */
export async function refreshSizes(db: Db, disks: DiskStore, rows: StorageRow[]): Promise<StorageRow[]> {
  const out: StorageRow[] = [];
  const queue = [...rows];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      if (!(await disks.exists(row.path))) {
        out.push(row);
        continue;
      }
      try {
        const disk = await disks.info(row.path);
        if (disk.actualSize !== row.actualSize || disk.virtualSize !== row.virtualSize) {
          await db.update(schema.storage).set({ actualSize: disk.actualSize, virtualSize: disk.virtualSize }).where(eq(schema.storage.id, row.id));
        }
        out.push({ ...row, actualSize: disk.actualSize, virtualSize: disk.virtualSize });
      } catch {
        out.push(row);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const order = new Map(rows.map((r, i) => [r.id, i]));
  return out.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

/** The running operation on each disk, from the persisted jobs. */
export async function operationsOf(db: Db, storageIds: string[]): Promise<Map<string, TStorageOperation>> {
  const map = new Map<string, TStorageOperation>();
  if (storageIds.length === 0) return map;
  const jobs = await db
    .select()
    .from(schema.jobs)
    .where(and(inArray(schema.jobs.targetId, storageIds), eq(schema.jobs.kind, DISK_RESIZE_JOB), inArray(schema.jobs.status, ['queued', 'running'])));
  for (const j of jobs) {
    map.set(j.targetId, {
      job_id: j.id,
      kind: 'increase',
      user_id: j.userId,
      progress: j.progress,
      priority: ((j.params as { priority?: TStoragePriority }).priority ?? 'low') as TStoragePriority,
    });
  }
  return map;
}

/** GET /storage/ready: the user's disks with fresh sizes, the desktops on them, and any running operation. */
export async function userDisks(ctx: AppContext, userId: string): Promise<TStorageDisk[]> {
  const { db } = ctx;
  const rows = await db
    .select()
    .from(schema.storage)
    .where(and(eq(schema.storage.userId, userId), inArray(schema.storage.kind, [...LISTED_KINDS]), inArray(schema.storage.status, [...LISTED_STATUSES])))
    .orderBy(asc(schema.storage.createdAt));
  return diskViews(ctx, await refreshSizes(db, ctx.engine.disks, rows));
}

export async function diskViews(ctx: AppContext, rows: StorageRow[]): Promise<TStorageDisk[]> {
  const { db } = ctx;
  const ids = rows.map((r) => r.id);
  const userIds = [...new Set(rows.map((r) => r.userId))];
  const [domains, users, ops] = await Promise.all([
    domainsOfStorages(db, ids),
    userIds.length
      ? db.select({ id: schema.users.id, name: schema.users.name, categoryId: schema.users.categoryId }).from(schema.users).where(inArray(schema.users.id, userIds))
      : [],
    operationsOf(db, ids),
  ]);
  const userById = new Map(users.map((u) => [u.id, u]));
  return rows.map((r) => {
    const mine = domains.filter((d) => d.storageId === r.id);
    const times = [r.lastUsedAt, r.createdAt, ...mine.map((d) => d.accessedAt)].map(epoch).filter((t): t is number => t !== null);
    const owner = userById.get(r.userId);
    return {
      id: r.id,
      user_id: r.userId,
      user_name: owner?.name ?? null,
      category: owner?.categoryId ?? null,
      type: r.kind,
      domains: mine.map((d) => ({ id: d.id, name: d.name, kind: d.kind, status: d.status })),
      actual_size: r.actualSize,
      virtual_size: r.virtualSize,
      last: times.length ? Math.max(...times) : null,
      status: r.status,
      parent: r.parentId,
      format: r.format,
      // A disk on a hypervisor's own pool: its path there (not under the storage folder).
      path: r.hypervisorId ? r.path : ctx.engine.disks.shown(r.path),
      operation: ops.get(r.id) ?? null,
    };
  });
}
