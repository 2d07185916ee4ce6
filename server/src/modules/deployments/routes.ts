import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import {
  ZCheckQuotaAnswer,
  ZDeployment,
  ZDeploymentCheckQuota,
  ZDeploymentCoOwners,
  ZDeploymentCoOwnersUpdate,
  ZDeploymentDesktopVisible,
  ZDeploymentDetailAnswer,
  ZDeploymentDetailQuery,
  ZDeploymentIdAnswer,
  ZDeploymentInfo,
  ZDeploymentPermissions,
  ZDeploymentUpdate,
  ZDeploymentUsersUpdate,
  ZDeploymentVisible,
  ZDeploymentVisibleAnswer,
  ZDirectViewerCsvQuery,
  ZGroupsUsersCount,
  ZGroupsUsersCountAnswer,
  ZNewDeployment,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth } from '../../http/guard';
import { forbidden, notFound } from '../../http/errors';
import { listAnswer, plainJsonAnswer } from '../../http/lists';
import { requirePublicUrl } from '../../http/base-url';
import { chooserOf } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { findDomain } from '../shared/domains';
import { registerUsagePart } from '../quotas/applied';
import { deploymentFor, reachesDesktop } from './access';
import {
  deleteDeployment,
  editDeployment,
  editDeploymentUsers,
  setCoOwners,
  setDesktopVisible,
  startDeployment,
  stopDeployment,
  toggleVisible,
} from './actions';
import { createDeployment, deploymentJobHandler, recreateDeployment } from './create';
import { directViewerCsv } from './csv';
import { createDeploymentEvents } from './events';
import { checkNewDeploymentQuota, deploymentUsage } from './quota';
import { DEPLOYMENT_ROLES } from './roles';
import { assertHasUsers } from './rules';
import { allowedNames, selectedUsers } from './users';
import { deploymentDesktopList, deploymentViews } from './view';

registerUsagePart(deploymentUsage);

const ZId = z.object({ id: z.string().min(1).max(64) });
const ZEmpty = z.object({});

