import type { ErrorKind } from './errors';
import {
  BOOKING_MIN_MINUTES,
  MAX_BOOKING_MINUTES,
  MIN_AUTOBOOKING_MINUTES,
  PLAN_MAX_DAYS,
  START_NOW_STEP_MINUTES,
  type TBookingEventType,
} from './bookings';

/**
 * The booking and planner rules of spec core §5 and spec 001 §5, as pure functions: the server
 * enforces them on every call and the calendar checks them before asking. Each answers null when
 * the rule holds, or the description_code (with its HTTP kind and params) when it is broken.
 */

export type TRuleError = { code: string; kind: ErrorKind; params?: Record<string, unknown> };
export type TInterval = { start: Date; end: Date };
/** An event of the calendar the rules look at: bookings (`event`) and availability segments. */
export type TRuleEvent = TInterval & { id: string; event_type: TBookingEventType; units?: number | 'Enough' };
export type TRulePriority = { forbid_time: number; max_time: number | null; max_items: number | null };

const MINUTE = 60_000;
const minutesBetween = (a: Date, b: Date) => (b.getTime() - a.getTime()) / MINUTE;
const floorMinute = (d: Date) => new Date(Math.floor(d.getTime() / MINUTE) * MINUTE);
export const overlaps = (a: TInterval, b: TInterval) => a.start < b.end && b.start < a.end;

/** The end cannot be before the start. */
export function ruleEndAfterStart(r: TInterval): TRuleError | null {
  return r.end.getTime() < r.start.getTime() ? { code: 'booking_new_event_end_error', kind: 'bad_request' } : null;
}

/** At least 5 minutes. */
export function ruleMinimumTime(r: TInterval): TRuleError | null {
  return minutesBetween(r.start, r.end) < BOOKING_MIN_MINUTES
    ? { code: 'booking_minimum_time', kind: 'bad_request', params: { minutes: BOOKING_MIN_MINUTES } }
    : null;
}

/** The start cannot be in the past (minute precision: the current minute still counts as now). */
export function ruleStartNotPast(r: TInterval, now: Date): TRuleError | null {
  return r.start < floorMinute(now) ? { code: 'booking_new_event_start_error', kind: 'bad_request' } : null;
}

/** The start must be later than now plus forbid_time minutes. */
export function ruleForbidTime(r: TInterval, now: Date, forbidMinutes: number): TRuleError | null {
  if (forbidMinutes <= 0) return null;
  return r.start.getTime() < floorMinute(now).getTime() + forbidMinutes * MINUTE
    ? { code: 'not_enough_advanced_time', kind: 'precondition_required', params: { minutes: forbidMinutes } }
    : null;
}

/** The duration must not exceed max_time minutes (null = no limit). */
export function ruleMaxTime(r: TInterval, maxMinutes: number | null): TRuleError | null {
  if (maxMinutes == null) return null;
  return minutesBetween(r.start, r.end) > maxMinutes
    ? { code: 'bookings_max_time_reached', kind: 'precondition_required', params: { minutes: maxMinutes } }
    : null;
}

/** A user may hold at most max_items future bookings (null = no limit); `held` excludes the edited one. */
export function ruleMaxItems(held: number, maxItems: number | null): TRuleError | null {
  if (maxItems == null) return null;
  return held >= maxItems ? { code: 'booking_max_items_exceeded', kind: 'precondition_required', params: { max: maxItems } } : null;
}

/** No overlap with other events unless they are available or overridable; the edited event is excluded. */
export function ruleNoOverlap(r: TInterval, events: readonly TRuleEvent[], editingId?: string | null): TRuleError | null {
  const clash = events.some(
    (e) => e.id !== editingId && e.event_type !== 'available' && e.event_type !== 'overridable' && overlaps(r, e),
  );
  return clash ? { code: 'booking_new_event_overlap_error', kind: 'conflict' } : null;
}

const enoughUnits = (units: number | 'Enough' | undefined, needed: number) => units === undefined || units === 'Enough' || units >= needed;

/**
 * The whole range must be covered by available segments with room for `needed` units, or by
 * overridable ones (the server marks them so only when displacing frees enough); otherwise
 * nothing is available in the selected area.
 */
export function ruleFitsAvailability(r: TInterval, availability: readonly TRuleEvent[], needed = 1): TRuleError | null {
  const usable = availability
    .filter((a) => ((a.event_type === 'available' && enoughUnits(a.units, needed)) || a.event_type === 'overridable') && overlaps(r, a))
    .sort((a, b) => a.start.getTime() - b.start.getTime());
  let covered = r.start.getTime();
  for (const a of usable) {
    if (a.start.getTime() > covered) break;
    covered = Math.max(covered, a.end.getTime());
    if (covered >= r.end.getTime()) return null;
  }
  return { code: 'booking_does_not_fit_date', kind: 'conflict' };
}

export type TBookingCheck = {
  range: TInterval;
  now: Date;
  priority: TRulePriority;
  /** The user's future bookings (end after now), not counting the edited one. */
  futureBookings: number;
  /** Bookings of the item (and of other items that compete for it) plus the availability segments. */
  events: readonly TRuleEvent[];
  /** Units one booking of the item takes (one per desktop). */
  units?: number;
  /** The id of the booking being moved (PUT): excluded from overlap and max items. */
  editingId?: string | null;
  /** Start now: the start is the server's now, so the past and forbid rules do not apply. */
  startNow?: boolean;
};

