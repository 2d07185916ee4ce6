import { describe, expect, it } from 'vitest';
import {
  maxBookingDate,
  ruleEndAfterStart,
  ruleFitsAvailability,
  ruleForbidTime,
  ruleMaxItems,
  ruleMaxTime,
  ruleMinimumTime,
  ruleNoOverlap,
  ruleStartNotPast,
  startNowEndOptions,
  validateBooking,
  validatePlan,
  type TRuleEvent,
} from './booking-rules';
import { formatBookingDate, parseBookingDate } from './bookings';

const NOW = new Date('2026-03-02T10:00:30Z');
const at = (hhmm: string, day = '2026-03-02') => new Date(`${day}T${hhmm}:00Z`);
const range = (a: string, b: string) => ({ start: at(a), end: at(b) });
const ev = (id: string, a: string, b: string, event_type: TRuleEvent['event_type'], units?: number): TRuleEvent => ({ id, ...range(a, b), event_type, units });
const PRIORITY = { forbid_time: 0, max_time: 60, max_items: 1 };

describe('booking dates on the wire', () => {
  it('formats %Y-%m-%dT%H:%M%z in UTC', () => {
    expect(formatBookingDate(new Date('2025-05-01T10:00:59.900Z'))).toBe('2025-05-01T10:00+0000');
  });
  it('accepts +0000, +00:00, Z, seconds and other zones; refuses dates without a zone or impossible ones', () => {
    const t = Date.parse('2025-05-01T10:00:00Z');
    expect(parseBookingDate('2025-05-01T10:00+0000')?.getTime()).toBe(t);
    expect(parseBookingDate('2025-05-01T10:00+00:00')?.getTime()).toBe(t);
    expect(parseBookingDate('2025-05-01T10:00:00.000Z')?.getTime()).toBe(t);
    expect(parseBookingDate('2025-05-01T12:00+02:00')?.getTime()).toBe(t);
    expect(parseBookingDate('2025-05-01T10:00 0000')?.getTime()).toBe(t);
    expect(parseBookingDate('2025-05-01T10:00')).toBeNull();
    expect(parseBookingDate('2025-05-01 10:00')).toBeNull();
    expect(parseBookingDate('2025-02-30T10:00Z')).toBeNull();
    expect(parseBookingDate('tomorrow')).toBeNull();
  });
});

