import { sql } from 'drizzle-orm';
import { formatBookingDate, type TBooking } from '@vdi/contracts';
import { schema } from '../../db';
import { qualified } from '../../db/qualified';

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

type DesktopRef = { bookingId: string | null; scheduledShutdownAt: Date | null };
export type DesktopBookingFields = {
  booking_id: string | false;
  next_booking_start: string | null;
  next_booking_end: string | null;
  scheduled: { shutdown: string | false };
};
/** A desktop's next (or current) booking, as `nextDesktopBookingSql` reads it: epoch seconds. */
export type NextBooking = { start: number; end: number } | null;

/**
 * The next (or current) booking of a desktop or of its deployment: a subquery correlated with the
 * `domains` row of the query it is selected in (one index probe of `bookings_item_idx` per row).
 */
export function nextDesktopBookingSql(now: Date) {
  const b = schema.bookings;
  const [start, end, itemType, itemId] = [b.start, b.end, b.itemType, b.itemId].map(qualified);
  const upcoming = sql`${end} > ${now.toISOString()}::timestamptz`;
  // Asked once whether any booking is to come (most of the time none): only then per row.
  return sql<NextBooking>`case when exists (select 1 from ${b} where ${upcoming}) then
    (select json_build_object('start', extract(epoch from ${start}), 'end', extract(epoch from ${end}))
      from ${b}
      where ${upcoming}
        and ((${itemType} = 'desktop' and ${itemId} = ${qualified(schema.domains.id)})
          or (${itemType} = 'deployment' and ${itemId} = ${qualified(schema.domains.tag)}))
      order by ${start} limit 1)
    end`;
}

/**
 * The booking fields of the desktop view: the booking in progress, the next (or current) booking
 * of the desktop or of its deployment, and when the scheduler will stop it.
 */
export function desktopBookingFields(row: DesktopRef, next: NextBooking): DesktopBookingFields {
  const date = (epoch: number) => formatBookingDate(new Date(Number(epoch) * 1000));
  return {
    booking_id: row.bookingId ?? false,
    next_booking_start: next ? date(next.start) : null,
    next_booking_end: next ? date(next.end) : null,
    scheduled: { shutdown: row.scheduledShutdownAt ? formatBookingDate(row.scheduledShutdownAt) : false },
  };
}
