import { z } from 'zod';
import {
  ZBooking,
  ZItemBookings,
  ZItemPriority,
  ZMaxBookingDate,
  ZReservablesAvailable,
  ZUserBookings,
  type TAvailability,
  type TBooking,
  type TBookingItemType,
  type TItemBookings,
  type TItemPriority,
} from '@vdi/contracts';
import { api } from '../../lib/api';
import { toWire } from './dates';

const enc = encodeURIComponent;
const range = (r: { start: Date; end: Date }) => ({ startDate: toWire(r.start), endDate: toWire(r.end) });

export const BOOKINGS_KEY = ['bookings'] as const;
export const itemBookingsKey = (type: string, id: string) => [...BOOKINGS_KEY, 'item', type, id] as const;
export const USER_BOOKINGS_KEY = [...BOOKINGS_KEY, 'user'] as const;

/** An item's calendar as the page shows it: its bookings, and the availability of its profiles. */
export type ItemCalendar = { events: TBooking[]; availability: TAvailability[] };
/** The server answers one list, as the original does; `event_type` tells bookings from availability. */
export const splitCalendar = (list: TItemBookings): ItemCalendar => ({
  events: list.filter((e): e is TBooking => e.event_type === 'event'),
  availability: list.filter((e): e is TAvailability => e.event_type !== 'event'),
});

/** GET /bookings/user/{itemId}/{itemType}: the item's bookings and its availability in the loaded range. */
export const itemBookingsQuery = (type: TBookingItemType, id: string, r: { start: Date; end: Date } | null) =>
  ({
    queryKey: [...itemBookingsKey(type, id), r?.start.getTime(), r?.end.getTime()],
    queryFn: async (): Promise<ItemCalendar> => splitCalendar(await api.get(`/bookings/user/${enc(id)}/${type}`, ZItemBookings, { query: range(r!) })),
    enabled: Boolean(r),
    placeholderData: (prev: ItemCalendar | undefined) => prev,
  }) as const;

/** GET /bookings/user: every booking of the user in the range. */
export const userBookingsQuery = (r: { start: Date; end: Date }) =>
  ({
    queryKey: [...USER_BOOKINGS_KEY, r.start.getTime(), r.end.getTime()],
    queryFn: (): Promise<TBooking[]> => api.get('/bookings/user', ZUserBookings, { query: range(r) }),
    placeholderData: (prev: TBooking[] | undefined) => prev,
  }) as const;

/** GET /bookings/priority/{itemType}/{itemId}: the limits that apply to this user and item, and what a booking of it takes. */
export const priorityQuery = (type: TBookingItemType, id: string) =>
  ({
    queryKey: [...BOOKINGS_KEY, 'priority', type, id],
    queryFn: (): Promise<TItemPriority> => api.get(`/bookings/priority/${type}/${enc(id)}`, ZItemPriority),
  }) as const;

export function createBooking(v: { elementId: string; elementType: TBookingItemType; title: string; start: Date; end: Date; now?: boolean }) {
  return api.post(
    '/booking/event',
    { element_id: v.elementId, element_type: v.elementType, title: v.title || undefined, start: toWire(v.start), end: toWire(v.end), ...(v.now ? { now: true } : {}) },
    ZBooking,
  );
}

/** PUT /booking/event/{id} takes form data (reference §2.9). */
export function updateBooking(id: string, v: { title: string; start: Date; end: Date }) {
  return api.put(`/booking/event/${enc(id)}`, undefined, ZBooking, { form: { title: v.title, start: toWire(v.start), end: toWire(v.end) } });
}

export function deleteBooking(id: string) {
  return api.delete(`/booking/event/${enc(id)}`, z.unknown());
}

/** GET /booking/max_booking_date/{desktopId}: how long start now may book (refusals carry the start-check codes). */
export async function maxBookingDate(desktopId: string): Promise<string> {
  return (await api.get(`/booking/max_booking_date/${enc(desktopId)}`, ZMaxBookingDate)).max_booking_date;
}

/** GET /booking/reservables_available: the profiles the user could switch to now (428 no_available_profile). */
export async function reservablesAvailable() {
  return (await api.get('/booking/reservables_available', ZReservablesAvailable)).reservables_available;
}
