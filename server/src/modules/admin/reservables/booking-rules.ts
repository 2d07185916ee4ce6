import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { and, count, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { NOT_SHARED, type TBookingRule, type ZBookingRuleCreate, type TBookingRuleUpdate } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { conflict, notFound } from '../../../http/errors';
import { likeTerm, orderOf } from '../people/scope';
import { DEFAULT_RULE_ID } from '../../reservables/priorities';

const bp = schema.bookingPriorities;
type Row = typeof bp.$inferSelect;

/** The rule id a profile uses ('' is the default rule). */
const profileRule = sql<string>`coalesce(nullif(${schema.reservableSubitems.priorityId}, ''), ${DEFAULT_RULE_ID})`;

/**
 * Booking priority rules (table booking_priorities, the one source `reservables/priorities.ts`
 * reads on every booking check, so a change applies to the next booking): admins only. The last
 * rule of a rule id that profiles use is not deleted (booking_priority_in_use): without it nobody
 * could book them.
 */
export function createBookingRuleAdmin(ctx: AppContext) {
  const { db } = ctx;

  async function profilesByRule(dbOrTx: Db = db): Promise<Map<string, string[]>> {
    const rows = await dbOrTx.select({ id: schema.reservableSubitems.id, rule: profileRule }).from(schema.reservableSubitems);
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.rule, [...(out.get(r.rule) ?? []), r.id]);
    return out;
  }

  const view = (r: Row, profiles: Map<string, string[]>): TBookingRule => ({
    id: r.id, rule_id: r.ruleId, name: r.name, allowed: r.allowed, priority: r.priority, forbid_time: r.forbidTime,
    max_time: r.maxTime, max_items: r.maxItems, profiles: profiles.get(r.ruleId) ?? [],
  });

  async function list(q: { page: number; per_page: number; sort?: string; order: 'asc' | 'desc'; search?: string; rule_id?: string }) {
    const parts: SQL[] = [];
    if (q.search) parts.push(or(ilike(bp.name, likeTerm(q.search)), ilike(bp.ruleId, likeTerm(q.search)))!);
    if (q.rule_id) parts.push(eq(bp.ruleId, q.rule_id));
    const where = parts.length ? and(...parts) : undefined;
    const [rows, [total], profiles] = await Promise.all([
      db
        .select()
        .from(bp)
        .where(where)
        .orderBy(...orderOf({ name: bp.name, rule_id: bp.ruleId, priority: bp.priority }, q.sort, 'priority', q.order, bp.id))
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      db.select({ n: count() }).from(bp).where(where),
      profilesByRule(),
    ]);
    return { items: rows.map((r) => view(r, profiles)), total: total?.n ?? 0 };
  }

  async function byId(id: string, dbOrTx: Db = db) {
    const [row] = await dbOrTx.select().from(bp).where(eq(bp.id, id));
    if (!row) throw notFound('booking_priority_not_found', 'No such booking rule');
    return row;
  }
  const one = async (id: string) => view(await byId(id), await profilesByRule());

  async function create(request: FastifyRequest, b: z.infer<typeof ZBookingRuleCreate>) {
    const id = randomUUID();
    await db.transaction(async (tx) => {
      await tx.insert(bp).values({
        id, ruleId: b.rule_id ?? DEFAULT_RULE_ID, name: b.name, allowed: { ...NOT_SHARED, ...b.allowed }, priority: b.priority,
        forbidTime: b.forbid_time ?? 0, maxTime: b.max_time ?? null, maxItems: b.max_items ?? null,
      });
      await audit(tx, auditActorOf(request), { action: 'booking_rule.create', objectType: 'booking_rule', objectId: id, objectName: b.name, categoryId: null });
    });
    return one(id);
  }

  /** The last rule of a rule id that profiles use stays (moving it to another rule id too). */
  async function assertNotLastInUse(tx: Db, row: Row) {
    const [same] = await tx.select({ n: count() }).from(bp).where(eq(bp.ruleId, row.ruleId));
    if ((same?.n ?? 0) > 1) return;
    const users = (await profilesByRule(tx)).get(row.ruleId) ?? [];
    if (users.length > 0) throw conflict('booking_priority_in_use', 'The last rule of a rule id that profiles use', { rule_id: row.ruleId, profiles: users.length });
  }

  async function update(request: FastifyRequest, id: string, b: TBookingRuleUpdate) {
    await db.transaction(async (tx) => {
      const row = await byId(id, tx);
      if (b.rule_id !== undefined && b.rule_id !== row.ruleId) await assertNotLastInUse(tx, row);
      const set: Partial<Row> = {};
      if (b.rule_id !== undefined) set.ruleId = b.rule_id;
      if (b.name !== undefined) set.name = b.name;
      if (b.allowed !== undefined) set.allowed = { ...NOT_SHARED, ...b.allowed };
      if (b.priority !== undefined) set.priority = b.priority;
      if (b.forbid_time !== undefined) set.forbidTime = b.forbid_time;
      if (b.max_time !== undefined) set.maxTime = b.max_time;
      if (b.max_items !== undefined) set.maxItems = b.max_items;
      if (Object.keys(set).length) await tx.update(bp).set(set).where(eq(bp.id, id));
      await audit(tx, auditActorOf(request), {
        action: 'booking_rule.update', objectType: 'booking_rule', objectId: id, objectName: b.name ?? row.name, categoryId: null,
        detail: { fields: Object.keys(b) },
      });
    });
    return one(id);
  }

  async function remove(request: FastifyRequest, id: string) {
    await db.transaction(async (tx) => {
      const row = await byId(id, tx);
      await assertNotLastInUse(tx, row);
      await tx.delete(bp).where(eq(bp.id, id));
      await audit(tx, auditActorOf(request), { action: 'booking_rule.delete', objectType: 'booking_rule', objectId: id, objectName: row.name, categoryId: null });
    });
    return { id };
  }

  return { list, one, create, update, remove };
}
