import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import {
  PRIVILEGED_ROLES,
  ZAdminDeployment,
  ZAdminDeploymentList,
  ZAdminDeploymentsQuery,
  ZAdminDeploymentUpdate,
  ZAdminMedia,
  ZAdminMediaList,
  ZAdminMediaQuery,
  ZAdminMediaUpdate,
  ZAdminTemplate,
  ZAdminTemplateList,
  ZAdminTemplatesQuery,
  ZAdminTemplateUpdate,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { badRequest, notFound } from '../../../http/errors';
import { authOf } from '../../../http/guard';
import type { UserRow } from '../../../auth/sessions';
import type { DesktopLifecycle } from '../../desktops/lifecycle';
import { findDomain } from '../../shared/domains';
import { assertNameFree } from '../../domains/names';
import { checkNewItemQuota } from '../../storage/new-item-quota';
import { deleteTemplate, updateTemplate } from '../../templates/actions';
import { publishTemplate } from '../../templates/view';
import type { MediaService } from '../../media/service';
import { deleteMedia } from '../../media/delete';
import { checkNewMediaQuota } from '../../media/quota';
import { findMedia } from '../../media/view';
import { deleteDeployment, toggleVisible } from '../../deployments/actions';
import { findDeployment } from '../../deployments/access';
import type { DeploymentEvents } from '../../deployments/events';
import { checkNewDeploymentQuota } from '../../deployments/quota';
import { boundCategory, inReach, peopleGuards } from '../people/scope';
import { newOwnerFor, ownerColumnsOf } from './new-owner';
import {
  adminDeploymentView, adminMediaView, adminTemplateView, listAdminDeployments, listAdminMedia, listAdminTemplates,
} from './list';

const idParams = z.object({ id: z.string().min(1).max(64) });
type Deps = { lifecycle: DesktopLifecycle; media: MediaService; deploymentEvents: DeploymentEvents };

/**
 * Templates, media and deployments across owners (issue 13): lists, enable/disable (templates),
 * show/hide (deployments), change owner, delete — each through the portal's own code (the
 * template's tree and its rules, media in use, the recycle bin). Managers reach their category's.
 */
export async function adminContentRoutes(app: FastifyInstance, ctx: AppContext, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);
  const { db } = ctx;
  const me = (request: FastifyRequest) => authOf(request).user;

  /** The new owner: a user the caller reaches (not in the bin) with a role that owns templates, media and deployments. */
  const newOwner = (request: FastifyRequest, id: string): Promise<UserRow> => newOwnerFor(db, request, id, { privileged: true });
  const ownerOf = ownerColumnsOf;

  // ------------------------------------------------------------------ templates
  async function reachableTemplate(request: FastifyRequest, id: string) {
    const row = await findDomain(db, id);
    if (!row || row.kind !== 'template' || !inReach(request, row.categoryId)) throw notFound('template_not_found', 'Template not found');
    return row;
  }

  r.get('/admin/templates', { preHandler: staff, schema: { querystring: ZAdminTemplatesQuery, response: { 200: ZAdminTemplateList } } }, async (request) =>
    listAdminTemplates(db, boundCategory(request), request.query),
  );

  r.put('/admin/templates/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminTemplateUpdate, response: { 200: ZAdminTemplate } } }, async (request) => {
    let row = await reachableTemplate(request, request.params.id);
    const b = request.body;
    if (b.enabled !== undefined && b.enabled !== row.enabled) {
      row = await updateTemplate(ctx, deps.lifecycle, me(request), { id: row.id, enabled: b.enabled });
      await audit(db, auditActorOf(request), {
        action: b.enabled ? 'template.enable' : 'template.disable', objectType: 'template', objectId: row.id, objectName: row.name, categoryId: row.categoryId,
      });
    }
    if (b.owner_id !== undefined && b.owner_id !== row.userId) {
      const owner = await newOwner(request, b.owner_id);
      await assertNameFree(db, owner.id, 'template', row.name, row.id);
      await checkNewItemQuota(db, owner, 'templates');
      const before = row;
      row = await db.transaction(async (tx) => {
        const [updated] = await tx.update(schema.domains).set(ownerOf(owner)).where(eq(schema.domains.id, before.id)).returning();
        // Its own disk goes with it (a duplicate shares its source's disk, which stays with the source's owner).
        const disks = await tx.select({ id: schema.domainDisks.storageId }).from(schema.domainDisks).where(eq(schema.domainDisks.domainId, before.id));
        if (disks.length && before.duplicateOfId === null) {
          await tx.update(schema.storage).set({ userId: owner.id })
            .where(and(inArray(schema.storage.id, disks.map((x) => x.id)), eq(schema.storage.userId, before.userId), eq(schema.storage.kind, 'template')));
        }
        await audit(tx, auditActorOf(request), {
          action: 'template.change_owner', objectType: 'template', objectId: before.id, objectName: before.name, categoryId: owner.categoryId,
          detail: { from: before.userId, to: owner.id },
        });
        return updated!;
      });
      ctx.bus.toUser(before.userId, 'template_delete', { id: before.id });
      await publishTemplate(ctx, row, 'template_add');
    }
    return (await adminTemplateView(db, row.id))!;
  });

  // The template and everything built on it, to the owner's bin (the portal's rules: the tree, running desktops).
  r.delete('/admin/templates/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const row = await reachableTemplate(request, request.params.id);
    await deleteTemplate(ctx, deps.lifecycle, me(request), row.id);
    await audit(db, auditActorOf(request), { action: 'template.delete', objectType: 'template', objectId: row.id, objectName: row.name, categoryId: row.categoryId });
    return { id: row.id };
  });

  // ------------------------------------------------------------------ media
  async function reachableMedia(request: FastifyRequest, id: string) {
    const row = await findMedia(db, id);
    if (!row || row.status === 'deleted' || !inReach(request, row.categoryId)) throw notFound('media_not_found', 'Media not found');
    return row;
  }

  r.get('/admin/media', { preHandler: staff, schema: { querystring: ZAdminMediaQuery, response: { 200: ZAdminMediaList } } }, async (request) =>
    listAdminMedia(db, boundCategory(request), request.query),
  );

  r.put('/admin/media/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminMediaUpdate, response: { 200: ZAdminMedia } } }, async (request) => {
    const row = await reachableMedia(request, request.params.id);
    if (request.body.owner_id !== row.userId) {
      const owner = await newOwner(request, request.body.owner_id);
      await checkNewMediaQuota(db, owner, row.size);
      const updated = await db.transaction(async (tx) => {
        const [u] = await tx.update(schema.media).set(ownerOf(owner)).where(eq(schema.media.id, row.id)).returning();
        await audit(tx, auditActorOf(request), {
          action: 'media.change_owner', objectType: 'media', objectId: row.id, objectName: row.name, categoryId: owner.categoryId,
          detail: { from: row.userId, to: owner.id },
        });
        return u!;
      });
      ctx.bus.toUser(row.userId, 'media_delete', { id: row.id });
      await deps.media.publish(updated, 'media_add');
    }
    return (await adminMediaView(db, row.id))!;
  });

  r.delete('/admin/media/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const row = await reachableMedia(request, request.params.id);
    await deleteMedia(ctx, deps.media, row);
    await audit(db, auditActorOf(request), { action: 'media.delete', objectType: 'media', objectId: row.id, objectName: row.name, categoryId: row.categoryId });
    return { id: row.id };
  });

  // ------------------------------------------------------------------ deployments
  async function reachableDeployment(request: FastifyRequest, id: string) {
    const row = await findDeployment(db, id);
    if (!row || row.status !== 'ready' || !inReach(request, row.categoryId)) throw notFound('deployment_not_found', 'Deployment not found');
    return row;
  }

  r.get('/admin/deployments', { preHandler: staff, schema: { querystring: ZAdminDeploymentsQuery, response: { 200: ZAdminDeploymentList } } }, async (request) =>
    listAdminDeployments(db, boundCategory(request), request.query),
  );

  r.put('/admin/deployments/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminDeploymentUpdate, response: { 200: ZAdminDeployment } } }, async (request) => {
    let row = await reachableDeployment(request, request.params.id);
    const b = request.body;
    const events = deps.deploymentEvents;
    if (b.visible !== undefined && b.visible !== row.visible) {
      // Hiding stops the started desktops, as the portal's "hide and stop".
      await toggleVisible(ctx, deps.lifecycle, events, row, true, { by: me(request) });
      await audit(db, auditActorOf(request), {
        action: b.visible ? 'deployment.show' : 'deployment.hide', objectType: 'deployment', objectId: row.id, objectName: row.name, categoryId: row.categoryId,
      });
      row = (await findDeployment(db, row.id))!;
    }
    if (b.owner_id !== undefined && b.owner_id !== row.userId) {
      const owner = await newOwner(request, b.owner_id);
      // Its desktops come with it: the new owner's quota of deployment desktops counts them.
      const [desktops] = await db.select({ n: count() }).from(schema.domains).where(eq(schema.domains.tag, row.id));
      await checkNewDeploymentQuota(db, owner, Number(desktops?.n ?? 0));
      const before = row;
      row = await db.transaction(async (tx) => {
        const [updated] = await tx.update(schema.deployments)
          .set({ ...ownerOf(owner), coOwners: before.coOwners.filter((x) => x !== owner.id) })
          .where(eq(schema.deployments.id, before.id)).returning();
        await audit(tx, auditActorOf(request), {
          action: 'deployment.change_owner', objectType: 'deployment', objectId: before.id, objectName: before.name, categoryId: owner.categoryId,
          detail: { from: before.userId, to: owner.id },
        });
        return updated!;
      });
      // The old owner no longer lists it (unless they co-own it); the new one gets it.
      events.removed(before, [before.userId]);
      await events.added(row, [owner.id]);
      await events.updated(row);
    }
    return (await adminDeploymentView(db, row.id))!;
  });

  // To the owner's bin with its desktops (all stopped), as the portal's delete.
  r.delete('/admin/deployments/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const row = await reachableDeployment(request, request.params.id);
    await deleteDeployment(ctx, deps.deploymentEvents, row, me(request), false);
    await audit(db, auditActorOf(request), { action: 'deployment.delete', objectType: 'deployment', objectId: row.id, objectName: row.name, categoryId: row.categoryId });
    return { id: row.id };
  });
}