describe('booking rules, each broken and kept', () => {
  it('the end cannot be before the start', () => {
    expect(ruleEndAfterStart(range('11:00', '10:00'))?.code).toBe('booking_new_event_end_error');
    expect(ruleEndAfterStart(range('10:00', '11:00'))).toBeNull();
  });
  it('lasts at least 5 minutes', () => {
    expect(ruleMinimumTime(range('10:00', '10:04'))).toMatchObject({ code: 'booking_minimum_time', params: { minutes: 5 } });
    expect(ruleMinimumTime(range('10:00', '10:05'))).toBeNull();
  });
  it('cannot start in the past (the current minute counts as now)', () => {
    expect(ruleStartNotPast(range('09:59', '10:30'), NOW)?.code).toBe('booking_new_event_start_error');
    expect(ruleStartNotPast(range('10:00', '10:30'), NOW)).toBeNull();
  });
  it('starts after now plus the forbid time', () => {
    expect(ruleForbidTime(range('10:20', '10:40'), NOW, 30)).toMatchObject({ code: 'not_enough_advanced_time', kind: 'precondition_required', params: { minutes: 30 } });
    expect(ruleForbidTime(range('10:30', '10:40'), NOW, 30)).toBeNull();
    expect(ruleForbidTime(range('10:00', '10:40'), NOW, 0)).toBeNull();
  });
  it('lasts at most max_time minutes', () => {
    expect(ruleMaxTime(range('11:00', '12:01'), 60)).toMatchObject({ code: 'bookings_max_time_reached', params: { minutes: 60 } });
    expect(ruleMaxTime(range('11:00', '12:00'), 60)).toBeNull();
    expect(ruleMaxTime(range('11:00', '23:00'), null)).toBeNull();
  });
  it('holds at most max_items future bookings', () => {
    expect(ruleMaxItems(1, 1)).toMatchObject({ code: 'booking_max_items_exceeded', kind: 'precondition_required', params: { max: 1 } });
    expect(ruleMaxItems(0, 1)).toBeNull();
    expect(ruleMaxItems(50, null)).toBeNull();
  });
  it('does not overlap other events unless available or overridable; the edited one is excluded', () => {
    const events = [ev('mine', '11:00', '12:00', 'event'), ev('free', '08:00', '20:00', 'available'), ev('over', '08:00', '20:00', 'overridable')];
    expect(ruleNoOverlap(range('11:30', '12:30'), events)?.code).toBe('booking_new_event_overlap_error');
    expect(ruleNoOverlap(range('12:00', '12:30'), events)).toBeNull();
    expect(ruleNoOverlap(range('11:30', '12:30'), events, 'mine')).toBeNull();
    expect(ruleNoOverlap(range('13:00', '13:30'), [ev('u', '13:00', '14:00', 'unavailable')])?.code).toBe('booking_new_event_overlap_error');
  });
  it('fits availability with enough units; else nothing is available in the selected area', () => {
    const avail = [ev('a', '08:00', '12:00', 'available', 3), ev('b', '12:00', '14:00', 'overridable', 3)];
    expect(ruleFitsAvailability(range('11:00', '13:00'), avail)).toBeNull();
    expect(ruleFitsAvailability(range('13:00', '15:00'), avail)?.code).toBe('booking_does_not_fit_date');
    expect(ruleFitsAvailability(range('11:00', '12:00'), avail, 4)?.code).toBe('booking_does_not_fit_date');
    expect(ruleFitsAvailability(range('11:00', '12:00'), avail, 3)).toBeNull();
    // Overridable time counts whatever its free units: displacing makes the room.
    expect(ruleFitsAvailability(range('12:00', '13:00'), [ev('o', '12:00', '14:00', 'overridable', 0)], 2)).toBeNull();
    // A gap between segments breaks the fit.
    expect(ruleFitsAvailability(range('09:00', '11:00'), [ev('x', '08:00', '09:30', 'available'), ev('y', '09:40', '12:00', 'available')])?.code).toBe('booking_does_not_fit_date');
  });
});

describe('validateBooking', () => {
  const base = {
    now: NOW,
    priority: PRIORITY,
    futureBookings: 0,
    events: [ev('a', '08:00', '20:00', 'available', 2)],
  };
  it('passes a booking that keeps every rule', () => {
    expect(validateBooking({ ...base, range: range('11:00', '12:00') })).toBeNull();
  });
  it('reports the first broken rule', () => {
    expect(validateBooking({ ...base, range: range('12:00', '11:00') })?.code).toBe('booking_new_event_end_error');
    expect(validateBooking({ ...base, range: range('09:00', '09:30') })?.code).toBe('booking_new_event_start_error');
    expect(validateBooking({ ...base, range: range('11:00', '13:00') })?.code).toBe('bookings_max_time_reached');
    expect(validateBooking({ ...base, futureBookings: 1, range: range('11:00', '12:00') })?.code).toBe('booking_max_items_exceeded');
    expect(validateBooking({ ...base, range: range('19:30', '20:30') })?.code).toBe('booking_does_not_fit_date');
  });
  it('moving a booking does not count it against max items nor against itself', () => {
    const events = [...base.events, ev('b1', '11:00', '12:00', 'event')];
    expect(validateBooking({ ...base, events, futureBookings: 0, editingId: 'b1', range: range('11:30', '12:30') })).toBeNull();
    expect(validateBooking({ ...base, events, futureBookings: 1, range: range('11:30', '12:30') })?.code).toBe('booking_max_items_exceeded');
  });
  it('start now skips the past and forbid rules', () => {
    const start = new Date('2026-03-02T10:00:00Z');
    const r = { start, end: at('10:30') };
    expect(validateBooking({ ...base, priority: { ...PRIORITY, forbid_time: 10 }, range: r })?.code).toBe('not_enough_advanced_time');
    expect(validateBooking({ ...base, priority: { ...PRIORITY, forbid_time: 10 }, range: r, startNow: true })).toBeNull();
  });
});

