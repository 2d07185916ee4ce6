import { and, eq, inArray, ne } from 'drizzle-orm';
import { AT_REST, GB, type TStorageEvent, type TStoragePriority } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { growDisk } from '../pools';
import { schema } from '../../db';
import type { JobRow } from '../../jobs/runner';
import type { UserRow } from '../../auth/sessions';
import { badRequest, conflict, forbidden, notFound, precondition } from '../../http/errors';
import { canManage } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { appliedQuota } from '../quotas/applied';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { DISK_RESIZE_JOB, domainsOfStorages, findStorage, refreshSizes, type StorageRow } from './view';

/** What a disk growth job remembers: enough to finish it, or to undo its marks after a restart. */
type ResizeParams = {
  storageId: string;
  ownerId: string;
  increment: number;
  newSize: number;
  priority: TStoragePriority;
  /** the desktops put in Maintenance, with the state to give back */
  desktops: { id: string; status: string; currentAction: string | null }[];
};

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new Error('aborted'));
    }, { once: true });
  });

/** The storage folder's file system; a pool that cannot be read is unavailable. */
export async function poolAvailability(ctx: AppContext) {
  try {
    const s = await ctx.engine.disks.space();
    return { id: 'default', available: true, free: s.free, total: s.total, used: s.used };
  } catch {
    return { id: 'default', available: false, free: 0, total: 0, used: 0 };
  }
}

/** The storage named in a request, when the caller may act on it (owner, admin, manager of the owner's category). */
export async function storageFor(ctx: AppContext, user: UserRow, id: string): Promise<StorageRow> {
  const row = await findStorage(ctx.db, id);
  if (!row || row.status === 'deleted') throw notFound('not_found', 'Storage not found');
  const [owner] = await ctx.db.select({ categoryId: schema.users.categoryId }).from(schema.users).where(eq(schema.users.id, row.userId));
  if (!canManage(await actorOf(ctx.db, user), { userId: row.userId, categoryId: owner?.categoryId ?? '' })) {
    throw forbidden('forbidden', 'Not enough rights on this storage');
  }
  return row;
}

/**
 * Disk growth (PUT /storage/{id}/priority/{priority}/increase/{increment}): the engine's `grow` as a
 * persisted job. While it runs the disk is in `maintenance` and its desktops in `Maintenance`
 * (their cards offer "cancel operation"); progress and outcome go out as the `storage` event.
 */
