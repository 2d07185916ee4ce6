import { formatBookingDate, type TBooking } from '@vdi/contracts';
import { schema } from '../../db';

export type BookingRow = typeof schema.bookings.$inferSelect;

/** A booking as the calls and the booking_* / bookingitem_* events carry it (reference §2.9). */
export function bookingView(row: BookingRow, itemName: string, now: Date): TBooking {
  return {
    id: row.id,
    item_id: row.itemId,
    item_type: row.itemType,
    element_id: row.itemId,
    element_type: row.itemType,
    item_name: itemName,
    user_id: row.userId,
    title: row.title,
    units: row.units,
    reservables: { vgpus: row.reservables.vgpus },
    start: formatBookingDate(row.start),
    end: formatBookingDate(row.end),
    plans: row.plans,
    editable: row.start > now,
    in_progress: row.start <= now && row.end > now,
    event_type: 'event',
  };
}