describe('start now', () => {
  const c = { now: NOW, priority: PRIORITY, exempt: false, planNow: true, availableUntil: at('20:00') };
  it('answers now + min(max_time, availability, 12 h)', () => {
    expect(maxBookingDate(c)).toEqual({ date: new Date('2026-03-02T11:00:00Z') });
    expect(maxBookingDate({ ...c, priority: { ...PRIORITY, max_time: null } })).toEqual({ date: new Date('2026-03-02T20:00:00Z') });
    expect(maxBookingDate({ ...c, priority: { ...PRIORITY, max_time: null }, availableUntil: at('12:00', '2026-03-05') })).toEqual({
      date: new Date('2026-03-02T22:00:00Z'),
    });
  });
  it('refuses when no plan offers the profile, when there is under 30 minutes, with a forbid time, or a max time under 30', () => {
    expect(maxBookingDate({ ...c, planNow: false })).toMatchObject({ error: { code: 'current_plan_doesnt_match' } });
    expect(maxBookingDate({ ...c, availableUntil: at('10:20') })).toMatchObject({ error: { code: 'not_enough_time_to_start' } });
    expect(maxBookingDate({ ...c, availableUntil: null })).toMatchObject({ error: { code: 'not_enough_time_to_start' } });
    expect(maxBookingDate({ ...c, priority: { ...PRIORITY, forbid_time: 15 } })).toMatchObject({ error: { code: 'not_enough_advanced_time' } });
    expect(maxBookingDate({ ...c, priority: { ...PRIORITY, forbid_time: 15 }, exempt: true })).toHaveProperty('date');
    expect(maxBookingDate({ ...c, priority: { ...PRIORITY, max_time: 20 } })).toMatchObject({ error: { code: 'bookings_max_time_reached' } });
  });
  it('offers end times in 30-minute steps up to the max booking date', () => {
    expect(startNowEndOptions(NOW, new Date(NOW.getTime() + 95 * 60_000)).map((d) => d.getTime() - NOW.getTime())).toEqual([30, 60, 90].map((m) => m * 60_000));
    expect(startNowEndOptions(NOW, new Date(NOW.getTime() + 29 * 60_000))).toEqual([]);
  });
});

describe('planner rules, each broken and kept', () => {
  const plans = [{ id: 'p1', ...range('12:00', '14:00') }];
  const ok = (r: { start: Date; end: Date }, extra = {}) => validatePlan({ range: r, now: NOW, plans, ...extra });
  it('past', () => {
    expect(ok(range('09:00', '11:00'))?.code).toBe('planner_past_booking');
    expect(ok(range('10:00', '11:00'))).toBeNull();
    // A plan under way keeps its start when edited.
    expect(ok(range('09:00', '11:00'), { startUnchanged: true })).toBeNull();
    expect(ok({ start: at('08:00'), end: at('09:00') }, { startUnchanged: true })?.code).toBe('planner_past_booking');
  });
  it('end before start', () => {
    expect(ok(range('11:00', '10:30'))?.code).toBe('planner_end_before_start');
  });
  it('minimum time', () => {
    expect(ok(range('11:00', '11:03'))?.code).toBe('planner_minimum_time');
    expect(ok(range('11:00', '11:05'))).toBeNull();
  });
  it('maximum time', () => {
    expect(ok({ start: at('11:00'), end: at('11:00', '2027-03-10') })?.code).toBe('planner_maximum_time');
    expect(ok({ start: at('14:00'), end: at('11:00', '2027-03-01') })).toBeNull();
  });
  it('forbid', () => {
    expect(ok(range('10:10', '11:00'), { forbidMinutes: 30 })?.code).toBe('planner_forbid');
    expect(ok(range('10:30', '11:00'), { forbidMinutes: 30 })).toBeNull();
  });
  it('one profile at a time per card (the edited plan excluded)', () => {
    expect(ok(range('13:00', '15:00'))?.code).toBe('plan_overlap');
    expect(ok(range('14:00', '15:00'))).toBeNull();
    expect(ok(range('13:00', '15:00'), { editingId: 'p1' })).toBeNull();
  });
});

describe('a full slot', () => {
  it('is nothing available (not an overlap), as the original server answers', () => {
    const events = [ev('u', '11:00', '12:00', 'unavailable', 0), ev('a', '12:00', '20:00', 'available', 3)];
    const c = { now: NOW, priority: PRIORITY, futureBookings: 0, events };
    expect(validateBooking({ ...c, range: range('11:30', '12:30') })?.code).toBe('booking_does_not_fit_date');
    expect(validateBooking({ ...c, range: range('12:00', '12:30') })).toBeNull();
  });
});
