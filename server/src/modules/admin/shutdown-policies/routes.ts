import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, ilike, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import {
  ZShutdownPoliciesQuery,
  ZShutdownPolicy,
  ZShutdownPolicyCreate,
  ZShutdownPolicyList,
  ZShutdownPolicyUpdate,
  type TShutdownPolicy,
  type TShutdownPolicyKind,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { conflict, forbidden, notFound } from '../../../http/errors';
import { boundCategory, inReach, likeTerm, orderOf, peopleGuards } from '../people/scope';
import type { AutoShutdown } from '../../desktops/auto-shutdown';

const sp = schema.shutdownPolicies;
type Row = typeof sp.$inferSelect;
const idParams = z.object({ id: z.string().min(1).max(64) });
const missing = () => notFound('shutdown_policy_not_found', 'No such auto-shutdown policy');

/** The names of the targets of some policies (role, category, group or user) and of their categories. */
async function namesOf(db: Db, rows: Row[]) {
  const ids = (k: TShutdownPolicyKind) => [...new Set(rows.filter((r) => r.kind === k).map((r) => r.targetId))];
  const cats = [...new Set([...rows.map((r) => r.categoryId).filter((c): c is string => Boolean(c)), ...ids('category')])];
  const [roles, categories, groups, users] = await Promise.all([
    ids('role').length ? db.select({ id: schema.roles.id, name: schema.roles.name }).from(schema.roles).where(inArray(schema.roles.id, ids('role'))) : [],
    cats.length ? db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories).where(inArray(schema.categories.id, cats)) : [],
    ids('group').length ? db.select({ id: schema.groups.id, name: schema.groups.name }).from(schema.groups).where(inArray(schema.groups.id, ids('group'))) : [],
    ids('user').length
      ? db.select({ id: schema.users.id, name: sql<string>`${schema.users.name} || ' (' || ${schema.users.username} || ')'` }).from(schema.users).where(inArray(schema.users.id, ids('user')))
      : [],
  ]);
  const map = (list: { id: string; name: string }[]) => new Map(list.map((x) => [x.id, x.name]));
  return { role: map(roles), category: map(categories), group: map(groups), user: map(users) };
}

/** Where a target lives: its category (null for a role), or null when there is no such target. */
async function targetCategoryOf(db: Db, kind: TShutdownPolicyKind, target: string): Promise<{ category: string | null } | null> {
  switch (kind) {
    case 'role': {
      const [r] = await db.select({ id: schema.roles.id }).from(schema.roles).where(eq(schema.roles.id, target));
      return r ? { category: null } : null;
    }
    case 'category': {
      const [c] = await db.select({ id: schema.categories.id }).from(schema.categories).where(eq(schema.categories.id, target));
      return c ? { category: c.id } : null;
    }
    case 'group': {
      const [g] = await db.select({ c: schema.groups.categoryId }).from(schema.groups).where(eq(schema.groups.id, target));
      return g ? { category: g.c } : null;
    }
    case 'user': {
      const [u] = await db.select({ c: schema.users.categoryId }).from(schema.users).where(and(eq(schema.users.id, target), isNull(schema.users.deletedAt)));
      return u ? { category: u.c } : null;
    }
  }
}

/**
 * Auto-shutdown policies (the original's desktops_priority; enforced by desktops/auto-shutdown.ts):
 * admins every policy; managers those of their category (its own, its groups', its users') and
 * the roles' ones to read (a role's policy spans every category). Another category's policy is a
 * 404, a write to it or for a target there a 403. A write re-plans the running desktops at once.
 */
