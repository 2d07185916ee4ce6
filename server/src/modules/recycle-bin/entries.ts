import { dirname } from 'node:path';
import { inArray } from 'drizzle-orm';
import type { TRecycleBinDetail, TRecycleBinDomain, TRecycleBinItem, TRecycleBinLog } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { DomainRow } from '../shared/domains';
import type { EntryItems, EntryMeta, RecycleBinRow } from './items';

const epoch = (d: Date | string | null | undefined) => (d ? Math.floor(new Date(d).getTime() / 1000) : null);
const DELETED = '[Deleted]';

function metaOf(row: RecycleBinRow): EntryMeta {
  const m = (row.items as EntryItems).meta;
  return (
    m ?? {
      ownerName: row.ownerId,
      ownerRole: null,
      ownerCategoryName: row.ownerCategoryId,
      ownerGroupName: row.ownerGroupId,
      agentType: row.agentId === 'system' ? 'system' : 'user',
      agentRole: null,
      agentCategoryId: null,
      agentCategoryName: null,
      agentGroupId: null,
      agentGroupName: null,
      logs: [],
    }
  );
}

function common(row: RecycleBinRow, cutoffHours: number | null) {
  const m = metaOf(row);
  const created = epoch(row.createdAt)!;
  return {
    id: row.id,
    status: row.status,
    accessed: epoch(row.accessedAt) ?? created,
    item_type: row.itemType,
    item_name: row.itemName,
    size: row.size,
    agent_type: m.agentType,
    agent_id: m.agentType === 'system' ? null : row.agentId,
    agent_name: row.agentName,
    agent_role: m.agentRole,
    agent_category_id: m.agentCategoryId,
    agent_category_name: m.agentCategoryName,
    agent_group_id: m.agentGroupId,
    agent_group_name: m.agentGroupName,
    owner_id: row.ownerId,
    owner_name: m.ownerName,
    owner_role: m.ownerRole,
    owner_category_id: row.ownerCategoryId,
    owner_category_name: m.ownerCategoryName,
    owner_group_id: row.ownerGroupId,
    owner_group_name: m.ownerGroupName,
    expires: row.status === 'recycled' && cutoffHours !== null ? created + cutoffHours * 3600 : null,
  };
}

const lastLog = (row: RecycleBinRow, m: EntryMeta): TRecycleBinLog =>
  m.logs.at(-1) ?? { time: epoch(row.createdAt)!, action: row.status, agent_type: m.agentType, agent_id: row.agentId, agent_name: row.agentName };

/** A list item (reference §2.12): the arrays replaced by counts, plus the last log entry. */
export function itemView(row: RecycleBinRow, cutoffHours: number | null): TRecycleBinItem {
  const items = row.items as EntryItems;
  return {
    ...common(row, cutoffHours),
    desktops: items.desktops?.length ?? 0,
    templates: items.templates?.length ?? 0,
    deployments: items.deployments?.length ?? 0,
    storages: items.storages?.length ?? 0,
    users: 0,
    groups: 0,
    categories: 0,
    last: lastLog(row, metaOf(row)),
  };
}

/** GET /recycle_bin/{id}: every kept record with today's names ("[Deleted]" when gone) and the disks' sizes. */
export async function detailView(ctx: AppContext, row: RecycleBinRow, cutoffHours: number | null): Promise<TRecycleBinDetail> {
  const { db } = ctx;
  const items = row.items as EntryItems;
  const domains: DomainRow[] = [...(items.desktops ?? []), ...(items.templates ?? [])];
  const storageRows = items.storages?.length ? await db.select().from(schema.storage).where(inArray(schema.storage.id, items.storages)) : [];
  const userIds = [...new Set([...domains.map((d) => d.userId), ...storageRows.map((s) => s.userId)])];
  const groupIds = [...new Set(domains.map((d) => d.groupId))];
  const catIds = [...new Set([...domains.map((d) => d.categoryId), row.ownerCategoryId])];
  const [users, groups, cats] = await Promise.all([
    userIds.length ? db.select({ id: schema.users.id, name: schema.users.name, categoryId: schema.users.categoryId }).from(schema.users).where(inArray(schema.users.id, userIds)) : [],
    groupIds.length ? db.select({ id: schema.groups.id, name: schema.groups.name }).from(schema.groups).where(inArray(schema.groups.id, groupIds)) : [],
    catIds.length ? db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories).where(inArray(schema.categories.id, catIds)) : [],
  ]);
  const userName = new Map(users.map((u) => [u.id, u.name]));
  const groupName = new Map(groups.map((g) => [g.id, g.name]));
  const catName = new Map(cats.map((c) => [c.id, c.name]));
  const domainName = new Map(domains.map((d) => [d.id, d.name]));

  const domainView = (d: DomainRow): TRecycleBinDomain => ({
    id: d.id,
    name: d.name,
    description: d.description ?? '',
    kind: d.kind,
    status: d.status,
    accessed: epoch(d.accessedAt),
    category: { id: d.categoryId, name: catName.get(d.categoryId) ?? DELETED },
    group: { id: d.groupId, name: groupName.get(d.groupId) ?? DELETED },
    user: d.userId,
    username: userName.get(d.userId) ?? DELETED,
    template: d.templateId ?? null,
    persistent: d.persistent,
  });

  const storages = await Promise.all(
    storageRows.map(async (s) => {
      const disk = (await ctx.engine.disks.exists(s.path)) ? await ctx.engine.disks.info(s.path).catch(() => null) : null;
      const categoryId = users.find((u) => u.id === s.userId)?.categoryId ?? row.ownerCategoryId;
      const sizes = { 'virtual-size': disk?.virtualSize ?? s.virtualSize, 'actual-size': disk?.actualSize ?? s.actualSize };
      // As the original answers (reference §2.12): the owner's name, the names of the domains on it, the sizes under `qemu-img-info`.
      return {
        id: s.id,
        directory_path: dirname(ctx.engine.disks.shown(s.path)),
        status: s.status,
        type: s.kind,
        format: s.format,
        parent: s.parentId,
        user: userName.get(s.userId) ?? DELETED,
        user_id: s.userId,
        category: { id: categoryId, name: catName.get(categoryId) ?? DELETED },
        domains: (items.domainDisks ?? []).filter((l) => l.storageId === s.id).map((l) => domainName.get(l.domainId) ?? l.domainId),
        'qemu-img-info': sizes,
      };
    }),
  );

  return {
    ...common(row, cutoffHours),
    desktops: (items.desktops ?? []).map(domainView),
    templates: (items.templates ?? []).map(domainView),
    deployments: items.deployments ?? [],
    storages,
    logs: metaOf(row).logs,
  };
}
