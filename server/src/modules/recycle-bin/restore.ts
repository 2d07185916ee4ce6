import { findDeployment } from '../deployments/access';
import { publishDeployment } from '../deployments/events';
import { and, eq, getTableColumns, inArray } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { conflict, precondition } from '../../http/errors';
import { appliedQuota, usageOf } from '../quotas/applied';
import type { DomainRow } from '../shared/domains';
import { desktopViews } from '../shared/desktop-view';
import { itemsOf, withLog, type RecycleBinRow } from './items';

const DOMAIN_COLUMNS = getTableColumns(schema.domains);
const LIVE_STORAGE = ['ready', 'maintenance', 'creating'];

/** A kept copy back into a row: timestamps from their JSON strings, columns that no longer exist dropped. */
function revive(copy: Record<string, unknown>): DomainRow {
  const out: Record<string, unknown> = {};
  for (const [key, col] of Object.entries(DOMAIN_COLUMNS)) {
    if (!(key in copy)) continue;
    let v = copy[key];
    if (v !== null && v !== undefined && col.columnType === 'PgTimestamp' && !(v instanceof Date)) v = new Date(v as string);
    out[key] = v;
  }
  const row = out as DomainRow;
  if (row.kind === 'desktop') {
    // Whatever it was doing when it went away, it comes back stopped (or failed, to be retried).
    if (row.status !== 'Failed') row.status = 'Stopped';
    row.currentAction = null;
    row.startedAt = null;
    row.guestIp = null;
  }
  return row;
}

/**
 * PUT /recycle_bin/restore/{id}: records and disks back as they were. Blocked (428) when the owner,
 * a group or a category is gone (`unable_to_restore_user|category|group`, checked in that order), when a parent template
 * or base disk is missing (`parent_template_not_found`), or when the owner's quota has no room.
 */
