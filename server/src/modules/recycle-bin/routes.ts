import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { ZRecycleBinCutoff, ZRecycleBinDetail, ZRecycleBinItem, ZRecycleBinRestoreAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { authOf, requireAuth } from '../../http/guard';
import { forbidden, notFound } from '../../http/errors';
import { canManage } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { detailView, itemView } from './entries';
import { deleteEntry } from './purge';
import { cutoffHoursFor } from './recycle';
import type { RecycleBinRow } from './items';
import { restoreEntry } from './restore';
import { auditActorOf, audit } from '../../audit/record';

/** Restores and deletions for good are security events (the audit log keeps who did them). */
const binAudit = (action: 'recycle_bin.restore' | 'recycle_bin.delete', row: RecycleBinRow) => ({
  action,
  objectType: `recycle_bin.${row.itemType}`,
  objectId: row.id,
  objectName: row.itemName,
  categoryId: row.ownerCategoryId,
  detail: { owner_id: row.ownerId },
});

const ZId = z.object({ id: z.string().min(1).max(64) });

/** The entry named in the request, when the caller may act on it: its owner, an admin, a manager of the owner's category. */
async function entryFor(ctx: AppContext, user: UserRow, id: string): Promise<RecycleBinRow> {
  const [row] = await ctx.db.select().from(schema.recycleBin).where(eq(schema.recycleBin.id, id));
  if (!row) throw notFound('not_found', 'Recycle bin entry not found');
  if (!canManage(await actorOf(ctx.db, user), { userId: row.ownerId, categoryId: row.ownerCategoryId })) {
    throw forbidden('forbidden', 'Not enough rights on this recycle bin entry');
  }
  return row;
}

/** Recycle bin (spec 001 §3, §4, §7; reference §2.12, §6.3). */
export async function recycleBinRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);
  const { db } = ctx;

  const mine = (userId: string) =>
    db
      .select()
      .from(schema.recycleBin)
      .where(and(eq(schema.recycleBin.ownerId, userId), eq(schema.recycleBin.status, 'recycled')))
      .orderBy(desc(schema.recycleBin.createdAt));

  const views = async (rows: RecycleBinRow[]) => {
    const hours = new Map<string, number>();
    for (const row of rows) if (!hours.has(row.ownerCategoryId)) hours.set(row.ownerCategoryId, await cutoffHoursFor(ctx, row.ownerCategoryId));
    return rows.map((row) => itemView(row, hours.get(row.ownerCategoryId)!));
  };

  r.get('/recycle_bin/item_count/user', { preHandler: auth, schema: { response: { 200: z.array(ZRecycleBinItem) } } }, async (request) =>
    views(await mine(authOf(request).user.id)),
  );

  // Administrators see every entry in the bin, managers those of their category.
  r.get(
    '/recycle_bin/item_count',
    { preHandler: requireAuth(ctx, { roles: ['admin', 'manager'] }), schema: { response: { 200: z.array(ZRecycleBinItem) } } },
    async (request) => {
      const { user } = authOf(request);
      const where =
        user.roleId === 'admin'
          ? eq(schema.recycleBin.status, 'recycled')
          : and(eq(schema.recycleBin.status, 'recycled'), eq(schema.recycleBin.ownerCategoryId, user.categoryId));
      return views(await db.select().from(schema.recycleBin).where(where).orderBy(desc(schema.recycleBin.createdAt)));
    },
  );

  r.get('/recycle_bin/count', { preHandler: auth, schema: { response: { 200: z.number() } } }, async (request) =>
    (await mine(authOf(request).user.id)).length,
  );

  r.get('/recycle-bin/user/cutoff-time', { preHandler: auth, schema: { response: { 200: ZRecycleBinCutoff } } }, async (request) => ({
    recycle_bin_cuttoff_time: await cutoffHoursFor(ctx, authOf(request).user.categoryId),
  }));

  r.get('/recycle_bin/config/default-delete', { preHandler: auth, schema: { response: { 200: z.boolean() } } }, async () =>
    (await ctx.settings.get('recycle_bin')).default_delete,
  );

  r.get('/recycle_bin/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZRecycleBinDetail } } }, async (request) => {
    const row = await entryFor(ctx, authOf(request).user, request.params.id);
    return detailView(ctx, row, await cutoffHoursFor(ctx, row.ownerCategoryId));
  });

  r.put('/recycle_bin/restore/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZRecycleBinRestoreAnswer } } }, async (request) => {
    const { user } = authOf(request);
    const entry = await entryFor(ctx, user, request.params.id);
    const answer = await restoreEntry(ctx, entry, user);
    await audit(ctx.db, auditActorOf(request), binAudit('recycle_bin.restore', entry));
    return answer;
  });

  r.delete('/recycle_bin/empty', { preHandler: auth }, async (request) => {
    const { user } = authOf(request);
    for (const row of await mine(user.id)) {
      const done = await deleteEntry(ctx, row, user).then(() => true, () => false);
      if (done) await audit(ctx.db, auditActorOf(request), binAudit('recycle_bin.delete', row));
    }
    return {};
  });

  r.delete('/recycle_bin/:id', { preHandler: auth, schema: { params: ZId } }, async (request) => {
    const { user } = authOf(request);
    const entry = await entryFor(ctx, user, request.params.id);
    await deleteEntry(ctx, entry, user);
    await audit(ctx.db, auditActorOf(request), binAudit('recycle_bin.delete', entry));
    return {};
  });
}
