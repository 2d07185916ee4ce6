import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZAllowedReservables,
  ZBooking,
  ZBookingItemParams,
  ZBookingPriorityParams,
  ZBookingRangeQuery,
  ZBookingUpdate,
  ZItemBookings,
  ZItemPriority,
  ZMaxBookingDate,
  ZNewBooking,
  ZReservablesAvailable,
  ZUserBookings,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { actorOf } from '../../auth/caller';
import { allowedProfiles } from '../reservables/profiles';
import { parseRange, type Bookings } from './service';

const ZId = z.object({ id: z.string().min(1).max(64) });

/** Bookings (spec core §7 "Bookings", reference §2.9). */
export async function bookingRoutes(app: FastifyInstance, ctx: AppContext, bookings: Bookings) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);

  // returnType is a path segment. The original portal also sends one in the query ("all" or
  // "events"), which the original server ignores, and so does this one.
  for (const path of ['/bookings/user/:itemId/:itemType', '/bookings/user/:itemId/:itemType/:returnType']) {
    r.get(path, { preHandler: auth, schema: { params: ZBookingItemParams, querystring: ZBookingRangeQuery, response: { 200: ZItemBookings } } }, async (request) => {
      const { from, to } = parseRange(request.query.startDate, request.query.endDate);
      const { itemId, itemType, returnType = 'all' } = request.params;
      return bookings.itemBookings(authOf(request).user, itemType, itemId, from, to, returnType);
    });
  }

  r.get('/bookings/user', { preHandler: auth, schema: { querystring: ZBookingRangeQuery, response: { 200: ZUserBookings } } }, async (request) => {
    const { from, to } = parseRange(request.query.startDate, request.query.endDate);
    return bookings.userBookings(authOf(request).user, from, to);
  });

  r.get('/bookings/priority/:itemType/:itemId', { preHandler: auth, schema: { params: ZBookingPriorityParams, response: { 200: ZItemPriority } } }, async (request) =>
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
