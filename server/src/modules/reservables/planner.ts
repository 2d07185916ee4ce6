import { randomUUID } from 'node:crypto';
import { and, asc, eq, gt, inArray, lt, lte, sql } from 'drizzle-orm';
import {
  BOOKING_END_WARNINGS,
  formatBookingDate,
  parseBookingDate,
  PLAN_END_MSG_CODE,
  RESERVABLE_ITEM_TYPES,
  RUNNING_STATUSES,
  validatePlan,
  type TPlan,
  type TReservableItem,
  type TReservableSubitem,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors';
import type { Scheduler } from '../../scheduler/scheduler';
import { desktopRoom } from '../../socket/bus';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { loadSpans, planSpan, segmentsOf, strandedBookings, type PlanSpan } from './availability';

type PlanRow = typeof schema.reservablePlans.$inferSelect;
type ItemRow = typeof schema.reservableItems.$inferSelect;
type SubitemRow = typeof schema.reservableSubitems.$inferSelect;

export const PLAN_JOBS = { start: 'plan.start', warn: 'plan.warn', end: 'plan.end' } as const;
const planKey = (id: string) => `plan:${id}`;

const subitemView = (s: SubitemRow): TReservableSubitem => ({
  id: s.id, name: s.name, description: s.description, brand: s.brand, model: s.model, profile: s.profile, units: s.units, item_type: 'vgpus',
});

function dateOf(s: string) {
  const d = parseBookingDate(s);
  if (!d) throw badRequest('validation_error', `Not a date: ${s}`);
  return d;
}

/**
 * The admin planner (spec 001 §3 "Planner", §7 "Admin planner"): which profile each GPU card
 * offers, and when. A card offers one profile at a time; a change that would leave bookings
 * without a unit is refused (plan_has_bookings). At a plan's end the GPU desktops that no plan
 * covers any more are warned and stopped.
 */
export function createPlanner(ctx: AppContext, lifecycle: DesktopLifecycle, scheduler: Scheduler, exclusive: <T>(fn: () => Promise<T>) => Promise<T>) {
  const { db, bus, clock, log } = ctx;

  async function planViews(rows: PlanRow[]): Promise<TPlan[]> {
    if (rows.length === 0) return [];
    const subs = await db.select().from(schema.reservableSubitems).where(inArray(schema.reservableSubitems.id, [...new Set(rows.map((r) => r.subitemId))]));
    const from = new Date(Math.min(...rows.map((r) => r.start.getTime())));
    const to = new Date(Math.max(...rows.map((r) => r.end.getTime())));
    const spans = await loadSpans(db, [...new Set(rows.map((r) => r.subitemId))], from, to);
    const now = clock.now();
    return rows.map((r) => {
      const used = segmentsOf(r.subitemId, r.start, r.end, [planSpan(r)], spans.bookings).reduce((m, s) => Math.max(m, s.used), 0);
      return {
        id: r.id,
        item_type: 'gpus',
        item_id: r.itemId,
        subitem_id: r.subitemId,
        subitem_name: subs.find((s) => s.id === r.subitemId)?.name ?? r.subitemId,
        start: formatBookingDate(r.start),
        end: formatBookingDate(r.end),
        units: r.units,
        user_id: r.userId,
        units_booked: used,
        editable: r.end > now,
      };
    });
  }

  async function publish(row: PlanRow, change: 'add' | 'update' | 'delete') {
    const [view] = await planViews([row]);
    const admins = await db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.roleId, 'admin'));
    for (const u of new Set([row.userId, ...admins.map((a) => a.id)])) bus.toUser(u, `plan_${change}`, view!);
  }

  /* ------------------------------------------------------------------------- reading */

  /** The kinds of reservable items this server knows (GPU cards only). */
  const kinds = () => [...RESERVABLE_ITEM_TYPES];

  async function itemViews(items: ItemRow[], onlyEnabled: boolean): Promise<TReservableItem[]> {
    const ids = [...new Set(items.flatMap((i) => i.subitemIds))];
    const subs = ids.length ? await db.select().from(schema.reservableSubitems).where(inArray(schema.reservableSubitems.id, ids)) : [];
    return items.map((i) => ({
      id: i.id, name: i.name, brand: i.brand, model: i.model, description: i.description, item_type: 'gpus', enabled: i.enabled,
      subitems: i.subitemIds
        .map((id) => subs.find((s) => s.id === id))
        .filter((s): s is SubitemRow => Boolean(s) && (!onlyEnabled || s!.enabled))
        .map(subitemView),
    }));
  }

  async function itemById(itemType: 'gpus', id: string) {
    const [row] = await db.select().from(schema.reservableItems).where(and(eq(schema.reservableItems.id, id), eq(schema.reservableItems.itemType, itemType)));
    if (!row) throw notFound('reservable_item_not_found', `No ${itemType} item ${id}`);
    return row;
  }

  /** GET /admin/reservables/enabled/{itemType}/{itemId}: the profiles the card can offer. */
  async function enabledSubitems(itemType: 'gpus', itemId: string) {
    const [view] = await itemViews([await itemById(itemType, itemId)], true);
    return view!.subitems;
  }

  async function plans(itemId: string, from: Date, to: Date) {
    await itemById('gpus', itemId);
    const rows = await db
      .select()
      .from(schema.reservablePlans)
      .where(and(eq(schema.reservablePlans.itemId, itemId), lt(schema.reservablePlans.start, to), gt(schema.reservablePlans.end, from)))
      .orderBy(asc(schema.reservablePlans.start));
    return planViews(rows);
  }

  /* ------------------------------------------------------------------------- changing */

  async function subitemOf(item: ItemRow, subitemId: string) {
    if (!item.subitemIds.includes(subitemId)) throw badRequest('reservable_not_found', `The card does not offer ${subitemId}`, { id: subitemId });
    const [sub] = await db.select().from(schema.reservableSubitems).where(eq(schema.reservableSubitems.id, subitemId));
    if (!sub || !sub.enabled) throw badRequest('reservable_not_found', `No profile ${subitemId}`, { id: subitemId });
    return sub;
  }

  async function check(item: ItemRow, start: Date, end: Date, editing: PlanRow | null) {
    const others = await db.select().from(schema.reservablePlans).where(eq(schema.reservablePlans.itemId, item.id));
    const broken = validatePlan({
      range: { start, end },
      now: clock.now(),
      plans: others,
      editingId: editing?.id,
      startUnchanged: editing ? editing.start.getTime() === start.getTime() && editing.start <= clock.now() : false,
    });
    if (broken) throw new ApiError(broken.kind, broken.code, `The plan breaks the rule ${broken.code}`, broken.params ?? null);
  }

  /** Refuses a change after which some booking would lack a unit. */
  async function assertNoStranded(before: PlanRow | null, after: PlanSpan | null) {
    const touched = [before, after].filter((x): x is PlanRow | PlanSpan => Boolean(x));
    const profiles = [...new Set(touched.map((p) => p.subitemId))];
    const from = new Date(Math.min(...touched.map((p) => p.start.getTime())));
    const to = new Date(Math.max(...touched.map((p) => p.end.getTime())));
    const spans = await loadSpans(db, profiles, from, to);
    const plansAfter = [...spans.plans.filter((p) => p.id !== before?.id), ...(after ? [after] : [])];
    const stranded = strandedBookings(profiles, from, to, plansAfter, spans.bookings);
    if (stranded.length > 0) {
      throw conflict('plan_has_bookings', `${stranded.length} booking(s) would be left without a GPU`, { bookings: stranded.length });
    }
  }

  const planJobs = (row: PlanRow) =>
    scheduler.scheduleSpan(planKey(row.id), row, PLAN_JOBS, { planId: row.id, subitemId: row.subitemId, end: row.end.toISOString() }, BOOKING_END_WARNINGS);

  async function create(user: UserRow, body: { item_type: 'gpus'; item_id: string; subitem_id: string; start: string; end: string }) {
    return exclusive(async () => {
      const item = await itemById(body.item_type, body.item_id);
      const sub = await subitemOf(item, body.subitem_id);
      const start = dateOf(body.start);
      const end = dateOf(body.end);
      await check(item, start, end, null);
      const [row] = await db
        .insert(schema.reservablePlans)
        .values({ id: randomUUID(), itemType: 'gpus', itemId: item.id, subitemId: sub.id, start, end, units: sub.units, userId: user.id })
        .returning();
      await planJobs(row!);
      await publish(row!, 'add');
      return (await planViews([row!]))[0]!;
    });
  }

  async function planById(id: string) {
    const [row] = await db.select().from(schema.reservablePlans).where(eq(schema.reservablePlans.id, id));
    if (!row) throw notFound('plan_not_found', 'Plan not found');
    return row;
  }

  async function update(_user: UserRow, id: string, body: { subitem_id: string; start: string; end: string }) {
    return exclusive(async () => {
      const old = await planById(id);
      const item = await itemById('gpus', old.itemId);
      const sub = await subitemOf(item, body.subitem_id);
      const start = dateOf(body.start);
      const end = dateOf(body.end);
      await check(item, start, end, old);
      await assertNoStranded(old, { id: old.id, itemId: old.itemId, subitemId: sub.id, start, end, units: sub.units });
      const [row] = await db
        .update(schema.reservablePlans)
        .set({ subitemId: sub.id, start, end, units: sub.units })
        .where(eq(schema.reservablePlans.id, id))
        .returning();
      await planJobs(row!);
      await publish(row!, 'update');
      // A plan under way that changed profile or ends now takes its GPU from the desktops using the old one.
      if (old.start <= clock.now() && old.subitemId !== row!.subitemId) await profileGone(old.subitemId, clock.now(), 'stop');
      return (await planViews([row!]))[0]!;
    });
  }

  async function remove(_user: UserRow, id: string) {
    return exclusive(async () => {
      const old = await planById(id);
      await assertNoStranded(old, null);
      await db.delete(schema.reservablePlans).where(eq(schema.reservablePlans.id, id));
      await scheduler.cancel(planKey(id));
      await publish(old, 'delete');
      if (old.start <= clock.now() && old.end > clock.now()) await profileGone(old.subitemId, clock.now(), 'stop');
      return {};
    });
  }

  /* ------------------------------------------------------------------------ boundaries */

  /**
   * The profile is no longer offered at `at` (a plan ended): running desktops that need it, and
   * that no plan covers any more, are warned or stopped. Booked desktops end with their booking
   * (a booking always fits its plans); this reaches those started without one (admins, managers).
   */
  async function profileGone(profile: string, at: Date, action: 'stop' | { minutes: number; type: 'warning' | 'danger' }) {
    const still = await db
      .select({ id: schema.reservablePlans.id })
      .from(schema.reservablePlans)
      .where(and(eq(schema.reservablePlans.subitemId, profile), lte(schema.reservablePlans.start, at), gt(schema.reservablePlans.end, at)))
      .limit(1);
    if (still.length > 0) return;
    const desktops = await db
      .select()
      .from(schema.domains)
      .where(
        and(
          eq(schema.domains.kind, 'desktop'),
          inArray(schema.domains.status, [...RUNNING_STATUSES]),
          sql`${schema.domains.hardware}->'reservables'->'vgpus' ? ${profile}`,
        ),
      );
    for (const d of desktops) {
      if (action === 'stop') {
        // Here the engine would also switch the card's mdev profile; without GPU hardware there is nothing to attach.
        await lifecycle.stop(d, { reason: 'plan_end' }).catch((err) => log.warn({ err, desktop: d.id }, 'stop at plan end failed'));
      } else {
        const msg = { type: action.type, msg_code: PLAN_END_MSG_CODE, params: { date: formatBookingDate(at), minutes: action.minutes, name: d.name, desktop_id: d.id } };
        bus.toUser(d.userId, 'msg', msg);
        bus.toRoom(desktopRoom(d.id), 'msg', msg);
      }
    }
  }

  scheduler.register(PLAN_JOBS.start, async (p) => {
    // The engine would switch the GPU card to this plan's profile here (mdev); no hardware to touch in this build.
    log.info({ plan: p.planId }, 'plan started');
  }, 2);
  scheduler.register(PLAN_JOBS.warn, async (p) => {
    const [row] = await db.select().from(schema.reservablePlans).where(eq(schema.reservablePlans.id, String(p.planId)));
    if (row) await profileGone(row.subitemId, row.end, { minutes: Number(p.minutes), type: p.type === 'danger' ? 'danger' : 'warning' });
  }, 3);
  scheduler.register(PLAN_JOBS.end, async (p) => {
    await profileGone(String(p.subitemId), new Date(String(p.end)), 'stop');
  }, 0);

  /** Plans written without the planner (the seed) get their boundary jobs. */
  async function ensureJobs() {
    const rows = await db.select().from(schema.reservablePlans).where(gt(schema.reservablePlans.end, clock.now()));
    for (const row of rows) if ((await scheduler.pending(planKey(row.id))).length === 0) await planJobs(row);
  }

  return { kinds, enabledSubitems, plans, create, update, remove, ensureJobs };
}
export type Planner = ReturnType<typeof createPlanner>;
