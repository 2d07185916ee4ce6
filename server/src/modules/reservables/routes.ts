import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZNewPlan,
  ZPlan,
  ZPlannerRangeParams,
  ZPlanUpdate,
  ZReservableItemType,
  ZReservableKinds,
  ZReservableSubitem,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import type { Bookings } from '../bookings/service';
import { parseRange } from '../bookings/service';

const ZId = z.object({ id: z.string().min(1).max(64) });

/** The admin planner (spec 001 §7 "Admin planner"): admins only. */
export async function plannerRoutes(app: FastifyInstance, ctx: AppContext, bookings: Bookings) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = requireAuth(ctx, { roles: ['admin'] });
  const { planner } = bookings;

  r.get('/admin/reservables', { preHandler: admin, schema: { response: { 200: ZReservableKinds } } }, async () => planner.kinds());

  // GET /admin/reservables/{itemType} (the cards with their profiles) and the cards' writes: admin/reservables/routes.ts.

  r.get(
    '/admin/reservables/enabled/:itemType/:itemId',
    { preHandler: admin, schema: { params: z.object({ itemType: ZReservableItemType, itemId: z.string().min(1).max(64) }), response: { 200: z.array(ZReservableSubitem) } } },
    async (request) => planner.enabledSubitems(request.params.itemType, request.params.itemId),
  );

  r.get('/admin/reservables_planner/:itemId/:start/:end', { preHandler: admin, schema: { params: ZPlannerRangeParams, response: { 200: z.array(ZPlan) } } }, async (request) => {
    const { from, to } = parseRange(request.params.start, request.params.end);
    return planner.plans(request.params.itemId, from, to);
  });

  r.post('/admin/reservables_planner', { preHandler: admin, schema: { body: ZNewPlan, response: { 200: ZPlan } } }, async (request) =>
    planner.create(authOf(request).user, request.body),
  );

  r.put('/admin/reservables_planner/:id', { preHandler: admin, schema: { params: ZId, body: ZPlanUpdate, response: { 200: ZPlan } } }, async (request) =>
    planner.update(authOf(request).user, request.params.id, request.body),
  );

  r.delete('/admin/reservables_planner/:id', { preHandler: admin, schema: { params: ZId, response: { 200: z.object({}) } } }, async (request) =>
    planner.remove(authOf(request).user, request.params.id),
  );
}
