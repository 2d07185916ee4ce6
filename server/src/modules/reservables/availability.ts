import { and, gt, inArray, lt, sql } from 'drizzle-orm';
import { formatBookingDate, type TAvailability } from '@vdi/contracts';
import { schema, type Db } from '../../db';

/**
 * Availability of a profile over time: the plans give capacity (units per card), bookings take
 * units. Pure functions over rows, and the loader that reads the rows of a time range.
 */

export type PlanSpan = { id: string; itemId: string; subitemId: string; start: Date; end: Date; units: number };
/** `priority`: the booker's priority when it was made (a higher one may displace it before it starts). */
export type BookingSpan = { id: string; start: Date; end: Date; units: number; profiles: readonly string[]; priority: number };
export type Segment = {
  start: Date;
  end: Date;
  capacity: number;
  used: number;
  free: number;
  planIds: string[];
  bookingIds: string[];
  /** Units held by bookings that the asking person may displace, and those bookings. */
  displaceable: number;
  displaceableIds: string[];
};
/** Who asks: their priority for the profile; bookings of lower priority that have not started may be displaced. */
export type Asker = { priority: number; now: Date };

/** Cuts [from, to) at every plan and booking edge and measures each piece for one profile. */
export function segmentsOf(
  profile: string,
  from: Date,
  to: Date,
  plans: readonly PlanSpan[],
  bookings: readonly BookingSpan[],
  excludeBookingId?: string | null,
  asker?: Asker,
): Segment[] {
  const ps = plans.filter((p) => p.subitemId === profile && p.start < to && p.end > from);
  const bs = bookings.filter((b) => b.id !== excludeBookingId && b.profiles.includes(profile) && b.start < to && b.end > from);
  const cuts = new Set<number>([from.getTime(), to.getTime()]);
  for (const x of [...ps, ...bs]) for (const t of [x.start.getTime(), x.end.getTime()]) if (t > from.getTime() && t < to.getTime()) cuts.add(t);
  const times = [...cuts].sort((a, b) => a - b);
  const out: Segment[] = [];
  for (let i = 0; i + 1 < times.length; i++) {
    const a = times[i]!;
    const b = times[i + 1]!;
    const covering = <T extends { start: Date; end: Date }>(list: readonly T[]) => list.filter((x) => x.start.getTime() <= a && x.end.getTime() >= b);
    const inPlans = covering(ps);
    const inBookings = covering(bs);
    const capacity = inPlans.reduce((n, p) => n + p.units, 0);
    const used = inBookings.reduce((n, x) => n + x.units, 0);
    const lower = asker ? inBookings.filter((x) => x.priority < asker.priority && x.start > asker.now) : [];
    out.push({
      start: new Date(a), end: new Date(b), capacity, used, free: capacity - used,
      planIds: inPlans.map((p) => p.id), bookingIds: inBookings.map((x) => x.id),
      displaceable: lower.reduce((n, x) => n + x.units, 0), displaceableIds: lower.map((x) => x.id),
    });
  }
  return out;
}

/**
 * Calendar background events: planned time, available where `needed` units are free, overridable
 * where displacing lower-priority bookings would free them, else unavailable.
 */
export function availabilityOf(profile: string, segments: readonly Segment[], needed: number): TAvailability[] {
  const out: (TAvailability & { _start: Date; _end: Date })[] = [];
  for (const s of segments) {
    if (s.capacity <= 0) continue;
    const type = s.free >= needed ? 'available' : s.free + s.displaceable >= needed ? 'overridable' : 'unavailable';
    const free = Math.max(0, s.free);
    const last = out[out.length - 1];
    if (last && last._end.getTime() === s.start.getTime() && last.event_type === type && last.units === free) {
      last._end = s.end;
      last.end = formatBookingDate(s.end);
      last.ids = [...new Set([...last.ids, ...s.planIds])];
      continue;
    }
    out.push({
      _start: s.start,
      _end: s.end,
      id: `${profile}/${formatBookingDate(s.start)}`,
      start: formatBookingDate(s.start),
      end: formatBookingDate(s.end),
      units: free,
      ids: s.planIds,
      subitem_id: profile,
      event_type: type,
    });
  }
  return out.map(({ _start, _end, ...a }) => a);
}

/** Until when `needed` units stay free without a break from `from` (null when not free at `from`). */
export function freeUntil(segments: readonly Segment[], from: Date, needed: number): Date | null {
  let until: Date | null = null;
  for (const s of segments) {
    if (s.end <= from) continue;
    if (s.start.getTime() > (until ?? from).getTime()) break;
    if (s.capacity <= 0 || s.free < needed) break;
    until = s.end;
  }
  return until;
}

/** Bookings that would lack a unit somewhere (used above capacity), per profile. */
export function strandedBookings(profiles: readonly string[], from: Date, to: Date, plans: readonly PlanSpan[], bookings: readonly BookingSpan[]): string[] {
  const out = new Set<string>();
  for (const profile of profiles) {
    for (const s of segmentsOf(profile, from, to, plans, bookings)) if (s.used > s.capacity) for (const id of s.bookingIds) out.add(id);
  }
  return [...out];
}

export const planSpan = (p: typeof schema.reservablePlans.$inferSelect): PlanSpan => ({ id: p.id, itemId: p.itemId, subitemId: p.subitemId, start: p.start, end: p.end, units: p.units });
export const bookingSpan = (b: typeof schema.bookings.$inferSelect): BookingSpan => ({
  id: b.id, start: b.start, end: b.end, units: b.units, profiles: b.reservables.vgpus, priority: Math.max(0, ...b.plans.map((p) => p.priority)),
});

/**
 * The bookings to displace so that `needed` units are free in every segment: lowest priority
 * first, and of those the most recently starting first. Null when that cannot free enough.
 */
export function victimsFor(segments: readonly Segment[], bookings: readonly BookingSpan[], needed: number): string[] | null {
  const chosen = new Set<string>();
  for (const s of segments) {
    let free = s.free + bookings.filter((b) => chosen.has(b.id) && s.bookingIds.includes(b.id)).reduce((n, b) => n + b.units, 0);
    const candidates = bookings
      .filter((b) => s.displaceableIds.includes(b.id) && !chosen.has(b.id))
      .sort((a, b) => a.priority - b.priority || b.start.getTime() - a.start.getTime());
    for (const b of candidates) {
      if (free >= needed) break;
      chosen.add(b.id);
      free += b.units;
    }
    if (free < needed) return null;
  }
  return [...chosen];
}

/** Bookings that touch [from, to). */
export const bookingsOverlapping = (from: Date, to: Date) => and(lt(schema.bookings.start, to), gt(schema.bookings.end, from));

/** The plans and bookings of some profiles that touch [from, to). */
export async function loadSpans(db: Db, profiles: readonly string[], from: Date, to: Date) {
  if (profiles.length === 0) return { plans: [] as PlanSpan[], bookings: [] as BookingSpan[] };
  const [plans, bookings] = await Promise.all([
    db
      .select()
      .from(schema.reservablePlans)
      .where(and(inArray(schema.reservablePlans.subitemId, [...profiles]), lt(schema.reservablePlans.start, to), gt(schema.reservablePlans.end, from))),
    db
      .select()
      .from(schema.bookings)
      .where(
        and(
          bookingsOverlapping(from, to),
          sql`${schema.bookings.reservables}->'vgpus' ?| array[${sql.join(profiles.map((p) => sql`${p}`), sql`, `)}]::text[]`,
        ),
      ),
  ]);
  return { plans: plans.map(planSpan), bookings: bookings.map(bookingSpan) };
}