export function createStorageOperations(ctx: AppContext, lifecycle: DesktopLifecycle) {
  const { db, bus, log } = ctx;

  function publish(job: JobRow, storage: Pick<StorageRow, 'id' | 'status' | 'actualSize' | 'virtualSize'>, outcome: TStorageEvent['outcome'], error: string | null = null) {
    const p = job.params as ResizeParams;
    const event: TStorageEvent = {
      id: storage.id,
      status: storage.status,
      operation: 'increase',
      job_id: job.id,
      user_id: job.userId,
      progress: outcome === 'done' ? 100 : job.progress,
      outcome,
      actual_size: storage.actualSize,
      virtual_size: storage.virtualSize,
      error,
    };
    const rooms = new Set([p.ownerId, job.userId]);
    for (const userId of rooms) bus.toUser(userId, 'storage', event);
  }

  /** The desktops still in Maintenance get back the state they had before. */
  async function giveBack(list: ResizeParams['desktops']) {
    for (const d of list) {
      const [row] = await db
        .update(schema.domains)
        .set({ status: d.status, currentAction: d.currentAction })
        .where(and(eq(schema.domains.id, d.id), eq(schema.domains.status, 'Maintenance')))
        .returning();
      if (row) await lifecycle.publish(row);
    }
  }

  ctx.jobs.register({
    kind: DISK_RESIZE_JOB,
    // A resize cut by a restart is not run again: the person asks again if they still want it.
    resumable: false,
    async run(jc) {
      const p = jc.job.params as ResizeParams;
      await jc.progress(5);
      // Optional pause before the resize (tests, demonstrations): it can be cancelled meanwhile.
      const pause = ctx.config.diskOperationDelayMs;
      if (pause > 0) await sleep(pause, jc.signal);
      if (jc.signal.aborted) throw new Error('aborted');
      await jc.progress(30);
      const storage = await findStorage(db, p.storageId);
      if (!storage) throw new Error('storage disappeared');
      const grown = await growDisk(ctx, storage, p.newSize);
      await db.update(schema.storage).set({ actualSize: grown.actualSize, virtualSize: grown.virtualSize, lastUsedAt: new Date() }).where(eq(schema.storage.id, storage.id));
      await jc.progress(100);
    },
    progressed(job) {
      // The end is told by `finished` (a late "running" would show a finished operation again).
      if (job.progress >= 100) return;
      const p = job.params as ResizeParams;
      void findStorage(db, p.storageId).then((s) => s && publish(job, s, 'running'));
    },
    async finished(job, outcome, error) {
      const p = job.params as ResizeParams;
      if (outcome === 'failed') log.warn({ err: error, storage: p.storageId }, 'disk increase failed');
      const [current] = await db
        .update(schema.storage)
        .set({ status: 'ready' })
        .where(and(eq(schema.storage.id, p.storageId), eq(schema.storage.status, 'maintenance')))
        .returning();
      const storage = current ? (await refreshSizes(db, ctx.engine.disks, [current]))[0]! : await findStorage(db, p.storageId);
      await giveBack(p.desktops);
      if (storage) publish(job, storage, outcome, outcome === 'failed' ? 'storage_increase_failed' : null);
    },
  });

  /** Starts a growth; answers the job id. Every refusal has its catalogue code. */
  async function increase(user: UserRow, id: string, requested: TStoragePriority, increment: number) {
    if (user.roleId === 'user') throw forbidden('forbidden', 'Your role cannot grow disks');
    const storage = await storageFor(ctx, user, id);
    const priority: TStoragePriority = user.roleId === 'admin' ? requested : 'low';

    if (storage.kind === 'template') throw precondition('storage_has_derivatives', 'A template disk cannot grow');
    const users = await domainsOfStorages(db, [storage.id]);
    if (users.some((d) => d.kind === 'template')) throw precondition('storage_has_derivatives', 'A template disk cannot grow');
    const children = await db
      .select({ id: schema.storage.id })
      .from(schema.storage)
      .where(and(eq(schema.storage.parentId, storage.id), ne(schema.storage.status, 'deleted')));
    if (children.length > 0) throw precondition('storage_has_derivatives', 'Other disks are built on this one', { derivatives: children.length });
    if (storage.status !== 'ready') throw precondition('storage_not_ready', `The disk is ${storage.status}`, { status: storage.status });

    const [fresh] = await refreshSizes(db, ctx.engine.disks, [storage]);
    if (!Number.isInteger(increment) || increment < 1) {
      throw badRequest('storage_size_too_small', 'The new size must be larger than the current size', { current: fresh!.virtualSize });
    }
    const newSize = fresh!.virtualSize + increment * GB;
    const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, storage.userId));
    const { quota } = owner ? await appliedQuota(db, owner) : { quota: false as const };
    if (quota && newSize > quota.desktops_disk_size * GB) {
      throw precondition('desktops_disk_size_quota_exceeded', 'The new size is over the disk size quota', { desktops_disk_size: quota.desktops_disk_size });
    }
    if (!(await poolAvailability(ctx)).available) throw precondition('no_storage_pool_available', 'The storage pool is not available');

    // Claimed atomically: starts check the disk is ready, so from here no desktop on it can start...
    const [claimed] = await db
      .update(schema.storage)
      .set({ status: 'maintenance' })
      .where(and(eq(schema.storage.id, storage.id), eq(schema.storage.status, 'ready')))
      .returning();
    if (!claimed) throw precondition('storage_not_ready', 'Another operation runs on this disk');
    // ...and each desktop on it moves Stopped → Maintenance only if it is still at rest (stopped, or failed: not running either).
    const desktops = users.filter((d) => d.kind === 'desktop');
    const marked: ResizeParams['desktops'] = [];
    for (const d of desktops) {
      const [row] = await db
        .select({ status: schema.domains.status, currentAction: schema.domains.currentAction })
        .from(schema.domains)
        .where(eq(schema.domains.id, d.id));
      const [moved] = await db
        .update(schema.domains)
        .set({ status: 'Maintenance', currentAction: 'increase' })
        .where(and(eq(schema.domains.id, d.id), inArray(schema.domains.status, [...AT_REST])))
        .returning();
      if (!moved) {
        await giveBack(marked);
        await db.update(schema.storage).set({ status: 'ready' }).where(eq(schema.storage.id, storage.id));
        throw precondition('desktops_not_stopped', 'Every desktop on this disk must be stopped', { desktop: d.name, status: row?.status ?? d.status });
      }
      marked.push({ id: d.id, status: row?.status ?? 'Stopped', currentAction: row?.currentAction ?? null });
      await lifecycle.publish(moved);
    }
    const params: ResizeParams = { storageId: storage.id, ownerId: storage.userId, increment, newSize, priority, desktops: marked };
    const { job } = await ctx.jobs.enqueue(DISK_RESIZE_JOB, { userId: user.id, targetId: storage.id, params });
    publish(job, claimed, 'running');
    return { task_id: job.id };
  }

  /** Only the person who started the operation may cancel it (spec 001 §4). */
  async function abort(user: UserRow, id: string) {
    const storage = await storageFor(ctx, user, id);
    const job = await ctx.jobs.activeFor(storage.id);
    if (!job) throw conflict('storage_no_operation', 'No operation runs on this disk');
    if (job.userId !== user.id) {
      throw forbidden('operation_not_owned', 'You are not authorized to cancel this operation as it was not initiated by you');
    }
    ctx.jobs.abort(job.id);
    return { task_id: job.id };
  }

  return { increase, abort };
}
export type StorageOperations = ReturnType<typeof createStorageOperations>;
