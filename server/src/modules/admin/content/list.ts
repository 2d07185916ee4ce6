import { and, count, eq, ne, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  TAdminDeployment, TAdminMedia, TAdminTemplate, ZAdminDeploymentsQuery, ZAdminMediaQuery, ZAdminTemplatesQuery,
} from '@vdi/contracts';
import { RUNNING_STATUSES } from '@vdi/contracts';
import { schema, type Db } from '../../../db';
import { qualified } from '../../../db/qualified';
import { orderOf, searchLike } from '../people/scope';

const u = schema.users;
const c = schema.categories;
const g = schema.groups;
const d = schema.domains;
const m = schema.media;
const dep = schema.deployments;

const iso = (v: Date | string) => new Date(v).toISOString();
const num = (v: unknown) => Number(v ?? 0);

/** What the three tables share: an owner, their category and group, a name and a description. */
type Owned = { userId: AnyColumn; categoryId: AnyColumn; name: AnyColumn; description: AnyColumn };

/** Reach (a manager's category), the owner and category filters, and the search over name, description and owner. */
function ownedWhere(t: Owned, bound: string | null, f: { category?: string; owner?: string; search?: string }): (SQL | undefined)[] {
  const parts: (SQL | undefined)[] = [];
  if (bound !== null) parts.push(eq(t.categoryId, bound));
  if (f.category) parts.push(eq(t.categoryId, f.category));
  if (f.owner) parts.push(eq(t.userId, f.owner));
  if (f.search) {
    const q = f.search;
    parts.push(or(searchLike(t.name, q), searchLike(t.description, q), searchLike(u.name, q), searchLike(u.username, q)));
  }
  return parts;
}

/** Shared with anyone: one criterion of `allowed` is a list (false = unused). */
const sharedSql = (allowed: AnyColumn) =>
  sql<boolean>`(jsonb_typeof(${allowed}->'roles') = 'array' or jsonb_typeof(${allowed}->'categories') = 'array'
    or jsonb_typeof(${allowed}->'groups') = 'array' or jsonb_typeof(${allowed}->'users') = 'array')`;

const ownerColumns = { username: u.username, userName: u.name, categoryName: c.name, groupName: g.name };
type OwnerNames = { username: string; userName: string; categoryName: string | null; groupName: string | null };
const ownerView = (row: { id: string; name: string; description: string; userId: string; categoryId: string; groupId: string; createdAt: Date }, n: OwnerNames) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  user: row.userId,
  username: n.username,
  user_name: n.userName,
  category: row.categoryId,
  category_name: n.categoryName ?? row.categoryId,
  group: row.groupId,
  group_name: n.groupName ?? row.groupId,
  created: iso(row.createdAt),
});

// ------------------------------------------------------------------ templates
const templateSize = sql<string>`(select coalesce(sum(s.actual_size), 0) from domain_disks dd join storage s on s.id = dd.storage_id
  where dd.domain_id = ${qualified(d.id)} and s.kind = 'template')`;
const derivatives = sql<string>`(select count(*) from domains x where x.template_id = ${qualified(d.id)} or x.duplicate_of_id = ${qualified(d.id)})`;

export async function listAdminTemplates(db: Db, bound: string | null, q: z.infer<typeof ZAdminTemplatesQuery>) {
  const where = and(eq(d.kind, 'template'), ...ownedWhere(d, bound, q), q.enabled === undefined ? undefined : eq(d.enabled, q.enabled),
    q.shared === undefined ? undefined : q.shared ? sharedSql(d.allowed) : sql`not ${sharedSql(d.allowed)}`);
  const sorts = { name: d.name, owner: u.username, category: c.name, status: d.status, enabled: d.enabled, size: templateSize, created: d.createdAt };
  const [rows, [total]] = await Promise.all([
    templateSelect(db).where(where).orderBy(...orderOf(sorts, q.sort, 'name', q.order, d.id)).limit(q.per_page).offset((q.page - 1) * q.per_page),
    db.select({ n: count() }).from(d).innerJoin(u, eq(u.id, d.userId)).where(where),
  ]);
  return { items: rows.map(templateView), total: num(total?.n) };
}
const templateSelect = (db: Db) =>
  db.select({ row: d, ...ownerColumns, size: templateSize, derivatives, shared: sharedSql(d.allowed) })
    .from(d).innerJoin(u, eq(u.id, d.userId)).leftJoin(c, eq(c.id, d.categoryId)).leftJoin(g, eq(g.id, d.groupId)).$dynamic();
const templateView = (r: Awaited<ReturnType<ReturnType<typeof templateSelect>['execute']>>[number]): TAdminTemplate => ({
  ...ownerView(r.row, r), status: r.row.status, enabled: r.row.enabled, shared: Boolean(r.shared), size: num(r.size), derivatives: num(r.derivatives),
});
export async function adminTemplateView(db: Db, id: string): Promise<TAdminTemplate | undefined> {
  const [r] = await templateSelect(db).where(and(eq(d.id, id), eq(d.kind, 'template')));
  return r ? templateView(r) : undefined;
}

