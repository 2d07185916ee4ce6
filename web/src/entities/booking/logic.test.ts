import { describe, expect, it } from 'vitest';
import type { TAvailability, TBooking } from '@vdi/contracts';
import { formatLocalDate, loadRange, parseLocal, toWire } from './dates';
import { availabilityEvents, bookingEvents, dailyAvailabilityEvents, futureCount, ruleEvents, shownHours } from './logic';

const t = ((k: string) => k) as never;

const booking = (over: Partial<TBooking> = {}): TBooking => ({
  id: 'b1',
  item_id: 'd1',
  item_type: 'desktop',
  element_id: 'd1',
  element_type: 'desktop',
  item_name: 'GPU desktop',
  user_id: 'u1',
  title: '',
  units: 1,
  reservables: { vgpus: ['A40-2Q'] },
  start: '2030-01-07T10:00+0000',
  end: '2030-01-07T11:00+0000',
  plans: [],
  editable: true,
  in_progress: false,
  event_type: 'event',
  ...over,
});

const slot = (over: Partial<TAvailability> = {}): TAvailability => ({
  id: 'a1',
  start: '2030-01-07T08:00+0000',
  end: '2030-01-07T18:00+0000',
  units: 2,
  ids: ['p1'],
  subitem_id: 'A40-2Q',
  event_type: 'available',
  ...over,
});

describe('calendar ranges', () => {
  it('loads from the Monday before the first visible day to the end of the Sunday after the last', () => {
    // A month view of March 2030 shows Mon 25 Feb .. Sun 7 Apr (end exclusive: Mon 8 Apr).
    const r = loadRange(new Date(2030, 1, 25), new Date(2030, 3, 8));
    expect(r.start).toEqual(new Date(2030, 1, 25));
    expect(r.end).toEqual(new Date(2030, 3, 8));
    // A view starting on a Wednesday and ending on a Thursday widens to whole weeks.
    const w = loadRange(new Date(2030, 0, 9, 13), new Date(2030, 0, 18));
    expect(w.start).toEqual(new Date(2030, 0, 7));
    expect(w.start.getDay()).toBe(1);
    expect(w.end).toEqual(new Date(2030, 0, 21));
    expect(w.end.getDay()).toBe(1);
  });

  it('reads and writes the local YYYY-MM-DD HH:mm form and sends UTC ISO', () => {
    const d = parseLocal('2030-01-07 09:30')!;
    expect(d).toEqual(new Date(2030, 0, 7, 9, 30));
    expect(formatLocalDate(d)).toBe('2030-01-07 09:30');
    expect(parseLocal('2030-02-30 10:00')).toBeNull();
    expect(parseLocal('2030-01-07 24:00')).toBeNull();
    expect(parseLocal('7/1/2030 10:00')).toBeNull();
    expect(toWire(new Date(Date.UTC(2030, 0, 7, 9, 30)))).toBe('2030-01-07T09:30:00.000Z');
    expect(formatLocalDate('2030-01-07T09:30+0000')).toBe(formatLocalDate(new Date(Date.UTC(2030, 0, 7, 9, 30))));
  });
});

describe('calendar events', () => {
  it('shows availability as background events and bookings as events, greying the started ones', () => {
    const bg = availabilityEvents([slot(), slot({ id: 'a2', event_type: 'unavailable' })], t);
    expect(bg.map((e) => e.display)).toEqual(['background', 'background']);
    expect(bg[1]!.className).toBe('availability availability-unavailable');
    const ev = bookingEvents([booking(), booking({ id: 'b2', editable: false, title: 'Render' })], true);
    expect(ev[0]!.title).toBe('GPU desktop');
    expect(ev[1]!.title).toBe('GPU desktop · Render');
    expect(ev[0]!.color).not.toBe(ev[1]!.color);
  });

  it('gives the month view one background per day, the best of that day', () => {
    const days = dailyAvailabilityEvents(
      [
        slot({ start: new Date(2030, 0, 7, 8).toISOString(), end: new Date(2030, 0, 8, 12).toISOString() }),
        slot({ id: 'a2', event_type: 'unavailable', start: new Date(2030, 0, 8, 12).toISOString(), end: new Date(2030, 0, 9, 10).toISOString() }),
      ],
      t,
    );
    expect(days.map((d) => [d.start, d.className])).toEqual([
      ['2030-01-07', 'availability availability-available'],
      ['2030-01-08', 'availability availability-available'],
      ['2030-01-09', 'availability availability-unavailable'],
    ]);
    expect(days.every((d) => d.allDay && d.display === 'background')).toBe(true);
  });

  it('gives the rules bookings and availability with their units', () => {
    const r = ruleEvents([booking()], [slot({ units: 'Enough' })]);
    expect(r.map((e) => e.event_type)).toEqual(['event', 'available']);
    expect(r[1]!.units).toBe('Enough');
    expect(r[0]!.start).toEqual(new Date(Date.UTC(2030, 0, 7, 10)));
  });

  it('counts future bookings for max items, without the edited one', () => {
    const now = new Date(Date.UTC(2030, 0, 7, 10, 30));
    const list = [booking(), booking({ id: 'b2', end: '2030-01-07T10:00+0000' }), booking({ id: 'b3', start: '2030-01-08T10:00+0000', end: '2030-01-08T11:00+0000' })];
    expect(futureCount(list, now)).toBe(2);
    expect(futureCount(list, now, 'b3')).toBe(1);
  });
});

describe('the hours the week shows', () => {
  const at = (h: number, m = 0, day = 2) => new Date(2026, 10, day, h, m);
  it('the working hours, widened to now and to the bookings, all 24 for one over midnight or when asked', () => {
    expect(shownHours([], at(10))).toEqual({ min: 7, max: 21 });
    expect(shownHours([], at(23, 30))).toEqual({ min: 7, max: 24 });
    expect(shownHours([], at(5))).toEqual({ min: 5, max: 21 });
    expect(shownHours([{ start: at(6, 30), end: at(22, 15) }], at(10))).toEqual({ min: 6, max: 23 });
    expect(shownHours([{ start: at(22), end: at(0, 0, 3) }], at(10))).toEqual({ min: 7, max: 24 });
    expect(shownHours([{ start: at(23), end: at(1, 0, 3) }], at(10))).toEqual({ min: 0, max: 24 });
    expect(shownHours([{ start: at(2), end: at(3), display: 'background' }], at(10))).toEqual({ min: 7, max: 21 });
    expect(shownHours([], at(10), true)).toEqual({ min: 0, max: 24 });
  });
});
