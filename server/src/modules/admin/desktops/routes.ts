import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZAdminActionAnswer,
  ZAdminDesktopAction,
  ZAdminDesktopDetail,
  ZDesktopHistory,
  ZAdminDesktopList,
  ZAdminDesktopsQuery,
  ZAdminIds,
  ZViewer,
  ZViewerAnswer,
  ON_HYPERVISOR,
  statusIn,
  type TAdminActionResult,
  type TAdminDesktopAction,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { auditActorOf, audit } from '../../../audit/record';
import { ApiError, conflict, notFound } from '../../../http/errors';
import { plainJsonAnswer } from '../../../http/lists';
import { authOf } from '../../../http/guard';
import type { DesktopLifecycle } from '../../desktops/lifecycle';
import { findDomain, ownerOf, type DomainRow } from '../../shared/domains';
import { deleteDesktop } from '../../recycle-bin/desktop-delete';
import { openViewer } from '../../viewers/open';
import { assertReach, boundCategory, peopleGuards } from '../people/scope';
import { listAdminDesktops } from './list';
import { adminDesktopDetail, adminDesktopHistory } from './detail';
import { sendScreenshot } from '../../desktops/screenshot';

const idParams = z.object({ id: z.string().min(1).max(64) });

/** A desktop the caller reaches in the console: admins any, managers their category's (another one's is not found). */
export async function reachableDesktop(ctx: AppContext, request: FastifyRequest, id: string): Promise<DomainRow> {
  const missing = () => notFound('desktop_not_found', 'Desktop not found');
  const row = await findDomain(ctx.db, id);
  if (!row || row.kind !== 'desktop') throw missing();
  assertReach(request, row.categoryId, missing);
  return row;
}

/** Every desktop across owners: list, actions on one or many, a viewer opened as support. */
export async function adminDesktopRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);

  // A long list: its view code builds the contract's objects (checked when compiled) and the answer skips zod's pass (http/lists.ts).
  r.get('/admin/desktops', { preHandler: staff, schema: { querystring: ZAdminDesktopsQuery, response: { 200: ZAdminDesktopList } }, ...plainJsonAnswer }, async (request) =>
    listAdminDesktops(ctx.db, boundCategory(request), request.query),
  );

  /** One action on one desktop, with the portal's own code (state table, quotas, bin). */
  async function act(request: FastifyRequest, action: TAdminDesktopAction, row: DomainRow): Promise<{ status: string }> {
    const me = authOf(request).user;
    switch (action) {
      case 'start':
        return lifecycle.start(row, await ownerOf(ctx.db, row), me);
      case 'stop':
        return lifecycle.stop(row, { by: me });
      case 'force_stop':
        // A start still waiting in the queue is cancelled; a machine on the hypervisor is destroyed.
        if (row.status === 'Starting') return lifecycle.stop(row, { by: me });
        if (!statusIn(ON_HYPERVISOR, row.status)) {
          throw conflict('desktop_action_not_available', `Cannot force stop a desktop that is ${row.status}`, { status: row.status, action: 'force_stop' });
        }
        return lifecycle.forceStop(row.id, { by: me });
      case 'reset':
        return lifecycle.reset(row, { by: me });
      case 'delete':
      case 'delete_permanent':
        await deleteDesktop(ctx, lifecycle, row, me, { permanent: action === 'delete_permanent' });
        return { status: 'Deleted' };
    }
  }

  r.post(
    '/admin/desktops/:action',
    { preHandler: staff, schema: { params: z.object({ action: ZAdminDesktopAction }), body: ZAdminIds, response: { 200: ZAdminActionAnswer } } },
    async (request) => {
      const { action } = request.params;
      const results: TAdminActionResult[] = [];
      for (const id of [...new Set(request.body.ids)]) {
        try {
          const row = await reachableDesktop(ctx, request, id);
          const { status } = await act(request, action, row);
          await audit(ctx.db, auditActorOf(request), {
            action: `desktop.${action}`, objectType: 'desktop', objectId: row.id, objectName: row.name, categoryId: row.categoryId,
            detail: { owner_id: row.userId, from: row.status },
          });
          results.push({ id, ok: true, status });
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          results.push({ id, ok: false, description_code: err.code, ...(err.params ? { params: err.params } : {}) });
        }
      }
      const done = results.filter((x) => x.ok).length;
      return { done, failed: results.length - done, results };
    },
  );

  // One desktop's page: its facts, its history (newest first) and a thumbnail of its screen while it runs.
  r.get('/admin/desktops/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZAdminDesktopDetail } } }, async (request) =>
    adminDesktopDetail(ctx.db, await reachableDesktop(ctx, request, request.params.id), ctx.clock.now()),
  );
  r.get('/admin/desktops/:id/history', { preHandler: staff, schema: { params: idParams, response: { 200: ZDesktopHistory } } }, async (request) =>
    adminDesktopHistory(ctx.db, await reachableDesktop(ctx, request, request.params.id)),
  );
  r.get('/admin/desktops/:id/screenshot', { preHandler: staff, schema: { params: idParams } }, async (request, reply) =>
    sendScreenshot(ctx, await reachableDesktop(ctx, request, request.params.id), reply),
  );

  // The owner's screen, opened by support: audited as someone else's screen, and the owner is told live.
  r.get(
    '/admin/desktops/:id/viewer/:viewer',
    { preHandler: staff, schema: { params: idParams.extend({ viewer: ZViewer }), response: { 200: ZViewerAnswer } } },
    async (request) => openViewer(ctx, request, await reachableDesktop(ctx, request, request.params.id), request.params.viewer, { support: true }),
  );
}
