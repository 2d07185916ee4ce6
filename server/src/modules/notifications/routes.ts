import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  ZUserNotificationDisplays,
  ZUserNotificationDisplaysParams,
  ZUserNotificationParams,
  ZUserNotifications,
  ZMessageTemplate,
  ZMessageTemplateParams,
} from '@vdi/contracts';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { notFound } from '../../http/errors';
import { messageTemplate } from './message-templates';

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

  // The texts of the message dialog for a live `msg` code, in `?lang=` or the user's language.
  r.get(
    '/message-template/:name',
    { preHandler: auth, schema: { params: ZMessageTemplateParams, querystring: z.object({ lang: z.string().max(16).optional() }), response: { 200: ZMessageTemplate } } },
    async (request) => {
      const found = messageTemplate(request.params.name, request.query.lang ?? authOf(request).user.lang);
      if (!found) throw notFound('not_found', 'No message template with this name');
      return found;
    },
  );
}
