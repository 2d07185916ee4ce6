import { and, asc, gt, inArray, or, eq } from 'drizzle-orm';
import { formatBookingDate, type TBooking } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import { realClock, type Clock } from '../../scheduler/clock';

export type BookingRow = typeof schema.bookings.$inferSelect;

/** The clock the views read "now" from (the bookings service sets the context's clock). */
let viewClock: Clock = realClock();
export const setViewClock = (clock: Clock) => {
  viewClock = clock;
};
export const nowForViews = () => viewClock.now();

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

type DesktopRef = { id: string; tag: string | null; bookingId: string | null; scheduledShutdownAt: Date | null };
export type DesktopBookingFields = {
  booking_id: string | false;
  next_booking_start: string | null;
  next_booking_end: string | null;
  scheduled: { shutdown: string | false };
};

/**
 * The booking fields of the desktop view: the booking in progress, the next (or current) booking
 * of the desktop or of its deployment, and when the scheduler will stop it.
 */
export async function desktopBookingFields(db: Db, rows: readonly DesktopRef[]): Promise<Map<string, DesktopBookingFields>> {
  const out = new Map<string, DesktopBookingFields>();
  if (rows.length === 0) return out;
  const now = nowForViews();
  const desktopIds = rows.map((r) => r.id);
  const tags = [...new Set(rows.map((r) => r.tag).filter((t): t is string => Boolean(t)))];
  const upcoming = await db
    .select()
    .from(schema.bookings)
    .where(
      and(
        gt(schema.bookings.end, now),
        or(
          and(eq(schema.bookings.itemType, 'desktop'), inArray(schema.bookings.itemId, desktopIds)),
          tags.length ? and(eq(schema.bookings.itemType, 'deployment'), inArray(schema.bookings.itemId, tags)) : undefined,
        ),
      ),
    )
    .orderBy(asc(schema.bookings.start));
  for (const r of rows) {
    const next = upcoming.find((b) => (b.itemType === 'desktop' ? b.itemId === r.id : b.itemId === r.tag));
    out.set(r.id, {
      booking_id: r.bookingId ?? false,
      next_booking_start: next ? formatBookingDate(next.start) : null,
      next_booking_end: next ? formatBookingDate(next.end) : null,
      scheduled: { shutdown: r.scheduledShutdownAt ? formatBookingDate(r.scheduledShutdownAt) : false },
    });
  }
  return out;
}
