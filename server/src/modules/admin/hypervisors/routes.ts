import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import {
  LOCAL_HYPERVISOR,
  normaliseHypervisorUri,
  ZAdminHypervisor,
  ZAdminHypervisorAdd,
  ZAdminHypervisorDrain,
  ZAdminHypervisorDrained,
  ZAdminHypervisorHostKey,
  ZAdminHypervisorList,
  ZAdminHypervisorMarkedDown,
  ZAdminHypervisorSshKey,
  ZAdminHypervisorTlsBundle,
  ZAdminHypervisorTlsRequest,
  ZAdminHypervisorUpdate,
  ZPreferredHypervisors,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { requireAuth } from '../../../http/guard';
import { ApiError, badRequest, conflict, notFound, precondition } from '../../../http/errors';
import { HostError } from '../../../engine/hosts';
import { issueHostCertificate } from '../../../host/libvirt-pki';
import { desktopsOn } from '../../placement';
import { auditActorOf, audit } from '../../../audit/record';
import { adminSocketCount, notifyAdmins } from '../../../socket/admins';
import { acceptsStarts } from '../../shared/hypervisor-state';
import { hypervisorViews } from './view';
import type { DesktopLifecycle } from '../../desktops/lifecycle';

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
/**
 * Server start: every stored remote hypervisor is connected in the background with the host key an
 * admin confirmed (never blocks the start: until it answers, and while it fails, it is offline with
 * the reason; desktops there are reconciled when it comes online).
 */
export async function resumeHypervisors(ctx: Pick<AppContext, 'db' | 'engine'>): Promise<void> {
  const rows = await ctx.db.select().from(schema.hypervisors);
  for (const h of rows) {
    if (h.uri && h.id !== LOCAL_HYPERVISOR) ctx.engine.hosts.resume?.(h.id, h.uri, { hostKeyFingerprint: h.hostKeyFingerprint ?? undefined });
  }
}

/**
 * The hosts every server process holds a connection to follow the ones stored: a host an admin adds
 * on one process is connected on the others too, and a removed one is let go everywhere. After a gap
 * in the notifications (no payload) the stored hosts are resumed (those held already are kept).
 */
export function followHypervisors(ctx: Pick<AppContext, 'db' | 'engine' | 'peers' | 'log'>): () => void {
  return ctx.peers.subscribe('hypervisors', async (payload) => {
    const removed = (payload as { removed?: unknown } | undefined)?.removed;
    if (typeof removed === 'string') await ctx.engine.hosts.disconnect(removed).catch((err) => ctx.log.warn({ err }, 'hypervisor connection not closed'));
    else await resumeHypervisors(ctx);
  });
}

export async function adminHypervisorRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: Pick<DesktopLifecycle, 'releaseHost'>) {
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

  r.get('/admin/hypervisors/ssh-key', { preHandler: adminOnly, schema: { response: { 200: ZAdminHypervisorSshKey } } }, async () => ({
    public_key: await ctx.engine.hosts.installationPublicKey(),
  }));

  /**
   * The certificates a `qemu+tls` host's libvirtd needs, issued now by the installation's CA for the
   * name or address its URI will use (the key is made here and handed to the admin once; never logged).
   */
  r.post(
    '/admin/hypervisors/tls-certificate',
    { preHandler: adminOnly, schema: { body: ZAdminHypervisorTlsRequest, response: { 200: ZAdminHypervisorTlsBundle } } },
    async (request) => {
      const host = request.body.host.toLowerCase();
      const uri = normaliseHypervisorUri(`qemu+tls://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/system`);
      if (!uri) throw badRequest('hypervisor_uri_invalid', 'Not a host name or address');
      const bundle = await issueHostCertificate(ctx.config.dataDir, new URL(uri).hostname);
      await audit(ctx.db, auditActorOf(request), { action: 'hypervisor.certificate', objectType: 'hypervisor', objectId: host, objectName: host, categoryId: null, detail: {} });
      return { host, ca_certificate: bundle.caCert, server_certificate: bundle.cert, server_key: bundle.key };
    },
  );

  /** A host's refusal as a catalogue code: the engine's words stay in the log (never the URI). */
  const hostRefusal = (request: FastifyRequest, err: unknown): ApiError => {
    if (err instanceof ApiError) return err;
    if (err instanceof HostError && err.code === 'host_key_changed') {
      return conflict('hypervisor_host_key_changed', 'The host presented another host key than the one confirmed');
    }
    request.log.warn({ reason: err instanceof HostError ? err.code : 'error' }, 'hypervisor not reached');
    return precondition('hypervisor_unreachable', 'The hypervisor could not be reached', { reason: err instanceof HostError ? err.code : 'unreachable' });
  };

  r.post(
    '/admin/hypervisors',
    { preHandler: adminOnly, schema: { body: ZAdminHypervisorAdd, response: { 200: ZAdminHypervisorHostKey, 201: ZAdminHypervisor } } },
    async (request, reply) => {
      const uri = normaliseHypervisorUri(request.body.uri);
      if (!uri) throw badRequest('hypervisor_uri_invalid', 'The address is not qemu+ssh://user@host/system or qemu+tls://host/system');
      const taken = async () => (await ctx.db.select({ id: schema.hypervisors.id }).from(schema.hypervisors).where(eq(schema.hypervisors.uri, uri))).length > 0;
      if (await taken()) throw conflict('hypervisor_exists', 'A hypervisor with this address is already added');
      const key = await ctx.engine.hosts.hostKey(uri).catch((err) => {
        throw hostRefusal(request, err);
      });
      // First call: the key to confirm. Nothing is stored or kept open.
      if (!request.body.host_key_fingerprint) return reply.code(200).send({ uri, algorithm: key.algorithm, fingerprint: key.fingerprint });
      if (request.body.host_key_fingerprint !== key.fingerprint) throw conflict('hypervisor_host_key_changed', 'The host presented another host key than the one confirmed');
      const id = randomUUID();
      await ctx.engine.hosts.connect(id, uri, { hostKeyFingerprint: key.fingerprint }).catch((err) => {
        throw hostRefusal(request, err);
      });
      try {
        const row = await ctx.db.transaction(async (tx) => {
          const [row] = await tx
            .insert(schema.hypervisors)
            .values({ id, name: request.body.name ?? new URL(uri).hostname, uri, hostKeyFingerprint: key.fingerprint })
            .onConflictDoNothing()
            .returning();
          if (!row) throw conflict('hypervisor_exists', 'A hypervisor with this address is already added');
          await audit(tx, auditActorOf(request), { action: 'hypervisor.add', objectType: 'hypervisor', objectId: row.id, objectName: row.name, categoryId: null, detail: {} });
          return row;
        });
        const [view] = await hypervisorViews(ctx, [row]);
        notifyAdmins(ctx, null, 'hypervisor_update', view!);
        // The other server processes connect to it too.
        await ctx.peers.publish('hypervisors', { added: row.id });
        return reply.code(201).send(view!);
      } catch (err) {
        // Nothing half-registered: the connection goes with the refused row.
        await ctx.engine.hosts.disconnect(id).catch(() => undefined);
        throw err;
      }
    },
  );

  r.put(
    '/admin/hypervisors/:id/drain',
    { preHandler: adminOnly, schema: { params, body: ZAdminHypervisorDrain, response: { 200: ZAdminHypervisorDrained } } },
    async (request) => {
      const row = await ctx.db.transaction(async (tx) => {
        const [before] = await tx.select().from(schema.hypervisors).where(eq(schema.hypervisors.id, request.params.id)).for('update');
        if (!before) throw notFound('not_found', 'Hypervisor not found');
        if (before.draining === request.body.draining) return before;
        const [after] = await tx.update(schema.hypervisors).set({ draining: request.body.draining, updatedAt: new Date() }).where(eq(schema.hypervisors.id, before.id)).returning();
        await audit(tx, auditActorOf(request), {
          action: request.body.draining ? 'hypervisor.drain' : 'hypervisor.undrain',
          objectType: 'hypervisor',
          objectId: after!.id,
          objectName: after!.name,
          categoryId: null,
          detail: { draining: after!.draining },
        });
        return after!;
      });
      const [view] = await hypervisorViews(ctx, [row]);
      notifyAdmins(ctx, null, 'hypervisor_update', view!);
      return { hypervisor: view!, running_desktop_ids: await desktopsOn(ctx.db, row.id) };
    },
  );

  /**
   * Marks an offline host down (the original's engine does it on its own after a while; here an admin,
   * or HYPERVISOR_DOWN_AFTER_SECONDS): the desktops that ran there, `Unknown` meanwhile, are stopped
   * (temporary ones deleted) so that their owners can start them on another host. A host that answers
   * is not marked down: its desktops are known (stop them, or drain it).
   */
  r.post('/admin/hypervisors/:id/down', { preHandler: adminOnly, schema: { params, response: { 200: ZAdminHypervisorMarkedDown } } }, async (request) => {
    const [row] = await ctx.db.select().from(schema.hypervisors).where(eq(schema.hypervisors.id, request.params.id));
    if (!row) throw notFound('not_found', 'Hypervisor not found');
    if (row.id === LOCAL_HYPERVISOR) throw badRequest('validation_error', "This server's own host is not marked down: its desktops are known while the server runs");
    if ((await ctx.engine.hosts.status(row.id))?.online) throw conflict('hypervisor_online', 'The hypervisor answers: its desktops are known, it cannot be marked down');
    const released = await lifecycle.releaseHost(row.id);
    await audit(ctx.db, auditActorOf(request), { action: 'hypervisor.down', objectType: 'hypervisor', objectId: row.id, objectName: row.name, categoryId: null, detail: { desktops: released.length } });
    const [view] = await hypervisorViews(ctx, [row]);
    notifyAdmins(ctx, null, 'hypervisor_update', view!);
    return { hypervisor: view!, released_desktop_ids: released };
  });

  r.delete('/admin/hypervisors/:id', { preHandler: adminOnly, schema: { params } }, async (request, reply) => {
    const removed = await ctx.db.transaction(async (tx) => {
      const [row] = await tx.select().from(schema.hypervisors).where(eq(schema.hypervisors.id, request.params.id)).for('update');
      if (!row) throw notFound('not_found', 'Hypervisor not found');
      if (row.id === LOCAL_HYPERVISOR) throw badRequest('validation_error', "This server's own host cannot be removed: disable it instead");
      const running = await desktopsOn(tx, row.id);
      if (running.length > 0) throw conflict('hypervisor_not_empty', 'Desktops still run on this hypervisor', { running: running.length });
      const cards = await tx.select({ id: schema.reservableItems.id }).from(schema.reservableItems).where(eq(schema.reservableItems.hypervisorId, row.id));
      if (cards.length > 0) throw conflict('hypervisor_has_gpus', 'GPU cards are in this hypervisor: move them to another one first', { gpus: cards.length });
      // Desktops whose disk lives in its own pool are bound to it (modules/pools): removing it would strand them.
      const [held] = await tx.select({ n: count() }).from(schema.storage).where(eq(schema.storage.hypervisorId, row.id));
      if (Number(held?.n ?? 0) > 0) throw conflict('hypervisor_holds_disks', 'Desktop disks live on this hypervisor', { disks: Number(held!.n) });
      // Its copies of template bases go with it (their records by the foreign key, their files below).
      const copies = await tx.select({ path: schema.hostBaseCopies.path }).from(schema.hostBaseCopies).where(eq(schema.hostBaseCopies.hypervisorId, row.id));
      await tx.delete(schema.hypervisors).where(eq(schema.hypervisors.id, row.id));
      await audit(tx, auditActorOf(request), { action: 'hypervisor.remove', objectType: 'hypervisor', objectId: row.id, objectName: row.name, categoryId: null, detail: { base_copies: copies.length } });
      return { ...row, copies };
    });
    // Deleted on the host while it is still connected; one that does not answer keeps them (logged).
    for (const c of removed.copies) {
      await ctx.engine.hostDisks.remove(removed.id, c.path).catch((err) => request.log.warn({ err }, 'template base copy not removed from the hypervisor'));
    }
    // Here and in the other server processes.
    await ctx.peers.publish('hypervisors', { removed: removed.id });
    return reply.code(204).send();
  });

  /**
   * Preferred hypervisors of a template or a deployment (the original's `forced_hyp` / `favourite_hyp`):
   * forced, its desktops start only there; favourite, there first. Every id must name a hypervisor.
   */
  const preferredParams = z.object({ kind: z.enum(['template', 'deployment']), id: z.string().min(1).max(64) });
  const preferredNotFound = (kind: 'template' | 'deployment') => notFound(kind === 'template' ? 'template_not_found' : 'deployment_not_found', `${kind} not found`);

  /** The current choice, for the edit forms. */
  r.get(
    '/admin/hypervisors/preferred/:kind/:id',
    { preHandler: adminOnly, schema: { params: preferredParams, response: { 200: ZPreferredHypervisors } } },
    async (request) => {
      const { kind, id } = request.params;
      const [row] =
        kind === 'template'
          ? await ctx.db.select({ p: schema.domains.preferredHypervisors }).from(schema.domains).where(and(eq(schema.domains.id, id), eq(schema.domains.kind, 'template')))
          : await ctx.db.select({ p: schema.deployments.preferredHypervisors }).from(schema.deployments).where(eq(schema.deployments.id, id));
      if (!row) throw preferredNotFound(kind);
      return { forced_hyp: row.p.forced, favourite_hyp: row.p.favourite };
    },
  );

  r.put(
    '/admin/hypervisors/preferred/:kind/:id',
    { preHandler: adminOnly, schema: { params: preferredParams, body: ZPreferredHypervisors, response: { 200: ZPreferredHypervisors } } },
    async (request) => {
      const { kind, id } = request.params;
      const wanted = { forced: [...new Set(request.body.forced_hyp)], favourite: [...new Set(request.body.favourite_hyp)] };
      const named = [...new Set([...wanted.forced, ...wanted.favourite])];
      const known = named.length === 0 ? [] : await ctx.db.select({ id: schema.hypervisors.id }).from(schema.hypervisors).where(inArray(schema.hypervisors.id, named));
      const unknown = named.filter((n) => !known.some((k) => k.id === n));
      if (unknown.length > 0) throw badRequest('validation_error', `No hypervisor has the id ${unknown.join(', ')}`, { unknown });
      const updated =
        kind === 'template'
          ? await ctx.db.update(schema.domains).set({ preferredHypervisors: wanted }).where(and(eq(schema.domains.id, id), eq(schema.domains.kind, 'template'))).returning({ id: schema.domains.id })
          : await ctx.db.update(schema.deployments).set({ preferredHypervisors: wanted }).where(eq(schema.deployments.id, id)).returning({ id: schema.deployments.id });
      if (updated.length === 0) throw preferredNotFound(kind);
      await audit(ctx.db, auditActorOf(request), { action: 'hypervisor.preferred', objectType: kind, objectId: id, objectName: id, categoryId: null, detail: wanted });
      return { forced_hyp: wanted.forced, favourite_hyp: wanted.favourite };
    },
  );
}
