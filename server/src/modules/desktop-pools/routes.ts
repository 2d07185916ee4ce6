import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { z } from 'zod';
import { ZPool, ZPoolCreate, ZPoolTake, ZPoolTakeAnswer, ZPoolUpdate, ZUserPool, type TPool, type TUserPool } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth } from '../../http/guard';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors';
import { actorOf, quotaLevels } from '../../auth/caller';
import type { UserRow } from '../../auth/sessions';
import { audit, auditActorOf } from '../../audit/record';
import { assertChoosable, canManage, chooserOf, isAllowed } from '../access/permissions';
import { DEPLOYMENT_ROLES } from '../deployments/roles';
import { findDomain } from '../shared/domains';
import { viewersOf } from '../shared/desktop-view';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { createDesktopPools, heldDesktop, poolCounts, poolStalled, takeContext, type DesktopPools, type PoolRow } from './service';
import { usablePools } from './usable';
import { openViewer } from '../viewers/open';
import { roomForDesktops } from '../placement';
import { dropItemBookings } from '../bookings/service';

const p = schema.desktopPools;
const ZId = z.object({ id: z.string().min(1).max(64) });

/**
 * How many desktops of the template a pool may hold: within the owner's group and organisation limits (running
 * desktops, memory, vCPUs) and within what the online hypervisors hold more (their free memory and vCPUs left; plus
 * what the pool runs already).
 */
async function capacity(ctx: AppContext, owner: UserRow, need: { memoryMb: number; vcpus: number }, running: number) {
  const fits: number[] = [];
  const { group, category } = await quotaLevels(ctx.db, owner);
  for (const limits of [group?.limits, category?.limits]) {
    if (!limits) continue;
    fits.push(Math.floor(limits.running), Math.floor(limits.memory / (need.memoryMb / 1024)), Math.floor(limits.vcpus / need.vcpus));
  }
  fits.push((await roomForDesktops(ctx, need)) + running);
  return Math.max(0, Math.min(...fits));
}

