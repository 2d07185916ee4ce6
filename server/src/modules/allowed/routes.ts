import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PRIVILEGED_ROLES, ZAllowedTermItem, ZAllowedTermQuery, ZAllowedTermTable, ZAllowedUpdate, ZAllowedUpdateTable } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import type { MediaService } from '../media/service';
import { allowedTerm } from './term';
import { updateAllowed } from './update';

/**
 * The permission pickers' calls (spec core §7): search whom to share with, save whom an item is
 * shared with. For those who share: templates, media and deployments are for admins, managers and
 * advanced users.
 */
export async function allowedRoutes(app: FastifyInstance, ctx: AppContext, deps: { lifecycle: DesktopLifecycle; media: MediaService }) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx, { roles: PRIVILEGED_ROLES });

  r.post(
    '/admin/allowed/term/:table',
    { preHandler: auth, schema: { params: z.object({ table: ZAllowedTermTable }), body: ZAllowedTermQuery, response: { 200: z.array(ZAllowedTermItem) } } },
    async (request) => allowedTerm(ctx.db, authOf(request).user, request.params.table, request.body),
  );

  r.post(
    '/admin/allowed/update/:table',
    { preHandler: auth, schema: { params: z.object({ table: ZAllowedUpdateTable }), body: ZAllowedUpdate, response: { 200: z.object({}) } } },
    async (request) => updateAllowed(ctx, deps, authOf(request).user, request.params.table, request.body),
  );
}
