import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZAdminCard,
  ZAdminCardCreate,
  ZAdminCardList,
  ZAdminCardParams,
  ZAdminCardUpdate,
  ZAdminProfileCreate,
  ZAdminProfileParams,
  ZAdminProfileUpdate,
  ZBookingRule,
  ZBookingRuleCreate,
  ZBookingRuleList,
  ZBookingRulesQuery,
  ZBookingRuleUpdate,
  ZReservableItemType,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { requireAuth } from '../../../http/guard';
import type { Bookings } from '../../bookings/service';
import { createCardAdmin } from './cards';
import { createBookingRuleAdmin } from './booking-rules';

const idParams = z.object({ id: z.string().min(1).max(64) });

/**
 * GPU cards and their profiles (the planner's reservable items and subitems) and the booking
 * priority rules, in the console: admins only (managers and everyone else 403), as the planner.
 * GET /admin/reservables/{itemType} is the planner's list of cards, with what the console shows.
 */
export async function adminReservableRoutes(app: FastifyInstance, ctx: AppContext, bookings: Bookings) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = requireAuth(ctx, { roles: ['admin'] });
  const cards = createCardAdmin(ctx, bookings);
  const rules = createBookingRuleAdmin(ctx);

  r.get('/admin/reservables/:itemType', { preHandler: admin, schema: { params: z.object({ itemType: ZReservableItemType }), response: { 200: ZAdminCardList } } }, async () =>
    cards.list(),
  );
  r.post('/admin/reservables/:itemType', { preHandler: admin, schema: { params: z.object({ itemType: ZReservableItemType }), body: ZAdminCardCreate, response: { 200: ZAdminCard } } }, async (request) =>
    cards.create(request, request.body),
  );
  r.put('/admin/reservables/:itemType/:itemId', { preHandler: admin, schema: { params: ZAdminCardParams, body: ZAdminCardUpdate, response: { 200: ZAdminCard } } }, async (request) =>
    cards.update(request, request.params.itemId, request.body),
  );
  r.delete('/admin/reservables/:itemType/:itemId', { preHandler: admin, schema: { params: ZAdminCardParams } }, async (request) =>
    cards.remove(request, request.params.itemId),
  );
  r.post('/admin/reservables/:itemType/:itemId/subitems', { preHandler: admin, schema: { params: ZAdminCardParams, body: ZAdminProfileCreate, response: { 200: ZAdminCard } } }, async (request) =>
    cards.addProfile(request, request.params.itemId, request.body),
  );
  r.put(
    '/admin/reservables/:itemType/:itemId/subitems/:subitemId',
    { preHandler: admin, schema: { params: ZAdminProfileParams, body: ZAdminProfileUpdate, response: { 200: ZAdminCard } } },
    async (request) => cards.updateProfile(request, request.params.itemId, request.params.subitemId, request.body),
  );
  r.delete('/admin/reservables/:itemType/:itemId/subitems/:subitemId', { preHandler: admin, schema: { params: ZAdminProfileParams, response: { 200: ZAdminCard } } }, async (request) =>
    cards.removeProfile(request, request.params.itemId, request.params.subitemId),
  );

  r.get('/admin/booking_priorities', { preHandler: admin, schema: { querystring: ZBookingRulesQuery, response: { 200: ZBookingRuleList } } }, async (request) =>
    rules.list(request.query),
  );
  r.get('/admin/booking_priorities/:id', { preHandler: admin, schema: { params: idParams, response: { 200: ZBookingRule } } }, async (request) => rules.one(request.params.id));
  r.post('/admin/booking_priorities', { preHandler: admin, schema: { body: ZBookingRuleCreate, response: { 200: ZBookingRule } } }, async (request) =>
    rules.create(request, request.body),
  );
  r.put('/admin/booking_priorities/:id', { preHandler: admin, schema: { params: idParams, body: ZBookingRuleUpdate, response: { 200: ZBookingRule } } }, async (request) =>
    rules.update(request, request.params.id, request.body),
  );
  r.delete('/admin/booking_priorities/:id', { preHandler: admin, schema: { params: idParams } }, async (request) => rules.remove(request, request.params.id));
}
