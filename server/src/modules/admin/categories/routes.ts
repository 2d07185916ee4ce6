import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, ilike, ne, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminCategoriesQuery, ZAdminCategory, ZAdminCategoryCreate, ZAdminCategoryList, ZAdminCategoryUpdate, type TAdminCategory } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { conflict, notFound } from '../../../http/errors';
import { SHARED_POOL } from '../../pools';
import { boundCategory, inReach, likeTerm, orderOf, peopleGuards } from '../people/scope';

const c = schema.categories;
const idParams = z.object({ id: z.string().min(1).max(64) });
// Written out in full: in a query on one table drizzle leaves columns unqualified, and an unqualified
// "id" inside the sub-select would be the users' (or groups') own id.
const usersSql = sql<number>`(select count(*)::int from users u where u.category_id = categories.id and u.deleted_at is null)`;
const groupsSql = sql<number>`(select count(*)::int from groups g where g.category_id = categories.id)`;
const COLUMNS = { row: c, users: usersSql, groups: groupsSql };
type Row = { row: typeof c.$inferSelect; users: number; groups: number };

const view = (r: Row): TAdminCategory => ({
  id: r.row.id,
  name: r.row.name,
  description: r.row.description,
  custom_url_name: r.row.customUrlName,
  frontend: r.row.frontend,
  allowed_email_domains: r.row.allowedEmailDomains,
  maintenance: r.row.maintenance,
  recycle_bin_cutoff_hours: r.row.recycleBinCutoffHours,
  quota: r.row.quota,
  limits: r.row.limits,
  storage_pool: r.row.storagePool,
  users: Number(r.users),
  groups: Number(r.groups),
});

async function categoryView(db: Db, id: string) {
  const [row] = await db.select(COLUMNS).from(c).where(eq(c.id, id));
  return row ? view(row as Row) : null;
}

/** The login address is unique (it names the category in /login/{provider}/{custom_url}). */
async function assertUrlFree(db: Db, url: string, except?: string) {
  const [taken] = await db.select({ id: c.id }).from(c).where(except ? and(eq(c.customUrlName, url), ne(c.id, except)) : eq(c.customUrlName, url));
  const [asId] = await db.select({ id: c.id }).from(c).where(except ? and(eq(c.id, url), ne(c.id, except)) : eq(c.id, url));
  if (taken || asId) throw conflict('custom_url_exists', 'That login address is taken', { custom_url_name: url });
}

/** The shared pool's name stands for the shared storage folder, which is stored as null. */
const poolOf = (name: string | null) => (name === SHARED_POOL ? null : name);

const domains = (list: string[]) => [...new Set(list.map((d) => d.replace(/^@/, '')))];

