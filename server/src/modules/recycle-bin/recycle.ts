/**
 * Recycle bin: moving deleted domains into one entry, and deleting them for good.
 *
 *   recycleDomains(ctx, { agent, owner, itemType, itemName, desktops, templates, permanent? })
 *
 * - `agent`: who deletes (a user row, or 'system' for scheduled deletions).
 * - `owner`: whose items they are; the entry is theirs (listed to them, restored to them).
 * - `itemType`: 'desktop' | 'template' | 'deployment' | 'user' | 'bulk'; `itemName` is what the list shows.
 * - `desktops`, `templates`: domain rows, ALREADY STOPPED (no machine runs them; the caller checks).
 *   A template deletion passes the template(s) and every dependant desktop/template it takes along.
 * - Disks: every storage attached (domain_disks) to these domains and to no domain outside the set
 *   goes with them: its row stays, with status 'recycled', and still counts against the owner's
 *   storage quota; the file is not touched. Shared disks (a duplicate template's) stay as they are.
 * - The entry's `items` keep full copies of the domain rows, the domain_disks links, the disk ids,
 *   the attached media links (`domainMedia`), the desktops' bastion targets (`bastionTargets`: same
 *   id, SSH/HTTP settings and keys, so a saved `ssh` command works again) and the names shown in the
 *   list (`meta`), so that a restore puts everything back as it was.
 * - Permanent at once (no entry) when `permanent` is true or the owner's cutoff is 0 hours
 *   (category value, else the system `recycle_bin.cutoff_hours`): the domains, their own disk rows
 *   and files are deleted.
 * - Events: `desktop_delete` {id} to each desktop's owner; `add_recycle_bin` (the list item) to the
 *   owner. Template list events are the caller's (this module does not know the template views).
 * - Answers { id: entry id | null, permanent }.
 * - Storage usage: the storage module counts ready + maintenance + recycled disks of a user
 *   (storage_size and total_size); other areas must not add disk sizes again.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, notInArray } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { removeDiskFile } from '../pools';
import { schema, type Db } from '../../db';
import type { UserRow } from '../../auth/sessions';
import type { DomainRow } from '../shared/domains';
import { refreshSizes } from '../storage/view';
import { itemView } from './entries';
import { logEntry, type EntryItems, type EntryMeta, type RecycleAgent, type RecycleItemType } from './items';

async function nameOf(db: Db, table: 'groups' | 'categories', id: string | null | undefined): Promise<string | null> {
  if (!id) return null;
  const t = table === 'groups' ? schema.groups : schema.categories;
  const [row] = await db.select({ name: t.name }).from(t).where(eq(t.id, id));
  return row?.name ?? null;
}

/** Hours an item stays in the bin for an owner of this category: the category's value, else the system's. */
export async function cutoffHoursFor(ctx: AppContext, categoryId: string): Promise<number> {
  const [cat] = await ctx.db
    .select({ hours: schema.categories.recycleBinCutoffHours })
    .from(schema.categories)
    .where(eq(schema.categories.id, categoryId));
  if (cat && cat.hours !== null && cat.hours !== undefined) return cat.hours;
  return (await ctx.settings.get('recycle_bin')).cutoff_hours;
}

/** The disks these domains use that no other domain uses. */
async function ownDisks(db: Db, domainIds: string[]) {
  if (domainIds.length === 0) return { links: [], storages: [] };
  const links = await db.select().from(schema.domainDisks).where(inArray(schema.domainDisks.domainId, domainIds));
  const ids = [...new Set(links.map((l) => l.storageId))];
  if (ids.length === 0) return { links, storages: [] };
  const shared = await db
    .select({ storageId: schema.domainDisks.storageId })
    .from(schema.domainDisks)
    .where(and(inArray(schema.domainDisks.storageId, ids), notInArray(schema.domainDisks.domainId, domainIds)));
  const sharedIds = new Set(shared.map((s) => s.storageId));
  const own = ids.filter((id) => !sharedIds.has(id));
  const storages = own.length ? await db.select().from(schema.storage).where(inArray(schema.storage.id, own)) : [];
  return { links, storages };
}

/** No machine may keep running a desktop that goes away (defensive: callers pass stopped ones). */
async function ensureNoMachine(ctx: AppContext, desktops: DomainRow[]) {
  for (const d of desktops) {
    await ctx.engine.queue.cancel(d.id);
    if ((await ctx.engine.driver.status(d.id).catch(() => 'absent')) !== 'absent') {
      await ctx.engine.driver.destroy(d.id).catch(() => undefined);
    }
  }
}

