import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZAdminActionAnswer,
  ZAdminDesktopAction,
  ZAdminDesktopDetail,
  ZAdminDesktopUpdate,
  AT_REST,
  ZDesktopHistory,
  ZDesktopHistoryQuery,
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
import { ApiError, badRequest, conflict, notFound } from '../../../http/errors';
import { schema } from '../../../db';
import { and, eq, inArray } from 'drizzle-orm';
import { newOwnerFor, ownerColumnsOf } from '../content/new-owner';
import { assertNameFree } from '../../domains/names';
import { checkNewItemQuota } from '../../storage/new-item-quota';
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
import { decodeHistoryCursor } from '../../desktops/events';

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
  // Given to another person of the caller's reach, stopped, with its own disk; its old owner's list loses it, the new one's gains it.
  r.put('/admin/desktops/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminDesktopUpdate, response: { 200: ZAdminDesktopDetail } } }, async (request) => {
    const before = await reachableDesktop(ctx, request, request.params.id);
    const owner = await newOwnerFor(ctx.db, request, request.body.owner_id, { privileged: false });
    if (owner.id !== before.userId) {
      if (before.tag) throw conflict('desktop_owner_change_deployment', 'A deployment\'s desktop cannot change owner');
      if (!statusIn(AT_REST, before.status)) {
        throw conflict('desktop_action_not_available', `Cannot give a desktop that is ${before.status} to another owner`, { status: before.status, action: 'change_owner' });
      }
      await assertNameFree(ctx.db, owner.id, 'desktop', before.name, before.id);
      await checkNewItemQuota(ctx.db, owner, 'desktops');
      const moved = await ctx.db.transaction(async (tx) => {
        const [row] = await tx
          .update(schema.domains)
          .set(ownerColumnsOf(owner))
          .where(and(eq(schema.domains.id, before.id), inArray(schema.domains.status, [...AT_REST])))
          .returning();
        if (!row) throw conflict('desktop_action_not_available', 'The desktop changed state', { action: 'change_owner' });
        // Its own disks go with it (never a template's).
        const disks = await tx.select({ id: schema.domainDisks.storageId }).from(schema.domainDisks).where(eq(schema.domainDisks.domainId, before.id));
        if (disks.length) {
          await tx.update(schema.storage).set({ userId: owner.id })
            .where(and(inArray(schema.storage.id, disks.map((x) => x.id)), eq(schema.storage.userId, before.userId), inArray(schema.storage.kind, ['desktop', 'volatile'])));
        }
        await audit(tx, auditActorOf(request), {
          action: 'desktop.change_owner', objectType: 'desktop', objectId: before.id, objectName: before.name, categoryId: owner.categoryId,
          detail: { from: before.userId, to: owner.id },
        });
        return row;
      });
      ctx.bus.toUser(before.userId, 'desktop_delete', { id: before.id });
      await lifecycle.announce(moved);
    }
    return adminDesktopDetail(ctx.db, (await findDomain(ctx.db, before.id))!, ctx.clock.now());
  });
  // Its history a page at a time, newest first; `cursor` (a page's next_cursor) for the older ones.
  r.get('/admin/desktops/:id/history', { preHandler: staff, schema: { params: idParams, querystring: ZDesktopHistoryQuery, response: { 200: ZDesktopHistory } } }, async (request) => {
    const text = request.query.cursor;
    const cursor = text === undefined ? null : decodeHistoryCursor(text);
    if (text !== undefined && !cursor) throw badRequest('desktop_history_cursor_invalid', 'The history cursor is not one a page of this history gave');
    return adminDesktopHistory(ctx.db, await reachableDesktop(ctx, request, request.params.id), cursor);
  });
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