export async function restoreEntry(ctx: AppContext, entry: RecycleBinRow, agent: UserRow) {
  const { db, bus } = ctx;
  if (entry.status !== 'recycled') throw conflict('recycle_bin_not_recycled', `The entry is ${entry.status}`, { status: entry.status });
  const items = itemsOf(entry);
  const meta = items.meta;
  const desktops = (items.desktops ?? []).map((d) => revive(d as unknown as Record<string, unknown>));
  const templates = (items.templates ?? []).map((d) => revive(d as unknown as Record<string, unknown>));
  const domains = [...desktops, ...templates];

  const userIds = [...new Set([entry.ownerId, ...domains.map((d) => d.userId)])];
  const users = await db.select().from(schema.users).where(inArray(schema.users.id, userIds));
  for (const id of userIds) {
    if (!users.some((u) => u.id === id)) {
      const name = id === entry.ownerId ? (meta?.ownerName ?? id) : id;
      throw precondition('unable_to_restore_user', `Unable to restore. Deleted user ${name} owns items in this entry`, { user: name });
    }
  }
  const catIds = [...new Set([entry.ownerCategoryId, ...domains.map((d) => d.categoryId)])];
  const cats = await db.select({ id: schema.categories.id }).from(schema.categories).where(inArray(schema.categories.id, catIds));
  for (const id of catIds) {
    if (!cats.some((c) => c.id === id)) {
      const name = id === entry.ownerCategoryId ? (meta?.ownerCategoryName ?? id) : id;
      throw precondition('unable_to_restore_category', `Unable to restore. Deleted category ${name} is associated to items in this entry`, { category: name });
    }
  }

  const groupIds = [...new Set([entry.ownerGroupId, ...domains.map((d) => d.groupId)])];
  const groups = await db.select({ id: schema.groups.id }).from(schema.groups).where(inArray(schema.groups.id, groupIds));
  for (const id of groupIds) {
    if (!groups.some((g) => g.id === id)) {
      const name = id === entry.ownerGroupId ? (meta?.ownerGroupName ?? id) : id;
      throw precondition('unable_to_restore_group', `Unable to restore. Deleted group ${name} is associated to items in this entry`, { group: name });
    }
  }
  // Parents: the template a desktop came from, and the base disk under each kept disk.
  const inEntry = new Set(domains.map((d) => d.id));
  const parentTemplates = [...new Set(domains.map((d) => d.templateId).filter((t): t is string => Boolean(t) && !inEntry.has(t!)))];
  if (parentTemplates.length) {
    const found = await db.select({ id: schema.domains.id }).from(schema.domains).where(inArray(schema.domains.id, parentTemplates));
    const missing = parentTemplates.find((t) => !found.some((f) => f.id === t));
    if (missing) throw precondition('parent_template_not_found', 'The item cannot be restored since the parent template does not exist', { template: missing });
  }
  const storageIds = items.storages ?? [];
  const storages = storageIds.length ? await db.select().from(schema.storage).where(inArray(schema.storage.id, storageIds)) : [];
  const keptIds = new Set(storageIds);
  const parentDisks = [...new Set(storages.map((s) => s.parentId).filter((p): p is string => Boolean(p) && !keptIds.has(p!)))];
  if (parentDisks.length) {
    const found = await db.select().from(schema.storage).where(inArray(schema.storage.id, parentDisks));
    const missing = parentDisks.find((p) => !found.some((f) => f.id === p && LIVE_STORAGE.includes(f.status)));
    if (missing) throw precondition('parent_template_not_found', 'The base disk of this item is gone', { storage: missing });
  }

  // Coming back must fit the owner's quota, as creating them again would.
  const owner = users.find((u) => u.id === entry.ownerId)!;
  const { quota } = await appliedQuota(db, owner);
  if (quota) {
    const used = await usageOf(db, owner.id);
    const persistent = desktops.filter((d) => d.persistent && !d.tag).length;
    if (persistent && used.desktops + persistent > quota.desktops) {
      throw precondition('desktop_new_user_quota_exceeded', `${owner.username} quota exceeded for new desktops`, { desktops: quota.desktops });
    }
    if (templates.length && used.templates + templates.length > quota.templates) {
      throw precondition('template_new_user_quota_exceeded', `${owner.username} quota exceeded for new templates`, { templates: quota.templates });
    }
  }

  const mediaLinks = items.domainMedia ?? [];
  const media = mediaLinks.length
    ? await db.select({ id: schema.media.id }).from(schema.media).where(inArray(schema.media.id, [...new Set(mediaLinks.map((m) => m.mediaId))]))
    : [];
  const restored = await db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(schema.recycleBin)
      .set({ status: 'restored', accessedAt: new Date(), items: withLog(items, agent, 'restored') })
      .where(and(eq(schema.recycleBin.id, entry.id), eq(schema.recycleBin.status, 'recycled')))
      .returning();
    if (!claimed) throw conflict('recycle_bin_not_recycled', 'The entry is no longer in the bin');
    // A deleted user comes back first: the rows below are theirs.
    if (entry.itemType === 'user') {
      await tx.update(schema.users).set({ deletedAt: null, active: true }).where(eq(schema.users.id, entry.ownerId));
    }
    if (storageIds.length) {
      await tx.update(schema.storage).set({ status: 'ready' }).where(and(inArray(schema.storage.id, storageIds), eq(schema.storage.status, 'recycled')));
    }
    // Templates first: desktops may point at them.
    const inserted = domains.length ? await tx.insert(schema.domains).values([...templates, ...desktops]).returning() : [];
    const links = (items.domainDisks ?? []).filter((l) => inEntry.has(l.domainId));
    if (links.length) await tx.insert(schema.domainDisks).values(links).onConflictDoNothing();
    const liveMedia = mediaLinks.filter((m) => media.some((x) => x.id === m.mediaId) && inEntry.has(m.domainId));
    if (liveMedia.length) await tx.insert(schema.domainMedia).values(liveMedia).onConflictDoNothing();
    // The desktops' bastion targets, as they were (same id: a saved `ssh` command works again).
    const targets = (items.bastionTargets ?? []).filter((b) => inEntry.has(b.desktopId)).map((b) => ({ ...b, createdAt: new Date(b.createdAt) }));
    if (targets.length) await tx.insert(schema.bastionTargets).values(targets).onConflictDoNothing();
    // A deployment's row waited in the bin as 'recycled': it is back in the owner's list.
    const deploymentIds = (items.deployments ?? []).map((d) => String(d.id));
    if (deploymentIds.length) await tx.update(schema.deployments).set({ status: 'ready' }).where(inArray(schema.deployments.id, deploymentIds));
    return inserted;
  });

  bus.toUser(entry.ownerId, 'update_recycle_bin', { id: entry.id, status: 'restored' });
  const back = restored.filter((d) => d.kind === 'desktop' && (d.tag === null || d.tagVisible));
  for (const view of await desktopViews(ctx, back)) bus.toUser(view.user, 'desktop_add', view);
  for (const id of (items.deployments ?? []).map((d) => String(d.id))) {
    const row = await findDeployment(db, id);
    if (row) await publishDeployment(ctx, row, ['deployments_add']);
  }
  return { recycle_bin_ids: [entry.id] };
}
