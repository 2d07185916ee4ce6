import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { ZBastion, ZBastionList, ZBastionUpdate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth } from '../../http/guard';
import { forbidden } from '../../http/errors';
import { auditActorOf, audit } from '../../audit/record';
import { desktopFor } from '../desktops/access';
import { canManage } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { bastionView, targetOf, updateTarget } from './targets';
import type { Bastion } from './service';

export async function bastionRoutes(app: FastifyInstance, ctx: AppContext, bastion: Bastion) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);
  const params = z.object({ id: z.string().max(64) });

  /** The desktop, when the caller may change it: its owner, an admin, a manager of its category (not a deployment's teachers). */
  const desktopOf = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const desktop = await desktopFor(ctx, request, request.params.id);
    if (!canManage(await actorOf(ctx.db, authOf(request).user), desktop)) throw forbidden('forbidden', 'Not enough rights on this desktop');
    return desktop;
  };

  const assertAllowed = async () => {
    if (!(await bastion.userConfig()).can_use_bastion) throw forbidden('bastion_not_allowed', 'The bastion is not enabled');
  };

  // The caller's own desktops' targets.
  r.get('/bastions', { preHandler: auth, schema: { response: { 200: ZBastionList } } }, async (request) => {
    await assertAllowed();
    const rows = await ctx.db
      .select({ t: schema.bastionTargets, userId: schema.domains.userId })
      .from(schema.bastionTargets)
      .innerJoin(schema.domains, eq(schema.domains.id, schema.bastionTargets.desktopId))
      .where(and(eq(schema.domains.userId, authOf(request).user.id), eq(schema.domains.kind, 'desktop')))
      .orderBy(asc(schema.bastionTargets.createdAt));
    return rows.map((row) => bastionView(row.t, row.userId));
  });

  r.get('/desktop/bastion/:id', { preHandler: auth, schema: { params, response: { 200: ZBastion } } }, async (request) => {
    await assertAllowed();
    const desktop = await desktopOf(request);
    return bastionView(await targetOf(ctx, desktop), desktop.userId);
  });

  r.put('/desktop/bastion/:id', { preHandler: auth, schema: { params, body: ZBastionUpdate, response: { 200: ZBastion } } }, async (request) => {
    await assertAllowed();
    const desktop = await desktopOf(request);
    const row = await updateTarget(ctx, desktop, request.body);
    if (desktop.userId !== authOf(request).user.id) {
      await audit(ctx.db, auditActorOf(request), {
        action: 'bastion.update_other',
        objectType: 'desktop',
        objectId: desktop.id,
        objectName: desktop.name,
        categoryId: desktop.categoryId,
        detail: { owner_id: desktop.userId },
      });
    }
    return bastionView(row, desktop.userId);
  });
}
