import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { removeDiskFile } from '../pools';
import { schema } from '../../db';
import { conflict } from '../../http/errors';
import { cutoffHoursFor } from './recycle';
import { itemsOf, withLog, type RecycleAgent, type RecycleBinRow } from './items';

/**
 * Deletes an entry for good: its kept disks (rows and files) go, the entry stays as history with
 * status `deleted`. Live: update_recycle_bin {deleting}, then delete_recycle_bin {deleted}.
 */
export async function deleteEntry(ctx: AppContext, entry: RecycleBinRow, agent: RecycleAgent) {
  const { db, bus, log } = ctx;
  const [claimed] = await db
    .update(schema.recycleBin)
    .set({ status: 'deleting', accessedAt: new Date() })
    .where(and(eq(schema.recycleBin.id, entry.id), eq(schema.recycleBin.status, 'recycled')))
    .returning();
  if (!claimed) throw conflict('recycle_bin_not_recycled', `The entry is ${entry.status}`, { status: entry.status });
  bus.toUser(entry.ownerId, 'update_recycle_bin', { id: entry.id, status: 'deleting' });
  const items = itemsOf(claimed);
  const storages = items.storages?.length
    ? await db.select().from(schema.storage).where(and(inArray(schema.storage.id, items.storages), eq(schema.storage.status, 'recycled')))
    : [];
  for (const s of storages) {
    try {
      await db.delete(schema.storage).where(eq(schema.storage.id, s.id));
    } catch (err) {
      // Still referenced somewhere: keep the row (and its file), mark it gone from the user's view.
      log.warn({ err, storage: s.id }, 'recycled disk still referenced; kept');
      await db.update(schema.storage).set({ status: 'deleted' }).where(eq(schema.storage.id, s.id));
      continue;
    }
    await removeDiskFile(ctx, s).catch((err) => log.warn({ err, path: s.path }, 'could not remove disk file'));
  }
  // A deployment's row, kept 'recycled' for a restore, goes with its entry.
  const deploymentIds = (items.deployments ?? []).map((d) => String(d.id));
  if (deploymentIds.length) {
    await db.delete(schema.deployments).where(and(inArray(schema.deployments.id, deploymentIds), eq(schema.deployments.status, 'recycled')));
  }
  // A deleted user goes for good with their entry (unless something of theirs still needs the row).
  if (claimed.itemType === 'user') await deleteUserRow(ctx, claimed.ownerId);
  await db
    .update(schema.recycleBin)
    .set({ status: 'deleted', accessedAt: new Date(), items: withLog(items, agent, 'deleted') })
    .where(eq(schema.recycleBin.id, entry.id));
  bus.toUser(entry.ownerId, 'delete_recycle_bin', { id: entry.id, status: 'deleted' });
}

/** The row of a user in the bin, once their entry is deleted; kept when other records still point at it. */
export async function deleteUserRow(ctx: AppContext, userId: string) {
  try {
    await ctx.db.delete(schema.users).where(and(eq(schema.users.id, userId), isNotNull(schema.users.deletedAt)));
  } catch (err) {
    ctx.log.warn({ err, user: userId }, 'deleted user still referenced; row kept');
  }
}

/** Deletes every entry kept longer than its owner's cutoff hours (0 hours: at once). Answers how many. */
export async function purgeExpired(ctx: AppContext, now = Date.now()): Promise<number> {
  const rows = await ctx.db.select().from(schema.recycleBin).where(eq(schema.recycleBin.status, 'recycled'));
  const hours = new Map<string, number>();
  let purged = 0;
  for (const row of rows) {
    if (!hours.has(row.ownerCategoryId)) hours.set(row.ownerCategoryId, await cutoffHoursFor(ctx, row.ownerCategoryId));
    const until = row.createdAt.getTime() + hours.get(row.ownerCategoryId)! * 3600_000;
    if (until > now) continue;
    try {
      await deleteEntry(ctx, row, 'system');
      purged++;
    } catch (err) {
      ctx.log.warn({ err, entry: row.id }, 'recycle bin purge: entry skipped');
    }
  }
  return purged;
}

/**
 * The retention job: every RECYCLE_BIN_PURGE_SECONDS (default 300; the original system runs it
 * hourly), and once soon after start. Answers the function that stops it.
 */
export function startRecycleBinPurge(ctx: AppContext, intervalMs = ctx.config.recycleBinPurgeSeconds * 1000) {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const n = await purgeExpired(ctx);
      if (n > 0) ctx.log.info({ purged: n }, 'recycle bin: expired entries deleted');
    } catch (err) {
      ctx.log.error({ err }, 'recycle bin purge failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void tick(), Math.min(intervalMs, 5_000)).unref();
  const every = setInterval(() => void tick(), intervalMs).unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
