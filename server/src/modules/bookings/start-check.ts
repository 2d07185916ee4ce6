import { and, asc, eq, gt, inArray, lte } from 'drizzle-orm';
import { formatBookingDate, type TBookingItemType } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import { precondition } from '../../http/errors';
import type { DomainRow } from '../shared/domains';
import { isBookingExempt } from '../reservables/priorities';

/** Is one of the profiles offered by a plan at `now`? */
export async function planOffersNow(db: Db, profiles: readonly string[], now: Date): Promise<boolean> {
  if (profiles.length === 0) return false;
  const rows = await db
    .select({ id: schema.reservablePlans.id })
    .from(schema.reservablePlans)
    .where(and(inArray(schema.reservablePlans.subitemId, [...profiles]), lte(schema.reservablePlans.start, now), gt(schema.reservablePlans.end, now)))
    .limit(1);
  return rows.length > 0;
}

/** The booking of an item that is in progress at `now`, if any. */
export async function activeBooking(db: Db, itemType: TBookingItemType, itemId: string, now: Date) {
  const [row] = await db
    .select()
    .from(schema.bookings)
    .where(and(eq(schema.bookings.itemType, itemType), eq(schema.bookings.itemId, itemId), lte(schema.bookings.start, now), gt(schema.bookings.end, now)))
    .limit(1);
  return row;
}

/**
 * Booking checks before a GPU desktop starts (reference §2.5 and §6.2): a booking of the desktop
 * (or of its deployment) must be in progress — admins and managers are exempt — and a plan must
 * offer the desktop's profile right now. A desktop pool's desktop needs its pool's booking, whoever
 * starts it (the pool prepares only within its bookings).
 */
export async function checkBookingToStart(db: Db, now: Date, row: DomainRow, starterRole: string) {
  const profiles = row.hardware.reservables.vgpus ?? [];
  if (profiles.length === 0) return;
  if (row.poolId !== null || !isBookingExempt(starterRole)) {
    const [itemType, itemId] = row.poolId !== null ? (['pool', row.poolId] as const) : row.tag ? (['deployment', row.tag] as const) : (['desktop', row.id] as const);
    if (!(await activeBooking(db, itemType, itemId, now))) {
      const [next] = await db
        .select()
        .from(schema.bookings)
        .where(and(eq(schema.bookings.itemType, itemType), eq(schema.bookings.itemId, itemId), gt(schema.bookings.start, now)))
        .orderBy(asc(schema.bookings.start))
        .limit(1);
      if (next) {
        throw precondition('desktop_not_booked_until', `The desktop is booked from ${formatBookingDate(next.start)}`, { start: formatBookingDate(next.start) });
      }
      if (row.poolId !== null) throw precondition('desktop_pool_not_booked', 'The desktop pool of this desktop needs a booking');
      if (row.tag) throw precondition('needs_deployment_booking', 'The deployment of this desktop needs a booking');
      throw precondition('desktop_not_booked', 'The desktop needs a booking to start');
    }
  }
  if (!(await planOffersNow(db, profiles, now))) {
    throw precondition('current_plan_doesnt_match', 'No plan offers the GPU profile of this desktop right now');
  }
}
