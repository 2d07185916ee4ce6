import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, gt, inArray, or, sql } from 'drizzle-orm';
import {
  formatBookingDate,
  maxBookingDate,
  MAX_BOOKING_MINUTES,
  parseBookingDate,
  AT_REST,
  GOING_UP,
  RUNNING_STATUSES,
  statusIn,
  validateBooking,
  BOOKING_END_MSG_CODE,
  BOOKING_END_WARNINGS,
  type TAvailability,
  type TBooking,
  type TBookingItemType,
  type TBookingReturnType,
  type TItemBookings,
  type TItemPriority,
  type TRuleError,
  type TRuleEvent,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { BookingPlanUse } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';
import { ApiError, badRequest, conflict, forbidden, notFound, precondition } from '../../http/errors';
import { createScheduler } from '../../scheduler/scheduler';
import { desktopRoom } from '../../socket/bus';
import { actorOf, type Actor } from '../../auth/caller';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import type { DomainRow } from '../shared/domains';
import { availabilityOf, bookingsOverlapping, freeUntil, loadSpans, segmentsOf, victimsFor } from '../reservables/availability';
import { isBookingExempt, priorityOf } from '../reservables/priorities';
import { allowedProfiles } from '../reservables/profiles';
import { createPlanner } from '../reservables/planner';
import { audienceOf, findItem, itemFor, itemNames, mayBook, unitsOf, type BookingItem } from './items';
import { activeBooking, planOffersNow } from './start-check';
import { bookingView, type BookingRow } from './view';

const MINUTE = 60_000;
const floorMinute = (d: Date) => new Date(Math.floor(d.getTime() / MINUTE) * MINUTE);
const ruleError = (e: TRuleError, description: string) => new ApiError(e.kind, e.code, description, e.params ?? null);
/** The longest range a calendar asks for at once. */
const MAX_RANGE_DAYS = 400;

export function parseDate(s: string): Date {
  const d = parseBookingDate(s);
  if (!d) throw badRequest('validation_error', `Not a date: ${s}`);
  return d;
}

export function parseRange(startDate: string, endDate: string) {
  const from = parseDate(startDate);
  const to = parseDate(endDate);
  if (to <= from) throw badRequest('booking_new_event_end_error', 'The end of the range is before its start');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 24 * 60 * MINUTE) throw badRequest('bad_request', `At most ${MAX_RANGE_DAYS} days at once`);
  return { from, to };
}

export const BOOKING_JOBS = {
  start: 'booking.start',
  warn: 'booking.warn',
  end: 'booking.end',
} as const;
const bookingKey = (id: string) => `booking:${id}`;

/** Deletes an item's bookings (its GPU profile changed, or it is gone), with their jobs and live events. */
export async function dropItemBookings(ctx: AppContext, itemType: TBookingItemType, itemId: string) {
  const rows = await ctx.db
    .delete(schema.bookings)
    .where(and(eq(schema.bookings.itemType, itemType), eq(schema.bookings.itemId, itemId)))
    .returning();
  if (rows.length === 0) return;
  await ctx.db
    .update(schema.scheduledJobs)
    .set({ status: 'cancelled', doneAt: ctx.clock.now() })
    .where(and(eq(schema.scheduledJobs.status, 'pending'), inArray(sql`${schema.scheduledJobs.params}->>'key'`, rows.map((r) => bookingKey(r.id)))));
  const item = await findItem(ctx.db, itemType, itemId);
  const now = ctx.clock.now();
  for (const row of rows) {
    const view = bookingView(row, item?.name ?? '', now);
    for (const u of audienceOf(item, row.userId)) {
      ctx.bus.toUser(u, 'bookingitem_delete', view);
      ctx.bus.toUser(u, 'booking_delete', view);
    }
  }
}

/**
 * Bookings of GPU profiles (spec core §5 and §7, reference §2.9 and §6.2): the calendar of an item,
 * booking, moving and deleting with every rule checked here, start-now, and the scheduled work
 * that makes a booking real (booking_id at the start, warnings, stop at the end).
 */
