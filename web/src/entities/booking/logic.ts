import type { EventInput } from '@fullcalendar/react';
import type { TFunction } from 'i18next';
import type { TAvailability, TBooking, TRuleError, TRuleEvent } from '@vdi/contracts';
import { toDate } from './dates';
import '../../i18n/areas/bookings';

/** Colours of the availability backgrounds and of the bookings (also used by the legend). */
export const AVAILABILITY_COLORS: Record<TAvailability['event_type'], string> = {
  available: '#12b886',
  overridable: '#fab005',
  unavailable: '#868e96',
};
export const BOOKING_COLOR = '#4c6ef5';
export const PAST_BOOKING_COLOR = '#adb5bd';

/** Availability segments as background events of the calendar. */
export function availabilityEvents(availability: readonly TAvailability[], t: TFunction): EventInput[] {
  return availability.map((a) => ({
    id: `availability-${a.id}-${a.start}`,
    start: toDate(a.start) ?? undefined,
    end: toDate(a.end) ?? undefined,
    display: 'background',
    color: AVAILABILITY_COLORS[a.event_type],
    title: t(`bookings.legend.${a.event_type}`),
    className: `availability availability-${a.event_type}`,
    extendedProps: { kind: 'availability', eventType: a.event_type },
  }));
}

const RANK: Record<TAvailability['event_type'], number> = { available: 3, overridable: 2, unavailable: 1 };
const dayKey = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/**
 * The month view shows whole days only (timed backgrounds are not drawn there): each day takes
 * the best availability it has at some hour.
 */
export function dailyAvailabilityEvents(availability: readonly TAvailability[], t: TFunction): EventInput[] {
  const best = new Map<string, TAvailability['event_type']>();
  for (const a of availability) {
    const start = toDate(a.start);
    const end = toDate(a.end);
    if (!start || !end) continue;
    const day = new Date(start);
    day.setHours(0, 0, 0, 0);
    for (; day < end; day.setDate(day.getDate() + 1)) {
      const key = dayKey(day);
      const current = best.get(key);
      if (!current || RANK[a.event_type] > RANK[current]) best.set(key, a.event_type);
    }
  }
  return [...best].map(([day, type]) => ({
    id: `day-${day}`,
    start: day,
    allDay: true,
    display: 'background',
    color: AVAILABILITY_COLORS[type],
    title: t(`bookings.legend.${type}`),
    className: `availability availability-${type}`,
  }));
}

/** The user's bookings as events; the ones that already started are greyed. Names are shown through `show` (`builtInText`). */
export function bookingEvents(bookings: readonly TBooking[], withItemName = false, show: (text: string) => string = (s) => s): EventInput[] {
  return bookings.map((b) => {
    const label = show(b.title || b.item_name);
    return {
      id: b.id,
      title: withItemName && b.title && b.title !== b.item_name ? `${show(b.item_name)} · ${show(b.title)}` : label,
      start: toDate(b.start) ?? undefined,
      end: toDate(b.end) ?? undefined,
      color: b.editable ? BOOKING_COLOR : PAST_BOOKING_COLOR,
      className: `booking-event ${b.editable ? 'booking-editable' : 'booking-past'}`,
      extendedProps: { kind: 'booking', itemType: b.item_type, itemId: b.item_id },
    };
  });
}

/** What the rules look at: the item's bookings and its availability. */
export function ruleEvents(bookings: readonly TBooking[], availability: readonly TAvailability[]): TRuleEvent[] {
  const out: TRuleEvent[] = [];
  for (const b of bookings) {
    const start = toDate(b.start);
    const end = toDate(b.end);
    if (start && end) out.push({ id: b.id, start, end, event_type: 'event' });
  }
  for (const a of availability) {
    const start = toDate(a.start);
    const end = toDate(a.end);
    if (start && end) out.push({ id: `availability-${a.id}-${a.start}`, start, end, event_type: a.event_type, units: a.units });
  }
  return out;
}

/** A broken rule in the words of the catalogue (the same code the server would answer). */
export const ruleMessage = (t: TFunction, err: TRuleError) => t(`errors.${err.code}`, { ...(err.params ?? {}) });

/** Future bookings of the user (end after now), which max_items counts. */
export const futureCount = (bookings: readonly TBooking[], now: Date, exceptId?: string) =>
  bookings.filter((b) => b.id !== exceptId && (toDate(b.end)?.getTime() ?? 0) > now.getTime()).length;

/** The working hours the week view shows by default (the rest of the day one click away). */
export const WORKING_HOURS = { start: 7, end: 21 } as const;

/**
 * The hours the week view shows: the working hours, widened to the current hour and to every booking of the view
 * (never a booking cut off); a booking over midnight, or `wholeDay`, shows all 24.
 */
export function shownHours(events: readonly EventInput[], now: Date, wholeDay = false): { min: number; max: number } {
  if (wholeDay) return { min: 0, max: 24 };
  let min = Math.min(WORKING_HOURS.start, now.getHours());
  let max = Math.max(WORKING_HOURS.end, now.getHours() + 1);
  for (const e of events) {
    if (e.display === 'background' || !e.start || !e.end) continue;
    const s = new Date(e.start as string | number | Date);
    const end = new Date(e.end as string | number | Date);
    if (s.toDateString() !== new Date(end.getTime() - 1).toDateString()) return { min: 0, max: 24 };
    min = Math.min(min, s.getHours());
    max = Math.max(max, Math.ceil(end.getHours() + end.getMinutes() / 60) || 24);
  }
  return { min, max };
}