/** Deployments (spec core §7 "Deployments", reference §2.8): admin, manager and advanced; owners and co-owners per deployment. */
export async function deploymentRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx, { roles: DEPLOYMENT_ROLES });
  const events = createDeploymentEvents(ctx, lifecycle);
  app.addHook('onClose', async () => events.close());
  ctx.jobs.register(deploymentJobHandler(ctx, events));
  const userOf = (request: Parameters<typeof authOf>[0]) => authOf(request).user;

  /** Owned or co-owned, sorted by name (case-insensitive, reverse, as the reference lists them). */
  r.get('/deployments', { preHandler: auth, schema: { response: { 200: z.array(ZDeployment) } } }, async (request) => {
    const user = userOf(request);
    const rows = await ctx.db
      .select()
      .from(schema.deployments)
      .where(
        and(
          eq(schema.deployments.status, 'ready'),
          or(eq(schema.deployments.userId, user.id), sql`${schema.deployments.coOwners} @> ${JSON.stringify([user.id])}::jsonb`),
        ),
      );
    rows.sort((a, b) => b.name.toLowerCase().localeCompare(a.name.toLowerCase()));
    return deploymentViews(ctx, rows, await actorOf(ctx.db, user));
  });

  r.post('/deployments', { preHandler: auth, schema: { body: ZNewDeployment, response: { 200: ZDeploymentIdAnswer } } }, async (request) =>
    createDeployment(ctx, events, userOf(request), request.body),
  );

  r.post('/deployments/new/check_quota', { preHandler: auth, schema: { body: ZDeploymentCheckQuota, response: { 200: ZCheckQuotaAnswer } } }, async (request) => {
    const user = userOf(request);
    assertHasUsers(request.body.allowed);
    await checkNewDeploymentQuota(ctx.db, user, (await selectedUsers(ctx.db, [chooserOf(user)], request.body.allowed)).length);
    return {};
  });

  r.put('/groups_users/count', { preHandler: auth, schema: { body: ZGroupsUsersCount, response: { 200: ZGroupsUsersCountAnswer } } }, async (request) => {
    const { groups, users } = request.body;
    const allowed = request.body.allowed ?? { groups: groups.length ? groups : (false as const), users: users.length ? users : (false as const) };
    return { quantity: (await selectedUsers(ctx.db, [chooserOf(userOf(request))], allowed)).length };
  });

  r.get(
    '/deployment/:id',
    { preHandler: auth, schema: { params: ZId, querystring: ZDeploymentDetailQuery, response: { 200: ZDeploymentDetailAnswer } }, ...plainJsonAnswer },
    async (request, reply) => {
      const user = userOf(request);
      const { row, actor } = await deploymentFor(ctx, user, request.params.id, 'read');
      const [view] = await deploymentViews(ctx, [row], actor);
      return { ...view!, desktops: listAnswer(reply, await deploymentDesktopList(ctx, row, actor, request.query)) };
    },
  );

  r.put('/deployment/:id', { preHandler: auth, schema: { params: ZId, body: ZDeploymentUpdate, response: { 200: ZDeployment } } }, async (request) => {
    const user = userOf(request);
    const { row, actor } = await deploymentFor(ctx, user, request.params.id, 'edit');
    const updated = await editDeployment(ctx, lifecycle, events, row, user, request.body);
    return (await deploymentViews(ctx, [updated], actor))[0]!;
  });

  r.put(
    '/deployment/users/:id',
    { preHandler: auth, schema: { params: ZId, body: ZDeploymentUsersUpdate, response: { 200: z.object({ id: z.string(), added: z.number(), removed: z.number() }) } } },
    async (request) => {
      const user = userOf(request);
      const { row } = await deploymentFor(ctx, user, request.params.id, 'edit');
      return editDeploymentUsers(ctx, events, row, user, request.body.allowed);
    },
  );

  r.get('/deployment/info/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZDeploymentInfo } } }, async (request) => {
    const { row } = await deploymentFor(ctx, userOf(request), request.params.id, 'read');
    const template = await findDomain(ctx.db, row.templateId);
    const hw = row.createDict.hardware;
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      desktop_name: row.desktopName,
      template_id: row.templateId,
      template: template?.name ?? null,
      visible: row.visible,
      allowed: await allowedNames(ctx.db, row.allowed),
      hardware: {
        vcpus: hw.vcpus,
        memory: hw.memoryMb / 1024,
        boot_order: hw.bootOrder,
        disk_bus: hw.diskBus,
        interfaces: hw.interfaces.map((i) => ({ id: i.id, mac: '' })),
        videos: hw.videos,
        graphics: hw.graphics,
      },
      reservables: { vgpus: hw.reservables.vgpus },
      guest_properties: row.createDict.guestProperties,
      image: row.createDict.image,
      user_permissions: row.userPermissions,
    };
  });

  r.put(
    '/deployments/visible/:id',
    { preHandler: auth, schema: { params: ZId, body: ZDeploymentVisible, response: { 200: ZDeploymentVisibleAnswer } } },
    async (request) => {
      const { row } = await deploymentFor(ctx, userOf(request), request.params.id, 'edit');
      return toggleVisible(ctx, lifecycle, events, row, request.body.stop_started_domains, { by: userOf(request) });
    },
  );

  r.put(
    '/deployments/domain/visible/:id',
    { preHandler: auth, schema: { params: ZId, body: ZDeploymentDesktopVisible, response: { 200: ZDeploymentVisibleAnswer } } },
    async (request) => {
      const desktop = await findDomain(ctx.db, request.params.id);
      if (!desktop || desktop.kind !== 'desktop' || !desktop.tag) throw notFound('desktop_not_found', 'Desktop not found');
      const { row, actor } = await deploymentFor(ctx, userOf(request), desktop.tag, 'edit');
      if (!reachesDesktop(actor, row, desktop)) throw forbidden('forbidden', 'Not enough rights on this desktop');
      return setDesktopVisible(ctx, events, desktop, request.body.visible);
    },
  );

  const remove = (permanent: boolean) => async (request: { params: { id: string } } & Parameters<typeof authOf>[0]) => {
    const user = userOf(request);
    const { row } = await deploymentFor(ctx, user, request.params.id, 'delete');
    return deleteDeployment(ctx, events, row, user, permanent);
  };
  r.delete('/deployments/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZEmpty } } }, remove(false));
  r.delete('/deployments/:id/permanent', { preHandler: auth, schema: { params: ZId, response: { 200: ZEmpty } } }, remove(true));

  r.put(
    '/deployments/:id',
    { preHandler: auth, schema: { params: ZId, response: { 200: z.object({ id: z.string(), missing: z.number() }) } } },
    async (request) => {
      const user = userOf(request);
      const { row } = await deploymentFor(ctx, user, request.params.id, 'edit');
      return recreateDeployment(ctx, events, row, user);
    },
  );

  r.put('/deployments/start/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZEmpty } } }, async (request) => {
    const user = userOf(request);
    const { row, actor } = await deploymentFor(ctx, user, request.params.id, 'edit');
    return startDeployment(ctx, lifecycle, row, user, actor);
  });

  r.put('/deployments/stop/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZEmpty } } }, async (request) => {
    const { row, actor } = await deploymentFor(ctx, userOf(request), request.params.id, 'edit');
    return stopDeployment(ctx, lifecycle, row, actor, { by: userOf(request) });
  });

  r.get('/deployments/directviewer_csv/:id', { preHandler: auth, schema: { params: ZId, querystring: ZDirectViewerCsvQuery } }, async (request, reply) => {
    const { row, actor } = await deploymentFor(ctx, userOf(request), request.params.id, 'edit');
    // The links are handed on to the students: the configured public address only, never the request's Host.
    const csv = await directViewerCsv(ctx, row, actor, await requirePublicUrl(ctx), request.query.reset);
    const file = `${row.name.replace(/[^\p{L}\p{N}._-]+/gu, '_')}-direct-viewers.csv`;
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${file.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file)}`)
      .header('cache-control', 'no-store')
      .send(csv);
  });

  r.get('/deployment/co-owners/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZDeploymentCoOwners } } }, async (request) => {
    const { row } = await deploymentFor(ctx, userOf(request), request.params.id, 'read');
    return coOwnersOf(row);
  });

  r.put('/deployment/co-owners/:id', { preHandler: auth, schema: { params: ZId, body: ZDeploymentCoOwnersUpdate, response: { 200: ZDeploymentCoOwners } } }, async (request) => {
    const { row } = await deploymentFor(ctx, userOf(request), request.params.id, 'changeOwners');
    return coOwnersOf(await setCoOwners(ctx, events, row, userOf(request), request.body.co_owners));
  });

  r.get('/deployment/permissions/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZDeploymentPermissions } } }, async (request) => {
    const { row } = await deploymentFor(ctx, userOf(request), request.params.id, 'read');
    return row.userPermissions;
  });

  async function coOwnersOf(row: { userId: string; coOwners: string[] }) {
    const names = await allowedNames(ctx.db, { roles: false, categories: false, groups: false, users: [row.userId, ...row.coOwners] });
    const list = names.users || [];
    return { owner: list[0]!, co_owners: list.slice(1) };
  }
  // The console's deployment calls publish through the same events (admin/content).
  return events;
}