/** Desktop pools (issue 30): teachers (advanced), managers and admins make them; the people they are shared with take desktops from them. */
export async function desktopPoolRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle): Promise<DesktopPools> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const staff = requireAuth(ctx, { roles: DEPLOYMENT_ROLES });
  const auth = requireAuth(ctx);
  const pools = createDesktopPools(ctx, lifecycle);
  app.addHook('onClose', async () => pools.close());

  const view = async (pool: PoolRow): Promise<TPool> => {
    const [template, [owner]] = await Promise.all([findDomain(ctx.db, pool.templateId), ctx.db.select().from(schema.users).where(eq(schema.users.id, pool.userId))]);
    return {
      id: pool.id,
      name: pool.name,
      description: pool.description,
      template_id: pool.templateId,
      template_name: template?.name ?? '',
      allowed: pool.allowed,
      max_desktops: pool.maxDesktops,
      prepared: pool.prepared,
      schedule: pool.schedule,
      persistent: pool.persistent,
      give_back: pool.giveBack,
      permissions: pool.permissions,
      enabled: pool.enabled,
      category: pool.categoryId,
      owner: pool.userId,
      owner_name: owner?.name ?? '',
      stalled: (await poolStalled(ctx, pool)) ?? (pools.shortOfRoom(pool.id) ? 'no_room' : null),
      needs_booking: (template?.hardware.reservables.vgpus ?? []).length > 0,
      counts: await poolCounts(ctx, pool),
    };
  };

  /** A pool the caller manages (its owner, a manager of its organisation, an admin), else 404. */
  const managed = async (request: Parameters<typeof authOf>[0], id: string) => {
    const [pool] = await ctx.db.select().from(p).where(eq(p.id, id));
    if (!pool || !canManage(await actorOf(ctx.db, authOf(request).user), pool)) throw notFound('desktop_pool_not_found', 'Desktop pool not found');
    return pool;
  };

  /**
   * The template must be one the owner may use, enabled; an enabled pool's size must fit the limits and the hosts
   * (a disabled one holds nothing: checked when it is enabled).
   */
  const checkPool = async (owner: UserRow, templateId: string, maxDesktops: number, running: number, enabled: boolean) => {
    const template = await findDomain(ctx.db, templateId);
    if (!template || template.kind !== 'template' || !template.enabled || !isAllowed(await actorOf(ctx.db, owner), template)) {
      throw notFound('template_not_found', 'Template not found');
    }
    if (!enabled) return;
    const fits = await capacity(ctx, owner, { memoryMb: template.hardware.memoryMb, vcpus: template.hardware.vcpus }, running);
    if (maxDesktops > fits) throw conflict('desktop_pool_too_large', `The limits and the hypervisors hold ${fits} desktops of this template`, { max_desktops: maxDesktops, fits });
  };

  r.get('/desktop-pools', { preHandler: staff, schema: { response: { 200: z.array(ZPool) } } }, async (request) => {
    const actor = await actorOf(ctx.db, authOf(request).user);
    const rows = (await ctx.db.select().from(p).orderBy(asc(p.name))).filter((x) => canManage(actor, x));
    return Promise.all(rows.map(view));
  });

  r.get('/desktop-pools/:id', { preHandler: staff, schema: { params: ZId, response: { 200: ZPool } } }, async (request) => view(await managed(request, request.params.id)));

  r.post('/desktop-pools', { preHandler: staff, schema: { body: ZPoolCreate, response: { 200: ZPool } } }, async (request) => {
    const { user } = authOf(request);
    const b = request.body;
    await checkPool(user, b.template_id, b.max_desktops, 0, b.enabled);
    await assertChoosable(ctx.db, [chooserOf(user)], b.allowed);
    const id = randomUUID();
    await ctx.db.transaction(async (tx) => {
      await tx.insert(p).values({
        id, name: b.name, description: b.description, userId: user.id, categoryId: user.categoryId, templateId: b.template_id, allowed: b.allowed,
        maxDesktops: b.max_desktops, prepared: b.prepared, schedule: b.schedule, persistent: b.persistent, giveBack: b.give_back, permissions: b.permissions, enabled: b.enabled,
      });
      await audit(tx, auditActorOf(request), { action: 'desktop_pool.create', objectType: 'desktop_pool', objectId: id, objectName: b.name, categoryId: user.categoryId });
    });
    pools.changed(id);
    void pools.kick(id);
    const [row] = await ctx.db.select().from(p).where(eq(p.id, id));
    return view(row!);
  });

  r.put('/desktop-pools/:id', { preHandler: staff, schema: { params: ZId, body: ZPoolUpdate, response: { 200: ZPool } } }, async (request) => {
    const pool = await managed(request, request.params.id);
    const b = request.body;
    const [owner] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, pool.userId));
    if (b.allowed) await assertChoosable(ctx.db, [chooserOf(owner!), chooserOf(authOf(request).user)], b.allowed);
    const prepared = b.prepared ?? pool.prepared;
    const max = b.max_desktops ?? pool.maxDesktops;
    if (prepared > max) throw badRequest('validation_error', 'No more prepared than the pool may hold', { prepared, max_desktops: max });
    if (b.persistent !== undefined && b.persistent !== pool.persistent && (await ctx.db.$count(schema.domains, eq(schema.domains.poolId, pool.id))) > 0) {
      throw conflict('desktop_pool_has_desktops', 'A pool with desktops keeps its kind: empty it first');
    }
    if (b.template_id !== undefined || b.max_desktops !== undefined || (b.enabled === true && !pool.enabled)) {
      const running = await ctx.db.$count(schema.domains, eq(schema.domains.poolId, pool.id));
      await checkPool(owner!, b.template_id ?? pool.templateId, max, running, b.enabled ?? pool.enabled);
    }
    await ctx.db.transaction(async (tx) => {
      await tx.update(p).set({
        ...(b.name !== undefined && { name: b.name }), ...(b.description !== undefined && { description: b.description }),
        ...(b.template_id !== undefined && { templateId: b.template_id }), ...(b.allowed !== undefined && { allowed: b.allowed }),
        ...(b.max_desktops !== undefined && { maxDesktops: b.max_desktops }), ...(b.prepared !== undefined && { prepared: b.prepared }),
        ...(b.schedule !== undefined && { schedule: b.schedule }), ...(b.persistent !== undefined && { persistent: b.persistent }),
        ...(b.give_back !== undefined && { giveBack: b.give_back }), ...(b.permissions !== undefined && { permissions: b.permissions }),
        ...(b.enabled !== undefined && { enabled: b.enabled }),
      }).where(eq(p.id, pool.id));
      await audit(tx, auditActorOf(request), { action: 'desktop_pool.update', objectType: 'desktop_pool', objectId: pool.id, objectName: b.name ?? pool.name, categoryId: pool.categoryId, detail: { fields: Object.keys(b) } });
    });
    // Told to those who may see it now and to those who could before (a pool no longer shared with them leaves their list).
    pools.changed(pool.id, pool);
    void pools.kick(pool.id);
    const [row] = await ctx.db.select().from(p).where(eq(p.id, pool.id));
    return view(row!);
  });

  // Its desktops not given to anybody go for good; given ones stay with their people (they leave the pool).
  r.delete('/desktop-pools/:id', { preHandler: staff, schema: { params: ZId } }, async (request) => {
    const pool = await managed(request, request.params.id);
    await dropItemBookings(ctx, 'pool', pool.id);
    // The pool first (a pass that starts now finds nothing to do), then what a pass under way made is waited for:
    // its desktops not given go (another process's are found by every process's sweep), given ones stay their people's.
    await ctx.db.transaction(async (tx) => {
      await tx.delete(p).where(eq(p.id, pool.id));
      await audit(tx, auditActorOf(request), { action: 'desktop_pool.delete', objectType: 'desktop_pool', objectId: pool.id, objectName: pool.name, categoryId: pool.categoryId });
    });
    pools.changed(pool.id, pool);
    await pools.settle(pool.id);
    for (const row of await ctx.db.select().from(schema.domains).where(eq(schema.domains.poolId, pool.id))) {
      if (row.poolAssignedAt === null) await lifecycle.destroyDesktop(row);
      else await ctx.db.update(schema.domains).set({ poolId: null, poolAssignedAt: null }).where(eq(schema.domains.id, row.id));
    }
    return {};
  });

  /** The pools a person may take a desktop from, as their desktops screen shows them. */
  r.get('/user/desktop-pools', { preHandler: auth, schema: { response: { 200: z.array(ZUserPool) } } }, async (request) => {
    const { user } = authOf(request);
    const out: TUserPool[] = [];
    for (const { pool, template, viewers } of await usablePools(ctx, user)) {
      const mine = await heldDesktop(ctx, pool.id, user.id);
      const counts = await poolCounts(ctx, pool);
      const waiting = await pools.placeOf(pool, user.id);
      const total = counts.prepared + counts.preparing + counts.in_use + counts.kept;
      out.push({
        id: pool.id,
        name: pool.name,
        description: pool.description,
        template_name: template.name,
        persistent: pool.persistent,
        state: mine ? 'mine' : counts.prepared > 0 ? 'ready' : total >= pool.maxDesktops && counts.preparing === 0 ? 'full' : 'preparing',
        prepared: counts.prepared,
        desktop_id: mine?.id ?? null,
        place: waiting?.place ?? null,
        wait_seconds: waiting?.wait_seconds ?? null,
        viewers,
      });
    }
    return out;
  });

  r.post('/desktop-pools/:id/take', { preHandler: auth, schema: { params: ZId, body: ZPoolTake.optional(), response: { 200: ZPoolTakeAnswer } } }, async (request) => {
    const { user } = authOf(request);
    // (a class clicks at once: the pool, its template and the desktop the person holds of it are one prepared statement;
    // the held one is unused when the pool is not theirs)
    const [{ pool, template, held }, actor] = await Promise.all([takeContext(ctx, request.params.id, user.id), actorOf(ctx.db, user)]);
    if (!pool || !isAllowed(actor, pool)) throw notFound('desktop_pool_not_found', 'Desktop pool not found');
    const stalled = await poolStalled(ctx, pool, { template });
    if (stalled) throw conflict('desktop_pool_unavailable', 'The pool gives no desktops now', { reason: stalled });
    const taken = await pools.take(pool, user, { held });
    if (taken.kind === 'queued') return taken;
    // The page opens the browser viewer at once: its ticket comes with the desktop (a class clicking at once makes one
    // request each, not two). One that cannot open now is left out: the page asks for it and hears why.
    const asked = request.body?.viewer;
    const viewer = asked
      ? await openViewer(ctx, request, taken.row, asked, { poolViewers: pool.permissions.viewers, accessedNow: taken.given }).catch((err: unknown) => {
          if (!(err instanceof ApiError)) request.log.warn({ err, desktop: taken.row.id }, 'a taken desktop\'s viewer was not opened with it');
          return undefined;
        })
      : undefined;
    return { kind: 'desktop' as const, desktop_id: taken.row.id, ...(viewer?.kind === 'browser' && { viewer }) };
  });

  return pools;
}
