import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminHypervisor, ZAdminHypervisorList, ZAdminHypervisorUpdate } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { requireAuth } from '../../../http/guard';
import { notFound } from '../../../http/errors';
import { auditActorOf, audit } from '../../../audit/record';
import { adminSocketCount, notifyAdmins } from '../../../socket/admins';
import { acceptsStarts } from '../../shared/hypervisor-state';
import { hypervisorViews } from './view';

/** How often the console hears the hypervisors' numbers while an admin is connected. */
export const HYPERVISOR_TICK_MS = 3_000;

/** Tells the admins each hypervisor's state and numbers (admins only: managers see no hypervisor). */
export async function publishHypervisors(ctx: AppContext) {
  for (const view of await hypervisorViews(ctx)) notifyAdmins(ctx, null, 'hypervisor_update', view);
}

/** The live numbers: sampled every few seconds while at least one admin's console is connected. */
export function startHypervisorMonitor(ctx: AppContext): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy || adminSocketCount(ctx) === 0) return;
    busy = true;
    publishHypervisors(ctx)
      .catch((err) => ctx.log.warn({ err }, 'hypervisor numbers not published'))
      .finally(() => (busy = false));
  }, HYPERVISOR_TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Hypervisors (admins only): the engine's hosts with their state and numbers, and the switch that
 * stops new starts on one (`enabled: false` or `only_forced: true`), stored so that every server
 * process and a restart see it; running desktops go on.
 */
export async function adminHypervisorRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });
  const params = z.object({ id: z.string().min(1).max(64) });

  r.get('/admin/hypervisors', { preHandler: adminOnly, schema: { response: { 200: ZAdminHypervisorList } } }, async () => {
    const items = await hypervisorViews(ctx);
    return { items, total: items.length };
  });

  r.put(
    '/admin/hypervisors/:id',
    { preHandler: adminOnly, schema: { params, body: ZAdminHypervisorUpdate, response: { 200: ZAdminHypervisor } } },
    async (request) => {
      const { enabled, only_forced } = request.body;
      const row = await ctx.db.transaction(async (tx) => {
        const [before] = await tx.select().from(schema.hypervisors).where(eq(schema.hypervisors.id, request.params.id)).for('update');
        if (!before) throw notFound('not_found', 'Hypervisor not found');
        const [after] = await tx
          .update(schema.hypervisors)
          .set({ ...(enabled !== undefined && { enabled }), ...(only_forced !== undefined && { onlyForced: only_forced }), updatedAt: new Date() })
          .where(eq(schema.hypervisors.id, before.id))
          .returning();
        const was = acceptsStarts(before);
        const now = acceptsStarts(after!);
        // Asking for the state it already has changes nothing and records nothing.
        if (before.enabled === after!.enabled && before.onlyForced === after!.onlyForced) return after!;
        await audit(tx, auditActorOf(request), {
          action: was === now ? 'hypervisor.update' : now ? 'hypervisor.starts_on' : 'hypervisor.starts_off',
          objectType: 'hypervisor',
          objectId: after!.id,
          objectName: after!.name,
          categoryId: null,
          detail: { enabled: after!.enabled, only_forced: after!.onlyForced },
        });
        return after!;
      });
      const [view] = await hypervisorViews(ctx, [row]);
      notifyAdmins(ctx, null, 'hypervisor_update', view!);
      return view!;
    },
  );
}