// ------------------------------------------------------------------ media
const mediaDesktops = sql<string>`(select count(*) from domain_media dm where dm.media_id = ${qualified(m.id)})`;

export async function listAdminMedia(db: Db, bound: string | null, q: z.infer<typeof ZAdminMediaQuery>) {
  const where = and(ne(m.status, 'deleted'), ...ownedWhere(m, bound, q), q.status ? eq(m.status, q.status) : undefined, q.kind ? eq(m.kind, q.kind) : undefined,
    q.shared === undefined ? undefined : q.shared ? sharedSql(m.allowed) : sql`not ${sharedSql(m.allowed)}`);
  const sorts = { name: m.name, owner: u.username, category: c.name, status: m.status, kind: m.kind, size: m.size, created: m.createdAt };
  const [rows, [total]] = await Promise.all([
    mediaSelect(db).where(where).orderBy(...orderOf(sorts, q.sort, 'name', q.order, m.id)).limit(q.per_page).offset((q.page - 1) * q.per_page),
    db.select({ n: count() }).from(m).innerJoin(u, eq(u.id, m.userId)).where(where),
  ]);
  return { items: rows.map(mediaView), total: num(total?.n) };
}
const mediaSelect = (db: Db) =>
  db.select({ row: m, ...ownerColumns, desktops: mediaDesktops, shared: sharedSql(m.allowed) })
    .from(m).innerJoin(u, eq(u.id, m.userId)).leftJoin(c, eq(c.id, m.categoryId)).leftJoin(g, eq(g.id, m.groupId)).$dynamic();
const mediaView = (r: Awaited<ReturnType<ReturnType<typeof mediaSelect>['execute']>>[number]): TAdminMedia => ({
  ...ownerView(r.row, r), kind: r.row.kind, status: r.row.status, shared: Boolean(r.shared), size: num(r.row.size), desktops: num(r.desktops),
});
export async function adminMediaView(db: Db, id: string): Promise<TAdminMedia | undefined> {
  const [r] = await mediaSelect(db).where(eq(m.id, id));
  return r ? mediaView(r) : undefined;
}

// ------------------------------------------------------------------ deployments
const running = sql.join(RUNNING_STATUSES.map((s) => sql`${s}`), sql`, `);
const depCounts = sql<{ desktops: number; started: number; size: number } | string>`(select json_build_object(
    'desktops', count(*), 'started', count(*) filter (where x.status in (${running})),
    'size', coalesce(sum((select coalesce(sum(s.actual_size), 0) from domain_disks dd join storage s on s.id = dd.storage_id where dd.domain_id = x.id and s.kind <> 'template')), 0))
  from domains x where x.tag = ${qualified(dep.id)})`;
const tplName = sql<string | null>`(select t.name from domains t where t.id = ${qualified(dep.templateId)})`;

export async function listAdminDeployments(db: Db, bound: string | null, q: z.infer<typeof ZAdminDeploymentsQuery>) {
  const where = and(eq(dep.status, 'ready'), ...ownedWhere(dep, bound, q), q.visible === undefined ? undefined : eq(dep.visible, q.visible));
  const desktopsCount = sql`(select count(*) from domains x where x.tag = ${qualified(dep.id)})`;
  const sorts = { name: dep.name, owner: u.username, category: c.name, visible: dep.visible, desktops: desktopsCount, created: dep.createdAt };
  const [rows, [total]] = await Promise.all([
    deploymentSelect(db).where(where).orderBy(...orderOf(sorts, q.sort, 'name', q.order, dep.id)).limit(q.per_page).offset((q.page - 1) * q.per_page),
    db.select({ n: count() }).from(dep).innerJoin(u, eq(u.id, dep.userId)).where(where),
  ]);
  return { items: rows.map(deploymentView), total: num(total?.n) };
}
const deploymentSelect = (db: Db) =>
  db.select({ row: dep, ...ownerColumns, counts: depCounts, templateName: tplName })
    .from(dep).innerJoin(u, eq(u.id, dep.userId)).leftJoin(c, eq(c.id, dep.categoryId)).leftJoin(g, eq(g.id, dep.groupId)).$dynamic();
const deploymentView = (r: Awaited<ReturnType<ReturnType<typeof deploymentSelect>['execute']>>[number]): TAdminDeployment => {
  const counts = typeof r.counts === 'string' ? (JSON.parse(r.counts) as { desktops: number; started: number; size: number }) : r.counts;
  return {
    ...ownerView(r.row, r), template: r.row.templateId, template_name: r.templateName ?? null, visible: r.row.visible,
    desktops: num(counts?.desktops), started: num(counts?.started), size: num(counts?.size),
  };
};
export async function adminDeploymentView(db: Db, id: string): Promise<TAdminDeployment | undefined> {
  const [r] = await deploymentSelect(db).where(eq(dep.id, id));
  return r ? deploymentView(r) : undefined;
}
