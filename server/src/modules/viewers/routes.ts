import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ZViewer, ZViewerAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { requireAuth } from '../../http/guard';
import { desktopFor } from '../desktops/access';
import { openViewer } from './open';

export { spiceProxyOf } from './open';

export async function viewerRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/desktop/:id/viewer/:viewer',
    { preHandler: requireAuth(ctx), schema: { params: z.object({ id: z.string().max(64), viewer: ZViewer }), response: { 200: ZViewerAnswer } } },
    // Someone else's screen (an admin, a manager, a deployment's owner) is audited there.
    async (request) => openViewer(ctx, request, await desktopFor(ctx, request, request.params.id), request.params.viewer),
  );
}
