import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, ilike, isNull, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminGroup, ZAdminGroupCreate, ZAdminGroupList, ZAdminGroupsQuery, ZAdminGroupUpdate, type TAdminGroup } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { conflict, notFound } from '../../../http/errors';
import { assertReach, boundCategory, likeTerm, orderOf, peopleGuards, targetCategory } from '../people/scope';

const g = schema.groups;
const c = schema.categories;
const u = schema.users;
const idParams = z.object({ id: z.string().min(1).max(64) });

/** Members: primary group, not in the recycle bin (those keep the group's row alive, see the delete). */
// Qualified by hand (see categories/routes.ts): the count query has no join, so drizzle would leave "id" bare.
const membersSql = sql<number>`(select count(*)::int from users u where u.group_id = groups.id and u.deleted_at is null)`;
const COLUMNS = { row: g, categoryName: c.name, users: membersSql };
type Row = { row: typeof g.$inferSelect; categoryName: string | null; users: number };

const view = (r: Row): TAdminGroup => ({
  id: r.row.id,
  name: r.row.name,
  description: r.row.description,
  category: r.row.categoryId,
  category_name: r.categoryName ?? r.row.categoryId,
  users: Number(r.users),
  quota: r.row.quota,
  limits: r.row.limits,
  open_desktop_at_sign_in: r.row.openDesktopAtSignIn,
});

async function groupView(db: Db, id: string) {
  const [row] = await db.select(COLUMNS).from(g).leftJoin(c, eq(c.id, g.categoryId)).where(eq(g.id, id));
  return row ? view(row as Row) : null;
}

/** A group the caller reaches, else 404 group_not_found. */
async function reachableGroup(db: Db, request: FastifyRequest, id: string) {
  const missing = () => notFound('group_not_found', 'Group not found');
  const [row] = await db.select().from(g).where(eq(g.id, id));
  if (!row) throw missing();
  assertReach(request, row.categoryId, missing);
  return row;
}

/** Groups: admins any category, managers their own (quota and limits included). */
export async function adminGroupRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);
  const db = ctx.db;

  r.get('/admin/groups', { preHandler: staff, schema: { querystring: ZAdminGroupsQuery, response: { 200: ZAdminGroupList } } }, async (request) => {
    const q = request.query;
    const bound = boundCategory(request);
    const parts: SQL[] = [];
    if (bound !== null) parts.push(eq(g.categoryId, bound));
    if (q.category) parts.push(eq(g.categoryId, q.category));
    if (q.search) parts.push(ilike(g.name, likeTerm(q.search)));
    const where = parts.length ? and(...parts) : undefined;
    const [rows, [total]] = await Promise.all([
      db
        .select(COLUMNS)
        .from(g)
        .leftJoin(c, eq(c.id, g.categoryId))
        .where(where)
        .orderBy(...orderOf({ name: g.name, category: c.name, users: membersSql }, q.sort, 'name', q.order, g.id))
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      db.select({ n: count() }).from(g).where(where),
    ]);
    return { items: (rows as Row[]).map(view), total: total?.n ?? 0 };
  });

  r.get('/admin/groups/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZAdminGroup } } }, async (request) => {
    await reachableGroup(db, request, request.params.id);
    return (await groupView(db, request.params.id))!;
  });

  r.post('/admin/groups', { preHandler: staff, schema: { body: ZAdminGroupCreate, response: { 200: ZAdminGroup } } }, async (request) => {
    const b = request.body;
    const categoryId = targetCategory(request, b.category);
    const [cat] = await db.select({ id: c.id }).from(c).where(eq(c.id, categoryId));
    if (!cat) throw notFound('category_not_found', 'Category not found');
    const id = randomUUID();
    await db.transaction(async (tx) => {
      await tx.insert(g).values({ id, uid: id, name: b.name, description: b.description, categoryId, quota: b.quota, limits: b.limits, openDesktopAtSignIn: b.open_desktop_at_sign_in });
      await audit(tx, auditActorOf(request), { action: 'group.create', objectType: 'group', objectId: id, objectName: b.name, categoryId });
    });
    return (await groupView(db, id))!;
  });

  r.put('/admin/groups/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminGroupUpdate, response: { 200: ZAdminGroup } } }, async (request) => {
    const group = await reachableGroup(db, request, request.params.id);
    const b = request.body;
    await db.transaction(async (tx) => {
      const { open_desktop_at_sign_in: openAtSignIn, ...rest } = b;
      const set = { ...rest, ...(openAtSignIn === undefined ? {} : { openDesktopAtSignIn: openAtSignIn }) };
      if (Object.keys(set).length) await tx.update(g).set(set).where(eq(g.id, group.id));
      await audit(tx, auditActorOf(request), {
        action: 'group.update', objectType: 'group', objectId: group.id, objectName: b.name ?? group.name, categoryId: group.categoryId,
        detail: { fields: Object.keys(b) },
      });
    });
    return (await groupView(db, group.id))!;
  });

  r.delete('/admin/groups/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const group = await reachableGroup(db, request, request.params.id);
    await db.transaction(async (tx) => {
      // Users in the bin count too: a restore needs their group.
      const [members] = await tx.select({ n: count() }).from(u).where(eq(u.groupId, group.id));
      const [live] = await tx.select({ n: count() }).from(u).where(and(eq(u.groupId, group.id), isNull(u.deletedAt)));
      const n = members?.n ?? 0;
      if (n > 0) throw conflict('group_has_users', `The group still has ${n} users`, { count: n, recycled: n - (live?.n ?? 0) });
      const used = await tx.select({ id: schema.domains.id }).from(schema.domains).where(eq(schema.domains.groupId, group.id)).limit(1);
      if (used.length) throw conflict('group_has_users', 'Desktops or templates still belong to the group', { count: 0 });
      await tx.delete(schema.registrationCodes).where(eq(schema.registrationCodes.groupId, group.id));
      await tx.delete(g).where(eq(g.id, group.id));
      await audit(tx, auditActorOf(request), { action: 'group.delete', objectType: 'group', objectId: group.id, objectName: group.name, categoryId: group.categoryId });
    });
    return { id: group.id };
  });
}