export function createBookings(ctx: AppContext, lifecycle: DesktopLifecycle) {
  const { db, bus, clock, log } = ctx;
  const scheduler = createScheduler(db, clock, log);

  // One booking or plan change at a time: the rules read the calendar, then write to it.
  let lock: Promise<unknown> = Promise.resolve();
  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = lock.then(fn, fn);
    lock = run.catch(() => undefined);
    return run;
  }

  /* ------------------------------------------------------------------------- publishing */

  async function publishBooking(row: BookingRow, change: 'add' | 'update' | 'delete', item?: BookingItem | null) {
    const it = item === undefined ? await findItem(db, row.itemType, row.itemId) : item;
    const view = bookingView(row, it?.name ?? '', clock.now());
    for (const u of audienceOf(it, row.userId)) {
      bus.toUser(u, `bookingitem_${change}`, view);
      bus.toUser(u, `booking_${change}`, view);
    }
    // The desktops show their next booking.
    for (const d of it?.desktops ?? []) {
      const [fresh] = await db.select().from(schema.domains).where(eq(schema.domains.id, d.id));
      if (fresh) await lifecycle.publish(fresh);
    }
  }

  /* ---------------------------------------------------------------------- the calendar */

  /**
   * Bookings of the item and the availability of its profiles over [from, to), as the person with
   * `priority` (per profile) sees it: lower-priority bookings not yet started are overridable.
   */
  async function calendarOf(item: BookingItem, from: Date, to: Date, priority: Record<string, number>, excludeId?: string | null) {
    const needed = unitsOf(item);
    const spans = await loadSpans(db, item.profiles, from, to);
    const now = clock.now();
    const segments = new Map(
      item.profiles.map((p) => [p, segmentsOf(p, from, to, spans.plans, spans.bookings, excludeId, { priority: priority[p] ?? 0, now })]),
    );
    const availability: TAvailability[] = item.profiles.flatMap((p) => availabilityOf(p, segments.get(p)!, needed));
    const own = await db
      .select()
      .from(schema.bookings)
      .where(and(eq(schema.bookings.itemType, item.type), eq(schema.bookings.itemId, item.id), bookingsOverlapping(from, to)))
      .orderBy(asc(schema.bookings.start));
    const ruleEvents: TRuleEvent[] = [
      ...own.map((b) => ({ id: b.id, start: b.start, end: b.end, event_type: 'event' as const })),
      ...availability.map((a) => ({ id: a.id, start: parseBookingDate(a.start)!, end: parseBookingDate(a.end)!, event_type: a.event_type, units: a.units })),
    ];
    return { needed, spans, segments, availability, own, ruleEvents };
  }

  async function itemBookings(user: UserRow, type: TBookingItemType, id: string, from: Date, to: Date, returnType: TBookingReturnType): Promise<TItemBookings> {
    const actor = await actorOf(db, user);
    const item = await itemFor(db, actor, type, id);
    const cal = await calendarOf(item, from, to, (await priorityOf(db, actor, item.profiles, item.name)).priority);
    const now = clock.now();
    const events = cal.own.map((b) => bookingView(b, item.name, now));
    return [...(returnType === 'availability' ? [] : events), ...(returnType === 'event' ? [] : cal.availability)];
  }

  /** GET /bookings/user: bookings of the user's desktops, of the deployments those belong to or they (co-)own, and the user's own. */
  async function userBookings(user: UserRow, from: Date, to: Date): Promise<TBooking[]> {
    const desktops = await db
      .select({ id: schema.domains.id, tag: schema.domains.tag })
      .from(schema.domains)
      .where(and(eq(schema.domains.userId, user.id), eq(schema.domains.kind, 'desktop')));
    const desktopIds = desktops.map((d) => d.id);
    // Deployments the user owns or co-owns count as theirs too.
    const owned = await db
      .select({ id: schema.deployments.id })
      .from(schema.deployments)
      .where(or(eq(schema.deployments.userId, user.id), sql`${schema.deployments.coOwners} ? ${user.id}`));
    const tags = [...new Set([...desktops.map((d) => d.tag).filter((t): t is string => Boolean(t)), ...owned.map((d) => d.id)])];
    const rows = await db
      .select()
      .from(schema.bookings)
      .where(
        and(
          bookingsOverlapping(from, to),
          or(
            eq(schema.bookings.userId, user.id),
            desktopIds.length ? and(eq(schema.bookings.itemType, 'desktop'), inArray(schema.bookings.itemId, desktopIds)) : undefined,
            tags.length ? and(eq(schema.bookings.itemType, 'deployment'), inArray(schema.bookings.itemId, tags)) : undefined,
          ),
        ),
      )
      .orderBy(asc(schema.bookings.start));
    const names = await itemNames(db, rows);
    const now = clock.now();
    return rows.map((r) => bookingView(r, names.get(r.itemId) ?? '', now));
  }

  async function priorityFor(user: UserRow, type: TBookingItemType, id: string): Promise<TItemPriority> {
    const actor = await actorOf(db, user);
    const item = await itemFor(db, actor, type, id);
    return { ...(await priorityOf(db, actor, item.profiles, item.name)), units: unitsOf(item), reservables: { vgpus: item.profiles } };
  }

  const futureBookingsOf = async (userId: string, now: Date, exceptId?: string) => {
    const [row] = await db
      .select({ n: count() })
      .from(schema.bookings)
      .where(and(eq(schema.bookings.userId, userId), gt(schema.bookings.end, now), exceptId ? sql`${schema.bookings.id} <> ${exceptId}` : undefined));
    return row?.n ?? 0;
  };

  /** Checks every rule and answers the profile and plans the booking takes. */
  async function checkBooking(actor: Actor, item: BookingItem, start: Date, end: Date, opts: { editingId?: string; startNow?: boolean }) {
    if (item.profiles.length === 0) throw badRequest('booking_not_needed', 'This item needs no booking');
    if (item.type === 'desktop' && item.tag) throw precondition('needs_deployment_booking', 'Desktops of a deployment are booked with their deployment');
    const now = clock.now();
    const priority = await priorityOf(db, actor, item.profiles, item.name);
    const from = new Date(Math.min(start.getTime(), end.getTime()));
    const to = new Date(Math.max(start.getTime(), end.getTime(), from.getTime() + MINUTE));
    const cal = await calendarOf(item, from, to, priority.priority, opts.editingId);
    const broken = validateBooking({
      range: { start, end },
      now,
      priority,
      futureBookings: await futureBookingsOf(actor.id, now, opts.editingId),
      events: cal.ruleEvents,
      units: cal.needed,
      editingId: opts.editingId,
      startNow: opts.startNow,
    });
    if (broken) throw ruleError(broken, `The booking breaks the rule ${broken.code}`);
    if (opts.startNow && end.getTime() - start.getTime() > MAX_BOOKING_MINUTES * MINUTE) {
      throw precondition('bookings_max_time_reached', 'A booking that starts now lasts at most 12 hours', { minutes: MAX_BOOKING_MINUTES });
    }
    // The profile whose units cover the whole range — free ones first, else by displacing
    // lower-priority bookings — and the plans that make it up.
    for (const displacing of [false, true]) {
      for (const profile of item.profiles) {
        const segs = cal.segments.get(profile)!.filter((s) => s.start < end && s.end > start);
        if (segs.length === 0 || segs.some((s) => s.capacity <= 0)) continue;
        const victims = displacing ? victimsFor(segs, cal.spans.bookings, cal.needed) : segs.every((s) => s.free >= cal.needed) ? [] : null;
        if (!victims) continue;
        const planIds = [...new Set(segs.flatMap((s) => s.planIds))];
        const plans: BookingPlanUse[] = planIds.map((id) => {
          const p = cal.spans.plans.find((x) => x.id === id)!;
          return { plan_id: id, item_id: p.itemId, subitem_id: profile, priority: priority.priority[profile] ?? 0, units_booked: cal.needed };
        });
        return { profile, plans, units: cal.needed, victims };
      }
    }
    throw conflict('booking_does_not_fit_date', 'Nothing is available in the selected time');
  }

  /* ------------------------------------------------------------------------------ jobs */

  const planJobs = (row: BookingRow) => scheduler.scheduleSpan(bookingKey(row.id), row, BOOKING_JOBS, { bookingId: row.id }, BOOKING_END_WARNINGS);

  const bookingById = async (id: unknown) =>
    typeof id === 'string' ? (await db.select().from(schema.bookings).where(eq(schema.bookings.id, id)))[0] : undefined;

  /** At the start: the desktops (or the deployment's) hold the booking; the scheduler will stop them at its end. */
  async function beginBooking(row: BookingRow) {
    const item = await findItem(db, row.itemType, row.itemId);
    if (!item) return;
    const ids = item.desktops.map((d) => d.id);
    if (ids.length) {
      const updated = await db
        .update(schema.domains)
        .set({ bookingId: row.id, scheduledShutdownAt: row.end })
        .where(inArray(schema.domains.id, ids))
        .returning();
      for (const d of updated) await lifecycle.publish(d);
    }
    if (row.itemType === 'deployment') await db.update(schema.deployments).set({ bookingId: row.id }).where(eq(schema.deployments.id, row.itemId));
    log.info({ booking: row.id, item: row.itemId }, 'booking started');
  }

  const isRunning = (d: DomainRow) => statusIn(RUNNING_STATUSES, d.status);

  /** Warn the users of the item's running desktops that the booking ends soon (live `msg`). */
  async function warnBookingEnd(row: BookingRow, minutes: number, type: 'warning' | 'danger') {
    if (clock.now() >= row.end) return;
    const item = await findItem(db, row.itemType, row.itemId);
    for (const d of (item?.desktops ?? []).filter(isRunning)) {
      const msg = { type, msg_code: BOOKING_END_MSG_CODE, params: { date: formatBookingDate(row.end), minutes, name: d.name, desktop_id: d.id } };
      bus.toUser(d.userId, 'msg', msg);
      bus.toRoom(desktopRoom(d.id), 'msg', msg);
    }
  }

  /** At the end: the booking is released and the desktops are stopped (graceful, then forced by the lifecycle). */
  async function endBooking(row: BookingRow) {
    const released = await db
      .update(schema.domains)
      .set({ bookingId: null, scheduledShutdownAt: null })
      .where(eq(schema.domains.bookingId, row.id))
      .returning();
    await db.update(schema.deployments).set({ bookingId: null }).where(eq(schema.deployments.bookingId, row.id));
    // A booking that follows straight on keeps the desktops running.
    const following = await activeBooking(db, row.itemType, row.itemId, row.end);
    const item = await findItem(db, row.itemType, row.itemId);
    for (const d of item?.desktops ?? []) {
      if (following && following.id !== row.id) continue;
      if (isRunning(d) && !statusIn(GOING_UP, d.status)) {
        await lifecycle.stop(d, { reason: 'booking_end' }).catch((err) => log.warn({ err, desktop: d.id }, 'stop at booking end failed'));
      } else if (d.status === 'Starting') {
        await lifecycle.stop(d, { reason: 'booking_end' }).catch(() => undefined);
      }
    }
    for (const d of released) {
      const [fresh] = await db.select().from(schema.domains).where(eq(schema.domains.id, d.id));
      if (fresh) await lifecycle.publish(fresh);
    }
    log.info({ booking: row.id, item: row.itemId }, 'booking ended');
  }

  // At the same instant: ends first, then starts (back-to-back bookings), warnings last.
  scheduler.register(BOOKING_JOBS.end, async (p) => {
    const row = await bookingById(p.bookingId);
    if (row) await endBooking(row);
  }, 1);
  scheduler.register(BOOKING_JOBS.start, async (p) => {
    const row = await bookingById(p.bookingId);
    if (row && row.end > clock.now()) await beginBooking(row);
  }, 2);
  scheduler.register(BOOKING_JOBS.warn, async (p) => {
    const row = await bookingById(p.bookingId);
    if (row) await warnBookingEnd(row, Number(p.minutes), p.type === 'danger' ? 'danger' : 'warning');
  }, 3);

  const planner = createPlanner(ctx, lifecycle, scheduler, exclusive);

  /* --------------------------------------------------------------------------- changes */

  /** Lower-priority bookings (not yet started) give way to a higher-priority one; their people hear it live. */
  async function displace(ids: readonly string[]) {
    for (const id of ids) {
      const [gone] = await db.delete(schema.bookings).where(eq(schema.bookings.id, id)).returning();
      if (!gone) continue;
      await scheduler.cancel(bookingKey(id));
      await publishBooking(gone, 'delete');
      log.info({ booking: id }, 'booking displaced by a higher priority');
    }
  }

  async function create(user: UserRow, body: { element_id: string; element_type: TBookingItemType; title?: string; start: string; end: string; now?: boolean }) {
    const actor = await actorOf(db, user);
    const item = await itemFor(db, actor, body.element_type, body.element_id);
    // (a desktop pool too, ours: a teacher prepares its GPU desktops for the lesson now)
    if (body.now && item.type === 'deployment') throw badRequest('booking_now_only_desktops', 'Only a desktop or a desktop pool can be booked to start now');
    return exclusive(async () => {
      const start = body.now ? floorMinute(clock.now()) : parseDate(body.start);
      const end = parseDate(body.end);
      const fit = await checkBooking(actor, item, start, end, { startNow: body.now });
      const [row] = await db
        .insert(schema.bookings)
        .values({
          id: randomUUID(),
          itemType: item.type,
          itemId: item.id,
          userId: user.id,
          title: body.title || item.name,
          units: fit.units,
          reservables: { vgpus: [fit.profile] },
          start,
          end,
          plans: fit.plans,
        })
        .returning();
      await displace(fit.victims);
      await planJobs(row!);
      if (row!.start <= clock.now()) await beginBooking(row!);
      await publishBooking(row!, 'add', item);
      return bookingView(row!, item.name, clock.now());
    });
  }

  /** A booking the caller may change: the booker, who may book the item, or an admin. */
  async function bookingFor(user: UserRow, id: string) {
    const row = await bookingById(id);
    if (!row) throw notFound('booking_not_found', 'Booking not found');
    const actor = await actorOf(db, user);
    const item = await findItem(db, row.itemType, row.itemId);
    if (row.userId !== user.id && !(item && mayBook(actor, item)) && actor.role !== 'admin') {
      throw forbidden('forbidden', 'Not enough rights on this booking');
    }
    return { row, item, actor };
  }

  async function update(user: UserRow, id: string, body: { title?: string; start: string; end: string }) {
    return exclusive(async () => {
      const { row, item, actor } = await bookingFor(user, id);
      if (!item) throw notFound('booking_not_found', 'The booked item no longer exists');
      if (row.start <= clock.now()) throw conflict('booking_not_editable', 'A booking that has started cannot be moved');
      const start = parseDate(body.start);
      const end = parseDate(body.end);
      const fit = await checkBooking(actor, item, start, end, { editingId: row.id });
      const [updated] = await db
        .update(schema.bookings)
        .set({ title: body.title ?? row.title, start, end, units: fit.units, reservables: { vgpus: [fit.profile] }, plans: fit.plans })
        .where(eq(schema.bookings.id, row.id))
        .returning();
      await displace(fit.victims);
      await planJobs(updated!);
      await publishBooking(updated!, 'update', item);
      return bookingView(updated!, item.name, clock.now());
    });
  }

  async function remove(user: UserRow, id: string) {
    return exclusive(async () => {
      const { row, item } = await bookingFor(user, id);
      const now = clock.now();
      if (row.start <= now && row.end > now && item?.desktops.some((d) => !statusIn(AT_REST, d.status))) {
        throw conflict(
          item.type === 'desktop' ? 'booking_desktop_delete_stop' : 'booking_deployment_delete_stop',
          'Stop the desktops before deleting a booking in progress',
        );
      }
      await db.delete(schema.bookings).where(eq(schema.bookings.id, row.id));
      await scheduler.cancel(bookingKey(row.id));
      const released = await db.update(schema.domains).set({ bookingId: null, scheduledShutdownAt: null }).where(eq(schema.domains.bookingId, row.id)).returning();
      await db.update(schema.deployments).set({ bookingId: null }).where(eq(schema.deployments.bookingId, row.id));
      await publishBooking(row, 'delete', item);
      for (const d of released) if (!item?.desktops.some((x) => x.id === d.id)) await lifecycle.publish(d);
      return {};
    });
  }

  /* -------------------------------------------------------------------------- start now */

  async function startNowLimit(actor: Actor, profiles: string[], name: string, ownItem: { type: TBookingItemType; id: string } | null) {
    const now = clock.now();
    const priority = await priorityOf(db, actor, profiles, name);
    const horizon = new Date(now.getTime() + MAX_BOOKING_MINUTES * MINUTE);
    const spans = await loadSpans(db, profiles, now, horizon);
    let until: Date | null = null;
    for (const p of profiles) {
      const u = freeUntil(segmentsOf(p, now, horizon, spans.plans, spans.bookings), now, 1);
      if (u && (!until || u > until)) until = u;
    }
    if (until && ownItem) {
      // The item's own next booking ends the free time.
      const [next] = await db
        .select()
        .from(schema.bookings)
        .where(and(eq(schema.bookings.itemType, ownItem.type), eq(schema.bookings.itemId, ownItem.id), gt(schema.bookings.end, now)))
        .orderBy(asc(schema.bookings.start))
        .limit(1);
      if (next) until = next.start <= now ? null : next.start < until ? next.start : until;
    }
    return maxBookingDate({
      now,
      priority,
      exempt: isBookingExempt(actor.role),
      planNow: await planOffersNow(db, profiles, now),
      availableUntil: until,
    });
  }

  /** GET /booking/max_booking_date/{desktopId} */
  async function maxDate(user: UserRow, desktopId: string) {
    const actor = await actorOf(db, user);
    const item = await itemFor(db, actor, 'desktop', desktopId);
    if (item.profiles.length === 0) throw badRequest('booking_not_needed', 'This desktop needs no booking');
    if (item.tag && !isBookingExempt(actor.role)) throw precondition('needs_deployment_booking', 'Desktops of a deployment are booked with their deployment');
    const r = await startNowLimit(actor, item.profiles, item.name, { type: 'desktop', id: item.id });
    if ('error' in r) throw ruleError(r.error, `Cannot start now: ${r.error.code}`);
    return { max_booking_date: formatBookingDate(r.date) };
  }

  /** GET /booking/reservables_available: profiles the user may pick that could start now. */
  async function reservablesAvailable(user: UserRow) {
    const actor = await actorOf(db, user);
    const out = [];
    for (const p of await allowedProfiles(db, actor)) {
      const r = await startNowLimit(actor, [p.id], p.name, null);
      if ('date' in r) out.push({ id: p.id, name: p.name, description: p.description, max_booking_date: formatBookingDate(r.date) });
    }
    if (out.length === 0) throw precondition('no_available_profile', 'No GPU profile is available right now');
    return { reservables_available: out };
  }

  /** Start-up: every future booking and plan has its jobs; then the scheduler runs what is due. */
  async function start() {
    await planner.ensureJobs();
    const rows = await db.select().from(schema.bookings).where(gt(schema.bookings.end, clock.now()));
    for (const row of rows) if ((await scheduler.pending(bookingKey(row.id))).length === 0) await planJobs(row);
    await scheduler.start();
  }

  return {
    start,
    scheduler,
    /** One booking, plan or reservable change at a time. */
    exclusive,
    planner,
    itemBookings,
    userBookings,
    priorityFor,
    create,
    update,
    remove,
    maxDate,
    reservablesAvailable,
  };
}
export type Bookings = ReturnType<typeof createBookings>;

declare module 'fastify' {
  interface FastifyInstance {
    bookings: Bookings;
  }
}