/** Every booking rule in the order the calendar reports them; the first broken one wins. */
export function validateBooking(c: TBookingCheck): TRuleError | null {
  const { range, now, priority } = c;
  return (
    ruleEndAfterStart(range) ??
    ruleMinimumTime(range) ??
    (c.startNow ? null : ruleStartNotPast(range, now)) ??
    (c.startNow ? null : ruleForbidTime(range, now, priority.forbid_time)) ??
    ruleMaxTime(range, priority.max_time) ??
    (c.editingId ? null : ruleMaxItems(c.futureBookings, priority.max_items)) ??
    // Bookings of the item overlap; planned time without free units is "nothing available" (as the original server answers).
    ruleNoOverlap(range, c.events.filter((e) => e.event_type === 'event'), c.editingId) ??
    ruleFitsAvailability(range, c.events, c.units ?? 1)
  );
}

/* ------------------------------------------------------------------------------ start now */

export type TMaxBookingCheck = {
  now: Date;
  priority: TRulePriority;
  /** Admins and managers: the forbid time does not apply. */
  exempt: boolean;
  /** Whether a current plan offers the desktop's profile. */
  planNow: boolean;
  /** Until when the profile stays available with a free unit for this item from now (null = not now). */
  availableUntil: Date | null;
};

/**
 * The latest end of a start-now booking: now + min(max_time, availability, 12 h), at least 30
 * minutes, or the reason it cannot start now (reference §6.2).
 */
export function maxBookingDate(c: TMaxBookingCheck): { date: Date } | { error: TRuleError } {
  const { now, priority } = c;
  if (!c.planNow) return { error: { code: 'current_plan_doesnt_match', kind: 'precondition_required' } };
  if (!c.exempt && priority.forbid_time > 0)
    return { error: { code: 'not_enough_advanced_time', kind: 'precondition_required', params: { minutes: priority.forbid_time } } };
  if (priority.max_time != null && priority.max_time < MIN_AUTOBOOKING_MINUTES)
    return { error: { code: 'bookings_max_time_reached', kind: 'precondition_required', params: { minutes: priority.max_time } } };
  let limit = now.getTime() + MAX_BOOKING_MINUTES * MINUTE;
  if (priority.max_time != null) limit = Math.min(limit, now.getTime() + priority.max_time * MINUTE);
  if (c.availableUntil) limit = Math.min(limit, c.availableUntil.getTime());
  if (!c.availableUntil || limit - now.getTime() < MIN_AUTOBOOKING_MINUTES * MINUTE)
    return { error: { code: 'not_enough_time_to_start', kind: 'precondition_required', params: { minutes: MIN_AUTOBOOKING_MINUTES } } };
  return { date: floorMinute(new Date(limit)) };
}

/** The end times start-now offers: every 30 minutes from now up to the max booking date. */
export function startNowEndOptions(now: Date, max: Date): Date[] {
  const out: Date[] = [];
  for (let t = now.getTime() + START_NOW_STEP_MINUTES * MINUTE; t <= max.getTime(); t += START_NOW_STEP_MINUTES * MINUTE) out.push(new Date(t));
  return out;
}

/* -------------------------------------------------------------------------------- planner */

export type TPlanCheck = {
  range: TInterval;
  now: Date;
  /** Other plans of the same card (a card offers one profile at a time). */
  plans: readonly (TInterval & { id: string })[];
  editingId?: string | null;
  /** When editing a plan already under way, its start may stay in the past. */
  startUnchanged?: boolean;
  /** Minutes of notice a plan needs (0 = none). */
  forbidMinutes?: number;
};

/** The planner's rules (spec 001 §5): past, end before start, minimum, maximum, forbid, and one plan at a time. */
export function validatePlan(c: TPlanCheck): TRuleError | null {
  const { range, now } = c;
  if (range.end.getTime() < range.start.getTime()) return { code: 'planner_end_before_start', kind: 'bad_request' };
  if (minutesBetween(range.start, range.end) < BOOKING_MIN_MINUTES)
    return { code: 'planner_minimum_time', kind: 'bad_request', params: { minutes: BOOKING_MIN_MINUTES } };
  if (minutesBetween(range.start, range.end) > PLAN_MAX_DAYS * 24 * 60)
    return { code: 'planner_maximum_time', kind: 'bad_request', params: { days: PLAN_MAX_DAYS } };
  if (!c.startUnchanged) {
    if (range.start < floorMinute(now)) return { code: 'planner_past_booking', kind: 'bad_request' };
    const forbid = c.forbidMinutes ?? 0;
    if (forbid > 0 && range.start.getTime() < floorMinute(now).getTime() + forbid * MINUTE)
      return { code: 'planner_forbid', kind: 'bad_request', params: { minutes: forbid } };
  }
  if (range.end < now) return { code: 'planner_past_booking', kind: 'bad_request' };
  if (c.plans.some((p) => p.id !== c.editingId && overlaps(range, p))) return { code: 'plan_overlap', kind: 'conflict' };
  return null;
}