export async function adminShutdownPolicyRoutes(app: FastifyInstance, ctx: AppContext, autoShutdown: AutoShutdown) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);
  const db = ctx.db;

  const views = async (request: FastifyRequest, rows: Row[]): Promise<TShutdownPolicy[]> => {
    const names = await namesOf(db, rows);
    const bound = boundCategory(request);
    return rows.map((row) => ({
      id: row.id, name: row.name, kind: row.kind, target: row.targetId,
      target_name: names[row.kind].get(row.targetId) ?? row.targetId,
      category: row.categoryId, category_name: row.categoryId ? (names.category.get(row.categoryId) ?? row.categoryId) : null,
      max_time: row.maxTime, idle_time: row.idleTime, warnings: row.warnings, enabled: row.enabled,
      editable: bound === null || (row.kind !== 'role' && row.categoryId === bound),
    }));
  };

  /** A policy the caller sees (404 otherwise); `write`: one they may change (a role's is 403 for managers). */
  async function reachable(request: FastifyRequest, id: string, write: boolean) {
    const [row] = await db.select().from(sp).where(eq(sp.id, id));
    if (!row || (row.kind !== 'role' && !inReach(request, row.categoryId ?? ''))) throw missing();
    if (write && boundCategory(request) !== null && row.kind === 'role') throw forbidden('forbidden', "Only admins change a role's policy");
    return row;
  }

  /** The running desktops of the people a policy's target names are planned again (their shown deadlines move at once). */
  const replan = async (kind: TShutdownPolicyKind, target: string) => {
    const u = schema.users;
    const where =
      kind === 'user' ? eq(u.id, target)
        : kind === 'category' ? eq(u.categoryId, target)
          : kind === 'role' ? eq(u.roleId, target)
            : or(eq(u.groupId, target), sql`exists (select 1 from user_secondary_groups s where s.user_id = ${u.id} and s.group_id = ${target})`);
    await autoShutdown
      .replanAll(inArray(schema.domains.userId, db.select({ id: u.id }).from(u).where(where)))
      .catch((err) => ctx.log.error({ err }, 'auto-shutdown re-planning failed'));
  };

  r.get('/admin/shutdown_policies', { preHandler: staff, schema: { querystring: ZShutdownPoliciesQuery, response: { 200: ZShutdownPolicyList } } }, async (request) => {
    const q = request.query;
    const bound = boundCategory(request);
    const parts: SQL[] = [];
    if (bound !== null) parts.push(or(eq(sp.categoryId, bound), eq(sp.kind, 'role'))!);
    if (q.kind) parts.push(eq(sp.kind, q.kind));
    if (q.search) parts.push(ilike(sp.name, likeTerm(q.search)));
    const where = parts.length ? and(...parts) : undefined;
    const kindOrder = sql`array_position(array['user','group','category','role'], ${sp.kind})`;
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(sp)
        .where(where)
        .orderBy(...orderOf({ name: sp.name, kind: kindOrder, max_time: sp.maxTime, idle_time: sp.idleTime }, q.sort, 'kind', q.order, sp.id))
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      db.select({ n: count() }).from(sp).where(where),
    ]);
    return { items: await views(request, rows), total: total?.n ?? 0 };
  });

  r.get('/admin/shutdown_policies/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZShutdownPolicy } } }, async (request) => {
    return (await views(request, [await reachable(request, request.params.id, false)]))[0]!;
  });

  r.post('/admin/shutdown_policies', { preHandler: staff, schema: { body: ZShutdownPolicyCreate, response: { 200: ZShutdownPolicy } } }, async (request) => {
    const b = request.body;
    const bound = boundCategory(request);
    if (bound !== null && b.kind === 'role') throw forbidden('forbidden', "Only admins make a role's policy");
    const where = await targetCategoryOf(db, b.kind, b.target);
    if (!where) throw notFound('shutdown_policy_target_not_found', 'No such role, category, group or user');
    if (bound !== null && where.category !== bound) throw forbidden('forbidden', 'Managers act only within their category');
    const id = randomUUID();
    await db.transaction(async (tx) => {
      const [dup] = await tx.select({ id: sp.id }).from(sp).where(and(eq(sp.kind, b.kind), eq(sp.targetId, b.target)));
      if (dup) throw conflict('shutdown_policy_exists', 'That target has a policy already', { id: dup.id });
      await tx.insert(sp).values({
        id, name: b.name, kind: b.kind, targetId: b.target, categoryId: where.category, maxTime: b.max_time, idleTime: b.idle_time, warnings: b.warnings, enabled: b.enabled,
      });
      await audit(tx, auditActorOf(request), {
        action: 'shutdown_policy.create', objectType: 'shutdown_policy', objectId: id, objectName: b.name, categoryId: where.category,
        detail: { kind: b.kind, target: b.target, max_time: b.max_time, idle_time: b.idle_time },
      });
    });
    await replan(b.kind, b.target);
    return (await views(request, await db.select().from(sp).where(eq(sp.id, id))))[0]!;
  });

  r.put('/admin/shutdown_policies/:id', { preHandler: staff, schema: { params: idParams, body: ZShutdownPolicyUpdate, response: { 200: ZShutdownPolicy } } }, async (request) => {
    const row = await reachable(request, request.params.id, true);
    const b = request.body;
    const set: Partial<Row> = {};
    if (b.name !== undefined) set.name = b.name;
    if (b.max_time !== undefined) set.maxTime = b.max_time;
    if (b.idle_time !== undefined) set.idleTime = b.idle_time;
    if (b.warnings !== undefined) set.warnings = b.warnings;
    if (b.enabled !== undefined) set.enabled = b.enabled;
    await db.transaction(async (tx) => {
      if (Object.keys(set).length) await tx.update(sp).set(set).where(eq(sp.id, row.id));
      await audit(tx, auditActorOf(request), {
        action: 'shutdown_policy.update', objectType: 'shutdown_policy', objectId: row.id, objectName: b.name ?? row.name, categoryId: row.categoryId,
        detail: { fields: Object.keys(b) },
      });
    });
    await replan(row.kind, row.targetId);
    return (await views(request, await db.select().from(sp).where(eq(sp.id, row.id))))[0]!;
  });

  r.delete('/admin/shutdown_policies/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const row = await reachable(request, request.params.id, true);
    await db.transaction(async (tx) => {
      await tx.delete(sp).where(eq(sp.id, row.id));
      await audit(tx, auditActorOf(request), { action: 'shutdown_policy.delete', objectType: 'shutdown_policy', objectId: row.id, objectName: row.name, categoryId: row.categoryId });
    });
    await replan(row.kind, row.targetId);
    return { id: row.id };
  });
}
