import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  BOOKING_RETURN_TYPES,
  ZAllowedReservables,
  ZBooking,
  ZBookingItemParams,
  ZBookingPriority,
  ZBookingPriorityParams,
  ZBookingRangeQuery,
  ZBookingUpdate,
  ZItemBookings,
  ZMaxBookingDate,
  ZNewBooking,
  ZReservablesAvailable,
  ZUserBookings,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { actorOf } from '../access/permissions';
import { allowedProfiles } from '../reservables/profiles';
import { parseRange, type Bookings } from './service';

const ZId = z.object({ id: z.string().min(1).max(64) });
const ZItemQuery = ZBookingRangeQuery.extend({ returnType: z.enum(BOOKING_RETURN_TYPES).optional() });

/** Bookings (spec core §7 "Bookings", reference §2.9). */
export async function bookingRoutes(app: FastifyInstance, ctx: AppContext, bookings: Bookings) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);

  // returnType is a path segment (the original server); a query parameter is accepted too.
  for (const path of ['/bookings/user/:itemId/:itemType', '/bookings/user/:itemId/:itemType/:returnType']) {
    r.get(path, { preHandler: auth, schema: { params: ZBookingItemParams, querystring: ZItemQuery, response: { 200: ZItemBookings } } }, async (request) => {
      const { from, to } = parseRange(request.query.startDate, request.query.endDate);
      const { itemId, itemType } = request.params;
      const returnType = request.params.returnType ?? request.query.returnType ?? 'all';
      return bookings.itemBookings(authOf(request).user, itemType, itemId, from, to, returnType);
    });
  }

  r.get('/bookings/user', { preHandler: auth, schema: { querystring: ZBookingRangeQuery, response: { 200: ZUserBookings } } }, async (request) => {
    const { from, to } = parseRange(request.query.startDate, request.query.endDate);
    return bookings.userBookings(authOf(request).user, from, to);
  });

  r.get('/bookings/priority/:itemType/:itemId', { preHandler: auth, schema: { params: ZBookingPriorityParams, response: { 200: ZBookingPriority } } }, async (request) =>
    bookings.priorityFor(authOf(request).user, request.params.itemType, request.params.itemId),
  );

  r.post('/booking/event', { preHandler: auth, schema: { body: ZNewBooking, response: { 200: ZBooking } } }, async (request) =>
    bookings.create(authOf(request).user, request.body),
  );

  // Form data, as the original client sends it (JSON is accepted too).
  r.put('/booking/event/:id', { preHandler: auth, schema: { params: ZId, body: ZBookingUpdate, response: { 200: ZBooking } } }, async (request) =>
    bookings.update(authOf(request).user, request.params.id, request.body),
  );

  r.delete('/booking/event/:id', { preHandler: auth, schema: { params: ZId, response: { 200: z.object({}) } } }, async (request) =>
    bookings.remove(authOf(request).user, request.params.id),
  );

  r.get('/booking/max_booking_date/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZMaxBookingDate } } }, async (request) =>
    bookings.maxDate(authOf(request).user, request.params.id),
  );

  r.get('/booking/reservables_available', { preHandler: auth, schema: { response: { 200: ZReservablesAvailable } } }, async (request) =>
    bookings.reservablesAvailable(authOf(request).user),
  );

  r.get('/domains/allowed/reservables', { preHandler: auth, schema: { response: { 200: ZAllowedReservables } } }, async (request) => {
    const profiles = await allowedProfiles(ctx.db, await actorOf(ctx.db, authOf(request).user));
    return { vgpus: profiles.map((p) => ({ id: p.id, name: p.name, description: p.description, units: p.units })) };
  });
}
