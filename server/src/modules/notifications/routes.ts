import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  ZUserNotificationDisplays,
  ZUserNotificationDisplaysParams,
  ZUserNotificationParams,
  ZUserNotifications,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { requireAuth } from '../../http/guard';

/**
 * Notifications shown to a user at a trigger (sign-in, desktop start…) in a display (modal, full
 * page), as the original answers them. This server keeps no such notifications (admins cannot
 * write any yet): every trigger answers the empty shape, so clients of the original go on.
 */
export async function notificationRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);

  r.get(
    '/notification/user/displays/:trigger',
    { preHandler: auth, schema: { params: ZUserNotificationDisplaysParams, response: { 200: ZUserNotificationDisplays } } },
    async () => ({ displays: [] }),
  );

  r.get(
    '/notification/user/:trigger/:display',
    { preHandler: auth, schema: { params: ZUserNotificationParams, response: { 200: ZUserNotifications } } },
    async () => ({ notifications: {} }),
  );
}