/** Categories: admins create, edit and delete; managers read their own. */
export async function adminCategoryRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff, adminOnly } = peopleGuards(ctx);
  const db = ctx.db;

  r.get('/admin/categories', { preHandler: staff, schema: { querystring: ZAdminCategoriesQuery, response: { 200: ZAdminCategoryList } } }, async (request) => {
    const q = request.query;
    const bound = boundCategory(request);
    const parts: SQL[] = [];
    if (bound !== null) parts.push(eq(c.id, bound));
    if (q.search) parts.push(ilike(c.name, likeTerm(q.search)));
    const where = parts.length ? and(...parts) : undefined;
    const [rows, [total]] = await Promise.all([
      db
        .select(COLUMNS)
        .from(c)
        .where(where)
        .orderBy(...orderOf({ name: c.name, users: usersSql, groups: groupsSql }, q.sort, 'name', q.order, c.id))
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      db.select({ n: count() }).from(c).where(where),
    ]);
    return { items: (rows as Row[]).map(view), total: total?.n ?? 0 };
  });

  r.get('/admin/categories/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZAdminCategory } } }, async (request) => {
    const found = inReach(request, request.params.id) ? await categoryView(db, request.params.id) : null;
    if (!found) throw notFound('category_not_found', 'Category not found');
    return found;
  });

  r.post('/admin/categories', { preHandler: adminOnly, schema: { body: ZAdminCategoryCreate, response: { 200: ZAdminCategory } } }, async (request) => {
    const b = request.body;
    await assertUrlFree(db, b.custom_url_name);
    const id = randomUUID();
    await db.transaction(async (tx) => {
      await tx.insert(c).values({
        id, name: b.name, description: b.description, customUrlName: b.custom_url_name, frontend: b.frontend,
        allowedEmailDomains: domains(b.allowed_email_domains), maintenance: b.maintenance, recycleBinCutoffHours: b.recycle_bin_cutoff_hours,
        quota: b.quota, limits: b.limits, storagePool: poolOf(b.storage_pool),
      });
      await audit(tx, auditActorOf(request), { action: 'category.create', objectType: 'category', objectId: id, objectName: b.name, categoryId: id });
    });
    return (await categoryView(db, id))!;
  });

  r.put('/admin/categories/:id', { preHandler: adminOnly, schema: { params: idParams, body: ZAdminCategoryUpdate, response: { 200: ZAdminCategory } } }, async (request) => {
    const [cat] = await db.select().from(c).where(eq(c.id, request.params.id));
    if (!cat) throw notFound('category_not_found', 'Category not found');
    const b = request.body;
    if (b.custom_url_name !== undefined && b.custom_url_name !== cat.customUrlName) await assertUrlFree(db, b.custom_url_name, cat.id);
    const set: Partial<typeof c.$inferInsert> = {};
    if (b.name !== undefined) set.name = b.name;
    if (b.description !== undefined) set.description = b.description;
    if (b.custom_url_name !== undefined) set.customUrlName = b.custom_url_name;
    if (b.frontend !== undefined) set.frontend = b.frontend;
    if (b.allowed_email_domains !== undefined) set.allowedEmailDomains = domains(b.allowed_email_domains);
    if (b.maintenance !== undefined) set.maintenance = b.maintenance;
    if (b.recycle_bin_cutoff_hours !== undefined) set.recycleBinCutoffHours = b.recycle_bin_cutoff_hours;
    if (b.quota !== undefined) set.quota = b.quota;
    if (b.limits !== undefined) set.limits = b.limits;
    if (b.storage_pool !== undefined) set.storagePool = poolOf(b.storage_pool);
    await db.transaction(async (tx) => {
      if (Object.keys(set).length) await tx.update(c).set(set).where(eq(c.id, cat.id));
      await audit(tx, auditActorOf(request), {
        action: 'category.update', objectType: 'category', objectId: cat.id, objectName: b.name ?? cat.name, categoryId: cat.id,
        detail: { fields: Object.keys(b) },
      });
    });
    return (await categoryView(db, cat.id))!;
  });

  r.delete('/admin/categories/:id', { preHandler: adminOnly, schema: { params: idParams } }, async (request) => {
    const [cat] = await db.select().from(c).where(eq(c.id, request.params.id));
    if (!cat) throw notFound('category_not_found', 'Category not found');
    await db.transaction(async (tx) => {
      const [users] = await tx.select({ n: count() }).from(schema.users).where(eq(schema.users.categoryId, cat.id));
      const [groups] = await tx.select({ n: count() }).from(schema.groups).where(eq(schema.groups.categoryId, cat.id));
      if ((users?.n ?? 0) > 0 || (groups?.n ?? 0) > 0) {
        throw conflict('category_has_items', 'The category is not empty', { users: users?.n ?? 0, groups: groups?.n ?? 0 });
      }
      await tx.delete(schema.registrationCodes).where(eq(schema.registrationCodes.categoryId, cat.id));
      await tx.delete(c).where(eq(c.id, cat.id));
      await audit(tx, auditActorOf(request), { action: 'category.delete', objectType: 'category', objectId: cat.id, objectName: cat.name, categoryId: null });
    });
    return { id: cat.id };
  });
}
