import { randomInt } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, ilike, or, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminCodeCreate, ZAdminCodeList, ZAdminCodesQuery, ZAdminRegistrationCode, type TAdminRegistrationCode, type TRole } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { notFound } from '../../../http/errors';
import { assertMayGiveRole, assertReach, boundCategory, likeTerm, orderOf, peopleGuards } from '../people/scope';

const rc = schema.registrationCodes;
const g = schema.groups;
const c = schema.categories;
const codeParams = z.object({ code: z.string().min(1).max(128) });
const COLUMNS = { row: rc, groupName: g.name, categoryName: c.name };
type Row = { row: typeof rc.$inferSelect; groupName: string | null; categoryName: string | null };

const view = (r: Row): TAdminRegistrationCode => ({
  code: r.row.code,
  category: r.row.categoryId,
  category_name: r.categoryName ?? r.row.categoryId,
  group: r.row.groupId,
  group_name: r.groupName ?? r.row.groupId,
  role: r.row.roleId as TRole,
  description: r.row.description,
  created: r.row.createdAt.toISOString(),
});

/** Codes are secrets a person types: generated, never chosen; 14 letters and digits without look-alikes (~70 bits). */
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const newCode = () => Array.from({ length: 14 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');

async function codeView(db: Db, code: string) {
  const [row] = await db.select(COLUMNS).from(rc).leftJoin(g, eq(g.id, rc.groupId)).leftJoin(c, eq(c.id, rc.categoryId)).where(eq(rc.code, code));
  return row ? view(row as Row) : null;
}

async function reachableCode(db: Db, request: FastifyRequest, code: string) {
  const missing = () => notFound('code_not_found', 'Registration code not found');
  const [row] = await db.select().from(rc).where(eq(rc.code, code));
  if (!row) throw missing();
  assertReach(request, row.categoryId, missing);
  return row;
}

/** Registration codes per group and role: create, list, reset (a new code), delete. */
export async function adminRegistrationCodeRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);
  const db = ctx.db;

  r.get('/admin/registration_codes', { preHandler: staff, schema: { querystring: ZAdminCodesQuery, response: { 200: ZAdminCodeList } } }, async (request) => {
    const q = request.query;
    const bound = boundCategory(request);
    const parts: SQL[] = [];
    if (bound !== null) parts.push(eq(rc.categoryId, bound));
    if (q.group) parts.push(eq(rc.groupId, q.group));
    if (q.search) parts.push(or(ilike(g.name, likeTerm(q.search)), ilike(rc.description, likeTerm(q.search)))!);
    const where = parts.length ? and(...parts) : undefined;
    const [rows, [total]] = await Promise.all([
      db
        .select(COLUMNS)
        .from(rc)
        .leftJoin(g, eq(g.id, rc.groupId))
        .leftJoin(c, eq(c.id, rc.categoryId))
        .where(where)
        .orderBy(...orderOf({ group: g.name, role: rc.roleId, created: rc.createdAt }, q.sort, 'group', q.order, rc.code))
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      db.select({ n: count() }).from(rc).leftJoin(g, eq(g.id, rc.groupId)).where(where),
    ]);
    return { items: (rows as Row[]).map(view), total: total?.n ?? 0 };
  });

  r.post('/admin/registration_codes', { preHandler: staff, schema: { body: ZAdminCodeCreate, response: { 200: ZAdminRegistrationCode } } }, async (request) => {
    const b = request.body;
    assertMayGiveRole(request, b.role);
    const groupMissing = () => notFound('group_not_found', 'Group not found');
    const [group] = await db.select().from(g).where(eq(g.id, b.group));
    if (!group) throw groupMissing();
    assertReach(request, group.categoryId, groupMissing);
    const code = newCode();
    await db.transaction(async (tx) => {
      await tx.insert(rc).values({ code, categoryId: group.categoryId, groupId: group.id, roleId: b.role, description: b.description });
      await audit(tx, auditActorOf(request), {
        action: 'registration_code.create', objectType: 'group', objectId: group.id, objectName: group.name, categoryId: group.categoryId,
        detail: { role: b.role },
      });
    });
    return (await codeView(db, code))!;
  });

  r.put('/admin/registration_codes/:code/reset', { preHandler: staff, schema: { params: codeParams, response: { 200: ZAdminRegistrationCode } } }, async (request) => {
    const row = await reachableCode(db, request, request.params.code);
    const code = newCode();
    await db.transaction(async (tx) => {
      await tx.update(rc).set({ code }).where(eq(rc.code, row.code));
      await audit(tx, auditActorOf(request), {
        action: 'registration_code.reset', objectType: 'group', objectId: row.groupId, objectName: row.groupId, categoryId: row.categoryId,
        detail: { role: row.roleId },
      });
    });
    return (await codeView(db, code))!;
  });

  r.delete('/admin/registration_codes/:code', { preHandler: staff, schema: { params: codeParams } }, async (request) => {
    const row = await reachableCode(db, request, request.params.code);
    await db.transaction(async (tx) => {
      await tx.delete(rc).where(eq(rc.code, row.code));
      await audit(tx, auditActorOf(request), {
        action: 'registration_code.delete', objectType: 'group', objectId: row.groupId, objectName: row.groupId, categoryId: row.categoryId,
        detail: { role: row.roleId },
      });
    });
    return { deleted: true };
  });
}
