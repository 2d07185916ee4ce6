import { describe, expect, it } from 'vitest';
import { availabilityOf, freeUntil, segmentsOf, strandedBookings, victimsFor, type BookingSpan, type PlanSpan } from './availability';
import { allowedMatches, ruleFor, type PriorityRuleRow } from './priorities';

const t = (hh: number, mm = 0) => new Date(Date.UTC(2026, 2, 2, hh, mm));
const plan = (id: string, a: number, b: number, units = 2, subitemId = '2Q'): PlanSpan => ({ id, itemId: 'card', subitemId, start: t(a), end: t(b), units });
const booking = (id: string, a: number, b: number, units = 1, priority = 1): BookingSpan => ({ id, start: t(a), end: t(b), units, profiles: ['2Q'], priority });

describe('availability of a profile', () => {
  const plans = [plan('p1', 8, 12), plan('p2', 12, 16), plan('x', 8, 16, 5, '4Q')];
  it('cuts time at every edge and counts free units', () => {
    const segs = segmentsOf('2Q', t(6), t(18), plans, [booking('b1', 10, 13), booking('b2', 11, 12)]);
    expect(segs.map((s) => [s.start.getUTCHours(), s.end.getUTCHours(), s.capacity, s.free])).toEqual([
      [6, 8, 0, 0], [8, 10, 2, 2], [10, 11, 2, 1], [11, 12, 2, 0], [12, 13, 2, 1], [13, 16, 2, 2], [16, 18, 0, 0],
    ]);
  });
  it('shows planned time as available or unavailable for the units needed, merged', () => {
    const segs = segmentsOf('2Q', t(6), t(18), plans, [booking('b1', 10, 13), booking('b2', 11, 12)]);
    expect(availabilityOf('2Q', segs, 1).map((a) => [a.start.slice(11, 16), a.end.slice(11, 16), a.event_type, a.units])).toEqual([
      ['08:00', '10:00', 'available', 2], ['10:00', '11:00', 'available', 1], ['11:00', '12:00', 'unavailable', 0],
      ['12:00', '13:00', 'available', 1], ['13:00', '16:00', 'available', 2],
    ]);
    // A deployment of two desktops needs two units.
    expect(availabilityOf('2Q', segs, 2).filter((a) => a.event_type === 'available').map((a) => a.start.slice(11, 16))).toEqual(['08:00', '13:00']);
  });
  it('a higher priority sees lower-priority bookings not yet started as overridable, and displaces the fewest', () => {
    const bookings = [booking('low1', 10, 12, 1, 1), booking('low2', 11, 12, 1, 1), booking('started', 8, 12, 0, 1), booking('peer', 10, 11, 1, 50)];
    const asker = { priority: 50, now: t(9) };
    const segs = segmentsOf('2Q', t(10), t(12), [plan('p', 8, 16, 2)], bookings, null, asker);
    // 10–11: peer + low1 hold both units (low1 displaceable); 11–12: low1 + low2 (both displaceable).
    expect(availabilityOf('2Q', segs, 1).map((a) => [a.start.slice(11, 16), a.event_type])).toEqual([['10:00', 'overridable']]);
    expect(victimsFor(segs, bookings, 1)).toEqual(['low1']);
    expect(victimsFor(segs, bookings, 2)).toBeNull();
    // The same bookings are simply unavailable to a peer of the lower priority.
    const peerSegs = segmentsOf('2Q', t(10), t(12), [plan('p', 8, 16, 2)], bookings, null, { priority: 1, now: t(9) });
    expect(availabilityOf('2Q', peerSegs, 1).map((a) => a.event_type)).toEqual(['unavailable']);
  });

  it('a moved booking does not count against itself', () => {
    const segs = segmentsOf('2Q', t(8), t(12), plans, [booking('b1', 8, 12, 2)], 'b1');
    expect(segs.every((s) => s.free === 2)).toBe(true);
  });
  it('knows until when units stay free from now', () => {
    const segs = segmentsOf('2Q', t(9), t(21), plans, [booking('b1', 14, 15, 2)]);
    expect(freeUntil(segs, t(9, 30), 1)).toEqual(t(14));
    expect(freeUntil(segs, t(17), 1)).toBeNull();
  });
  it('finds the bookings a plan change would strand', () => {
    const bookings = [booking('b1', 13, 14), booking('b2', 9, 10)];
    expect(strandedBookings(['2Q'], t(8), t(16), plans, bookings)).toEqual([]);
    expect(strandedBookings(['2Q'], t(8), t(16), plans.filter((p) => p.id !== 'p2'), bookings)).toEqual(['b1']);
  });
});

describe('booking priority rules', () => {
  const actor = { id: 'u1', role: 'user', categoryId: 'default', groupIds: ['g1'] };
  const rule = (id: string, priority: number, allowed: PriorityRuleRow['allowed']): PriorityRuleRow => ({
    id, ruleId: 'default', name: id, allowed, priority, forbidTime: 0, maxTime: 60, maxItems: 1,
  });
  const none = { roles: false, categories: false, groups: false, users: false } as const;
  it('matches by users, groups, categories and roles; [] means everyone, false unused', () => {
    expect(allowedMatches(actor, { ...none, roles: [] })).toBe(true);
    expect(allowedMatches(actor, { ...none, roles: ['admin'] })).toBe(false);
    expect(allowedMatches(actor, { ...none, groups: ['g1'] })).toBe(true);
    expect(allowedMatches(actor, { ...none, users: ['u2'] })).toBe(false);
    expect(allowedMatches(actor, none)).toBe(false);
  });
  it('the highest priority that names the person wins', () => {
    const rules = [rule('everyone', 1, { ...none, roles: [] }), rule('admins', 999, { ...none, roles: ['admin'] }), rule('g1', 5, { ...none, groups: ['g1'] })];
    expect(ruleFor(actor, rules)?.id).toBe('g1');
    expect(ruleFor({ ...actor, role: 'admin' }, rules)?.id).toBe('admins');
    expect(ruleFor(actor, [rule('admins', 999, { ...none, roles: ['admin'] })])).toBeNull();
  });
});