/** Deletes domains and their own disks (rows and files) for good, without an entry. */
export async function deleteDomainsForGood(ctx: AppContext, desktops: DomainRow[], templates: DomainRow[] = []) {
  const { db, log, bus } = ctx;
  const all = [...desktops, ...templates];
  if (all.length === 0) return;
  await ensureNoMachine(ctx, desktops);
  const { storages } = await ownDisks(db, all.map((d) => d.id));
  await db.delete(schema.domains).where(inArray(schema.domains.id, all.map((d) => d.id)));
  for (const s of storages) {
    await db.delete(schema.storage).where(eq(schema.storage.id, s.id));
    await removeDiskFile(ctx, s).catch((err) => log.warn({ err, path: s.path }, 'could not remove disk file'));
  }
  for (const d of desktops) bus.toUser(d.userId, 'desktop_delete', { id: d.id });
}

export async function recycleDomains(
  ctx: AppContext,
  opts: {
    agent: RecycleAgent;
    owner: UserRow;
    itemType: RecycleItemType;
    itemName: string;
    desktops: DomainRow[];
    templates: DomainRow[];
    /** Copies of the deployment rows the entry stands for (their rows stay, status 'recycled', until the entry is deleted). */
    deployments?: Record<string, unknown>[];
    permanent?: boolean;
  },
): Promise<{ id: string | null; permanent: boolean }> {
  const { db, bus } = ctx;
  const ids = [...opts.desktops, ...opts.templates].map((d) => d.id);
  // A deleted user gets an entry even when they own nothing: it is what restores them.
  if (ids.length === 0 && !opts.deployments?.length && opts.itemType !== 'user') return { id: null, permanent: false };
  // Fresh copies: what is kept is what the database holds now.
  const rows = ids.length ? await db.select().from(schema.domains).where(inArray(schema.domains.id, ids)) : [];
  const desktops = rows.filter((r) => r.kind === 'desktop');
  const templates = rows.filter((r) => r.kind === 'template');

  if (opts.permanent || (await cutoffHoursFor(ctx, opts.owner.categoryId)) === 0) {
    await deleteDomainsForGood(ctx, desktops, templates);
    return { id: null, permanent: true };
  }

  await ensureNoMachine(ctx, desktops);
  const { links, storages } = await ownDisks(db, ids);
  const sized = await refreshSizes(db, ctx.engine.disks, storages);
  const media = ids.length ? await db.select().from(schema.domainMedia).where(inArray(schema.domainMedia.domainId, ids)) : [];
  // The targets go with their desktops' rows (cascade): kept here, put back by a restore.
  const targets = desktops.length
    ? await db.select().from(schema.bastionTargets).where(inArray(schema.bastionTargets.desktopId, desktops.map((d) => d.id)))
    : [];
  const agent = opts.agent;
  const meta: EntryMeta = {
    ownerName: opts.owner.name,
    ownerRole: opts.owner.roleId,
    ownerCategoryName: (await nameOf(db, 'categories', opts.owner.categoryId)) ?? opts.owner.categoryId,
    ownerGroupName: (await nameOf(db, 'groups', opts.owner.groupId)) ?? opts.owner.groupId,
    agentType: agent === 'system' ? 'system' : 'user',
    agentRole: agent === 'system' ? null : agent.roleId,
    agentCategoryId: agent === 'system' ? null : agent.categoryId,
    agentCategoryName: agent === 'system' ? null : await nameOf(db, 'categories', agent.categoryId),
    agentGroupId: agent === 'system' ? null : agent.groupId,
    agentGroupName: agent === 'system' ? null : await nameOf(db, 'groups', agent.groupId),
    logs: [logEntry(agent, 'recycled')],
  };
  const items: EntryItems = {
    desktops,
    templates,
    deployments: opts.deployments ?? [],
    storages: sized.map((s) => s.id),
    domainDisks: links.map((l) => ({ domainId: l.domainId, storageId: l.storageId, position: l.position })),
    domainMedia: media.map((m) => ({ domainId: m.domainId, mediaId: m.mediaId, kind: m.kind })),
    bastionTargets: targets,
    meta,
  };
  const id = randomUUID();
  const [entry] = await db.transaction(async (tx) => {
    const inserted = await tx
      .insert(schema.recycleBin)
      .values({
        id,
        itemType: opts.itemType,
        itemName: opts.itemName,
        status: 'recycled',
        ownerId: opts.owner.id,
        ownerCategoryId: opts.owner.categoryId,
        ownerGroupId: opts.owner.groupId,
        agentId: agent === 'system' ? 'system' : agent.id,
        agentName: agent === 'system' ? 'system' : agent.name,
        size: sized.reduce((s, d) => s + d.actualSize, 0),
        items,
      })
      .returning();
    if (sized.length) await tx.update(schema.storage).set({ status: 'recycled' }).where(inArray(schema.storage.id, sized.map((s) => s.id)));
    if (ids.length) await tx.delete(schema.domains).where(inArray(schema.domains.id, ids));
    return inserted;
  });
  for (const d of desktops) bus.toUser(d.userId, 'desktop_delete', { id: d.id });
  bus.toUser(opts.owner.id, 'add_recycle_bin', itemView(entry!, await cutoffHoursFor(ctx, entry!.ownerCategoryId)));
  return { id, permanent: false };
}
