import { and, count, eq, ilike, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { LOCAL_HYPERVISOR, ON_HYPERVISOR, statusIn, type TAdminDesktop, type ZAdminDesktopsQuery } from '@vdi/contracts';
import type { z } from 'zod';
import { schema, type Db } from '../../../db';
import { qualified } from '../../../db/qualified';
import type { DomainRow } from '../../shared/domains';
import { forceStopAtOf, viewersOf } from '../../shared/desktop-view';
import { likeTerm, orderOf, searchLike } from '../people/scope';

const d = schema.domains;
const u = schema.users;
const c = schema.categories;
const g = schema.groups;
const dep = schema.deployments;
const tpl = alias(schema.domains, 'tpl');

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

type Query = z.infer<typeof ZAdminDesktopsQuery>;
type Filters = Omit<Query, 'page' | 'per_page' | 'order'>;

/** Desktops within the caller's reach (`bound`: a manager's category) and the filters; searched by name, owner, description, address. */
function desktopWhere(bound: string | null, f: Filters): SQL {
  const parts: (SQL | undefined)[] = [eq(d.kind, 'desktop')];
  if (bound !== null) parts.push(eq(d.categoryId, bound));
  if (f.category) parts.push(eq(d.categoryId, f.category));
  if (f.group) parts.push(eq(d.groupId, f.group));
  if (f.owner) parts.push(eq(d.userId, f.owner));
  if (f.template) parts.push(eq(d.templateId, f.template));
  if (f.deployment) parts.push(eq(d.tag, f.deployment));
  if (f.state) parts.push(eq(d.status, f.state));
  if (f.persistent !== undefined) parts.push(eq(d.persistent, f.persistent));
  if (f.hypervisor) {
    // Desktops recorded before hosts were (hypervisor_id null) run on this server's own host.
    const onHost = f.hypervisor === LOCAL_HYPERVISOR ? or(isNull(d.hypervisorId), eq(d.hypervisorId, LOCAL_HYPERVISOR)) : eq(d.hypervisorId, f.hypervisor);
    parts.push(and(inArray(d.status, [...ON_HYPERVISOR]), onHost)!);
  }
  if (f.search) {
    const q = f.search;
    parts.push(or(searchLike(d.name, q), searchLike(d.description, q), searchLike(u.name, q), searchLike(u.username, q), ilike(d.guestIp, likeTerm(q))));
  }
  return and(...parts)!;
}

const SORTS = {
  name: d.name,
  owner: u.username,
  category: c.name,
  group: g.name,
  status: d.status,
  started: d.startedAt,
  accessed: d.accessedAt,
  memory: sql`((${d.hardware}->>'memoryMb')::int)`,
  vcpus: sql`((${d.hardware}->>'vcpus')::int)`,
  created: d.createdAt,
};

/**
 * One page of desktops (SQL paging) and how many match. Three queries whatever the page: the
 * page's ids (filters, search and sort; by name it walks the index `domains (kind, name, id)`),
 * the count, then the page's rows with their names (owner, group, category, template,
 * deployment) and disk sizes.
 */
export async function listAdminDesktops(db: Db, bound: string | null, q: Query) {
  const where = desktopWhere(bound, q);
  // The owners' table only when the search or the order reads it: the page and the count then walk the desktops alone.
  const byOwner = Boolean(q.search) || q.sort === 'owner';
  const byNames = q.sort === 'category' || q.sort === 'group';
  let ids = db.select({ id: d.id }).from(d).$dynamic();
  let counted = db.select({ n: count() }).from(d).$dynamic();
  if (byOwner) ids = ids.innerJoin(u, eq(u.id, d.userId));
  if (q.search) counted = counted.innerJoin(u, eq(u.id, d.userId));
  if (byNames) ids = ids.leftJoin(c, eq(c.id, d.categoryId)).leftJoin(g, eq(g.id, d.groupId));
  const [page, [total]] = await Promise.all([
    ids.where(where).orderBy(...orderOf(SORTS, q.sort, 'name', q.order, d.id)).limit(q.per_page).offset((q.page - 1) * q.per_page),
    counted.where(where),
  ]);
  const items = await adminDesktopViews(db, page.map((p) => p.id));
  return { items, total: Number(total?.n ?? 0) };
}

/** The console's view of these desktops, in the order given. */
export async function adminDesktopViews(db: Db, ids: string[]): Promise<TAdminDesktop[]> {
  if (ids.length === 0) return [];
  const dd = schema.domainDisks;
  const s = schema.storage;
  const rows = await db
    .select({
      // Only what the view shows: the wide JSON columns stay in the database (memory, vCPUs and the viewers are read out of them there).
      row: {
        id: d.id, name: d.name, description: d.description, status: d.status, forceStopAt: d.forceStopAt, persistent: d.persistent, hypervisorId: d.hypervisorId, userId: d.userId,
        categoryId: d.categoryId, groupId: d.groupId, templateId: d.templateId, tag: d.tag, guestIp: d.guestIp,
        startedAt: d.startedAt, accessedAt: d.accessedAt, createdAt: d.createdAt,
      },
      memoryMb: sql<number>`((${d.hardware}->>'memoryMb')::int)`,
      vcpus: sql<number>`((${d.hardware}->>'vcpus')::int)`,
      viewers: sql<Record<string, unknown> | null>`(${d.guestProperties}->'viewers')`,
      username: u.username,
      userName: u.name,
      categoryName: c.name,
      groupName: g.name,
      templateName: tpl.name,
      deploymentName: dep.name,
      disk: sql<{ size: number | string; used: number | string } | string>`(select json_build_object('size', coalesce(sum(${qualified(s.virtualSize)}), 0), 'used', coalesce(sum(${qualified(s.actualSize)}), 0))
        from ${dd} join ${s} on ${qualified(s.id)} = ${qualified(dd.storageId)} where ${qualified(dd.domainId)} = ${qualified(d.id)})`,
    })
    .from(d)
    .innerJoin(u, eq(u.id, d.userId))
    .leftJoin(c, eq(c.id, d.categoryId))
    .leftJoin(g, eq(g.id, d.groupId))
    .leftJoin(tpl, eq(tpl.id, d.templateId))
    .leftJoin(dep, eq(dep.id, d.tag))
    .where(inArray(d.id, ids));
  const byId = new Map(rows.map((r) => [r.row.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const x = r.row;
    const disk = typeof r.disk === 'string' ? (JSON.parse(r.disk) as { size: number; used: number }) : r.disk;
    const running = statusIn(ON_HYPERVISOR, x.status);
    return [{
      id: x.id,
      name: x.name,
      description: x.description,
      status: x.status,
      force_stop_at: forceStopAtOf(x),
      persistent: x.persistent,
      user: x.userId,
      username: r.username,
      user_name: r.userName,
      category: x.categoryId,
      category_name: r.categoryName ?? x.categoryId,
      group: x.groupId,
      group_name: r.groupName ?? x.groupId,
      template: x.templateId,
      template_name: r.templateName ?? null,
      deployment: x.tag,
      deployment_name: r.deploymentName ?? null,
      hypervisor: running ? (x.hypervisorId ?? LOCAL_HYPERVISOR) : null,
      memory_mb: Number(r.memoryMb),
      vcpus: Number(r.vcpus),
      disk_size: Number(disk?.size ?? 0),
      disk_used: Number(disk?.used ?? 0),
      guest_ip: x.guestIp,
      viewers: viewersOf({ guestProperties: { viewers: r.viewers ?? {} } as DomainRow['guestProperties'], guestIp: x.guestIp }),
      started: running ? iso(x.startedAt) : null,
      accessed: iso(x.accessedAt),
      created: iso(x.createdAt)!,
    }];
  });
}
