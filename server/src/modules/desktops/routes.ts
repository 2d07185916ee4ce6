import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { RETRYABLE, STARTABLE, statusIn, VIEWABLE, ZAllowedTemplate, ZDesktopActionParam, ZDesktopList, ZDesktopListQuery, ZStatusAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth } from '../../http/guard';
import { conflict, notFound, precondition } from '../../http/errors';
import { jsonTextAnswer } from '../../http/lists';
import { isAllowed } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { checkNewDesktopQuota } from '../quotas/create-check';
import { registerUsagePart } from '../quotas/applied';
import { desktopUsage } from '../quotas/usage';
import { allowedTemplates } from '../templates/allowed';
import { desktopFor } from './access';
import { createDesktopFromTemplate, creating } from './create';
import type { DesktopLifecycle } from './lifecycle';
import { findDomain, ownerOf } from '../shared/domains';
import { createDesktopListCache } from './list-cache';
import { deleteDesktop as deleteOrRecycleDesktop } from '../recycle-bin/desktop-delete';
import { sendScreenshot } from './screenshot';

registerUsagePart(desktopUsage);

const ZId = z.object({ id: z.string().min(1).max(64) });

export async function desktopRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);
  const listCache = createDesktopListCache(ctx);

  r.get(
    '/user/desktops',
    { preHandler: auth, schema: { querystring: ZDesktopListQuery, response: { 200: ZDesktopList } } },
    async (request, reply) => {
      const { body, total } = await listCache.answer(authOf(request).user.id, request.query);
      return jsonTextAnswer(reply, body, total);
    },
  );

  r.get(
    '/desktop/:action/:id',
    { preHandler: auth, schema: { params: z.object({ action: ZDesktopActionParam, id: z.string().max(64) }), response: { 200: ZStatusAnswer } } },
    async (request) => {
      const row = await desktopFor(ctx, request, request.params.id, { evenHidden: request.params.action === 'stop' });
      switch (request.params.action) {
        case 'start': {
          // (the person starting their own desktop is its owner as this request read them: not read again)
          const { user } = authOf(request);
          return lifecycle.start(row, row.userId === user.id ? user : await ownerOf(ctx.db, row), user);
        }
        case 'stop':
          return lifecycle.stop(row, { by: authOf(request).user });
        case 'reset':
          return lifecycle.reset(row, { by: authOf(request).user });
        case 'retry':
        case 'updating':
          return lifecycle.retry(row);
      }
    },
  );

  // To the owner's recycle bin, or for good when asked (/permanent), a deployment's, or retention 0 (recycle-bin module).
  const deleteDesktop = async (id: string, request: Parameters<typeof desktopFor>[1], permanent: boolean) => {
    const row = await desktopFor(ctx, request, id);
    const { recycleBinId } = await deleteOrRecycleDesktop(ctx, lifecycle, row, authOf(request).user, { permanent });
    // The original answers {}; the entry lets the portal offer "Undo" (a restore from the recycle bin).
    return recycleBinId ? { recycle_bin_id: recycleBinId } : {};
  };
  r.delete('/desktop/:id', { preHandler: auth, schema: { params: ZId } }, (request) => deleteDesktop(request.params.id, request, false));
  r.delete('/desktop/:id/permanent', { preHandler: auth, schema: { params: ZId } }, (request) => deleteDesktop(request.params.id, request, true));

  r.get(
    '/user/templates/allowed/:kind',
    { preHandler: auth, schema: { params: z.object({ kind: z.enum(['all', 'shared']) }), response: { 200: z.array(ZAllowedTemplate) } } },
    async (request) => allowedTemplates(ctx.db, authOf(request).user, request.params.kind),
  );

  // A temporary desktop from a template: one per user and template, started at once, gone when stopped.
  const ZNonpersistent = z.object({ template: z.string().min(1).max(64) });
  r.post('/nonpersistent', { preHandler: auth, schema: { body: ZNonpersistent } }, async (request) => {
    const { user } = authOf(request);
    const template = await findDomain(ctx.db, request.body.template);
    if (!template || template.kind !== 'template' || !template.enabled || !isAllowed(await actorOf(ctx.db, user), template)) {
      throw notFound('template_not_found', 'Template not found');
    }
    if (template.hardware.reservables.vgpus?.length) throw precondition('temporal_new_reservable', 'Templates that need a booking cannot make temporary desktops');
    const existing = await ctx.db
      .select()
      .from(schema.domains)
      .where(and(eq(schema.domains.userId, user.id), eq(schema.domains.templateId, template.id), eq(schema.domains.persistent, false)));
    const reusable = existing.find((d) => !statusIn(RETRYABLE, d.status));
    if (reusable) {
      if (statusIn(STARTABLE, reusable.status)) await lifecycle.start(reusable, user);
      return { id: reusable.id };
    }
    for (const old of existing) await lifecycle.destroyDesktop(old);
    await checkNewDesktopQuota(ctx.db, user, 'volatile');
    const id = randomUUID();
    const row = await creating(ctx.locks, id, () => createDesktopFromTemplate(ctx.db, ctx.engine, template, user, { id, name: template.name, persistent: false, status: 'Stopped' }));
    await lifecycle.announce(row);
    try {
      await lifecycle.start(row, user);
    } catch (err) {
      await lifecycle.destroyDesktop(row);
      throw err;
    }
    return { id: row.id };
  });

  r.delete('/nonpersistent/:id', { preHandler: auth, schema: { params: ZId } }, async (request) => {
    const row = await desktopFor(ctx, request, request.params.id);
    if (row.persistent) throw conflict('desktop_action_not_available', 'Not a temporary desktop', { action: 'delete' });
    await lifecycle.destroyDesktop(row);
    return {};
  });

  r.get('/desktop/:id/screenshot', { preHandler: auth, schema: { params: ZId } }, async (request, reply) => {
    return sendScreenshot(ctx, await desktopFor(ctx, request, request.params.id), reply);
  });
}
