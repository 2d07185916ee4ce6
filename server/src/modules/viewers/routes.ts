import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { ZViewer, ZViewerAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth } from '../../http/guard';
import { publicBaseUrl } from '../../http/base-url';
import { desktopFor } from '../desktops/access';
import { viewerFor } from './service';
import { actorOf, audit } from '../../audit/record';

/**
 * The CONNECT proxy a SPICE client goes through: this portal's own address. "localhost" is
 * written as 127.0.0.1: SPICE clients try ::1 first, and the portal may listen on IPv4 only.
 */
export function spiceProxyOf(base: string) {
  const url = new URL(base);
  if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
  return `http://${url.host}`;
}

export async function viewerRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/desktop/:id/viewer/:viewer',
    { preHandler: requireAuth(ctx), schema: { params: z.object({ id: z.string().max(64), viewer: ZViewer }), response: { 200: ZViewerAnswer } } },
    async (request) => {
      const row = await desktopFor(ctx, request, request.params.id);
      const answer = await viewerFor(ctx, row, request.params.viewer, {
        userId: authOf(request).user.id,
        proxy: spiceProxyOf(publicBaseUrl(ctx.config, request)),
      });
      await ctx.db.update(schema.domains).set({ accessedAt: new Date() }).where(eq(schema.domains.id, row.id));
      // Someone else's screen (an admin, a manager, a deployment's owner): a security event.
      if (row.userId !== authOf(request).user.id) {
        await audit(ctx.db, actorOf(request), {
          action: 'viewer.open_other',
          objectType: 'desktop',
          objectId: row.id,
          objectName: row.name,
          categoryId: row.categoryId,
          detail: { viewer: request.params.viewer, owner_id: row.userId },
        });
      }
      return answer;
    },
  );
}
