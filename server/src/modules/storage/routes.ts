import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  CHECK_QUOTA_ITEM_TYPES,
  ZStorageDisk,
  ZStorageIncreaseParams,
  ZStoragePoolAvailability,
  ZStorageTaskAnswer,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { registerUsagePart } from '../quotas/applied';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { createStorageOperations, poolAvailability } from './increase';
import { checkNewItemQuota } from './new-item-quota';
import { storageUsage } from './usage';
import { userDisks } from './view';

registerUsagePart(storageUsage);

/**
 * Storage (spec 001 "Storage", reference §2.14): the user's disks, disk growth as a job with
 * cancel by its initiator, the pool's free space, and the generic "one more?" quota check.
 */
export async function storageRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);
  const ops = createStorageOperations(ctx, lifecycle);

  r.get('/storage/ready', { preHandler: auth, schema: { response: { 200: z.array(ZStorageDisk) } } }, async (request) =>
    userDisks(ctx, authOf(request).user.id),
  );

  r.put(
    '/storage/:id/priority/:priority/increase/:increment',
    { preHandler: auth, schema: { params: ZStorageIncreaseParams, response: { 200: ZStorageTaskAnswer } } },
    async (request) => {
      const { id, priority, increment } = request.params;
      return ops.increase(authOf(request).user, id, priority, increment);
    },
  );

  r.put(
    '/storage/:id/abort_operations',
    { preHandler: auth, schema: { params: z.object({ id: z.string().min(1).max(64) }), response: { 200: ZStorageTaskAnswer } } },
    async (request) => ops.abort(authOf(request).user, request.params.id),
  );

  r.get(
    '/admin/storage_pool/availability',
    { preHandler: requireAuth(ctx, { roles: ['admin', 'manager'] }), schema: { response: { 200: ZStoragePoolAvailability } } },
    async () => poolAvailability(ctx),
  );

  // Static paths, so that no other area's /{kind}/:param route catches them first.
  for (const itemType of CHECK_QUOTA_ITEM_TYPES) {
    const url = `/${itemType}/new/check_quota`;
    if (app.hasRoute({ method: 'GET', url: app.prefix + url })) continue;
    r.get(url, { preHandler: auth }, async (request) => {
      await checkNewItemQuota(ctx.db, authOf(request).user, itemType);
      return {};
    });
  }
}
