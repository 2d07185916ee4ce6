import { randomUUID } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { z } from 'zod';
import type { ZNewTemplate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { assertRoomForTemplate, diskFilePresent, diskHostOfAll } from '../pools';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { assertChoosable, chooserOf } from '../access/permissions';
import type { HostVolume } from '../../engine/host-disks';
import type { DiskInfo } from '../../engine/storage';
import type { JobHandler, JobRow } from '../../jobs/runner';
import { badRequest, precondition } from '../../http/errors';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { disksOf } from '../desktops/machine-spec';
import { findDomain, type DomainRow } from '../shared/domains';
import { desktopViews } from '../shared/desktop-view';
import { assertEditable, notStopped } from '../domains/edit';
import { assertNameFree } from '../domains/names';
import { checkNewItemQuota } from '../storage/new-item-quota';
import { publishTemplate } from './view';

export const TEMPLATE_JOB = 'template_create';
/** The desktop's state while its disk becomes a template (the web shows it as work in progress). */
export const CREATING_TEMPLATE = 'CreatingTemplate';

/**
 * Everything the job needs, decided before it starts, so that a failure can be undone. `host`: the
 * desktop's disk lives in that host's own pool (`from` is its path there): the template's disk is a
 * copy of it here, the disk there stays as the host's copy of the template's base, and the desktop's
 * new overlay is made here (`overlay`, for a moment) and goes there.
 */
type DiskStep = {
  storageId: string;
  position: number;
  from: string;
  to: string;
  overlayId: string;
  overlay: string;
  parentPath: string | null;
  parentFormat?: string;
  host?: string | null;
};
type Plan = { desktopId: string; templateId: string; templateOwnerId: string; disks: DiskStep[] };
/** Where a desktop's new overlay goes on its host: beside its former disk there (the same pool). */
const overlayThere = (d: DiskStep) => join(dirname(d.from), basename(d.overlay));

/**
 * POST /template/: a template from a stopped desktop. The record appears at once (status
 * Creating); the disks are handled by a persisted job (reference §4.3).
 */
export async function startTemplateCreation(
  ctx: AppContext,
  lifecycle: DesktopLifecycle,
  user: UserRow,
  desktop: DomainRow,
  body: z.infer<typeof ZNewTemplate>,
): Promise<{ id: string }> {
  const { db } = ctx;
  await assertEditable(ctx, desktop, 'make a template of');
  if (!desktop.persistent) throw badRequest('bad_request', 'A temporary desktop cannot become a template');
  await assertChoosable(db, [chooserOf(user)], body.allowed);
  await checkNewItemQuota(db, user, 'templates');
  await assertNameFree(db, user.id, 'template', body.name);
  const disks = await disksOf(db, desktop.id);
  if (disks.length === 0) throw badRequest('domain_has_no_disk', 'The desktop has no disk');
  const host = diskHostOfAll(disks, 'making a template of it');
  const present = await Promise.all(disks.map((d) => diskFilePresent(ctx, d)));
  if (disks.some((d, i) => d.status !== 'ready' || !present[i])) throw precondition('desktop_storage_not_ready', 'The desktop disk is not ready');
  await assertRoomForTemplate(ctx, host, disks);

  const templateId = randomUUID();
  const parents = await db.select().from(schema.storage).where(inArray(schema.storage.id, disks.map((d) => d.parentId ?? '')));
  const plan: Plan = {
    desktopId: desktop.id,
    templateId,
    templateOwnerId: user.id,
    disks: disks.map((d, position) => {
      const overlayId = randomUUID();
      const parent = parents.find((p) => p.id === d.parentId);
      return {
        host,
        parentFormat: parent?.format,
        storageId: d.id,
        position,
        from: d.path,
        to: ctx.engine.disks.pathFor('template', d.id),
        overlayId,
        overlay: ctx.engine.disks.pathFor('desktop', overlayId),
        parentPath: parent?.path ?? null,
      };
    }),
  };

  // Claimed atomically: a start (or a second template) between the checks and here loses.
  const [claimed] = await db
    .update(schema.domains)
    .set({ status: CREATING_TEMPLATE })
    .where(and(eq(schema.domains.id, desktop.id), eq(schema.domains.status, 'Stopped')))
    .returning();
  if (!claimed) throw notStopped(desktop, 'make a template of');
  try {
    const [template] = await db
      .insert(schema.domains)
      .values({
        id: templateId,
        kind: 'template',
        name: body.name,
        description: body.description,
        userId: user.id,
        categoryId: user.categoryId,
        groupId: user.groupId,
        status: 'Creating',
        persistent: false,
        templateId: desktop.templateId,
        hardware: desktop.hardware,
        guestProperties: desktop.guestProperties,
        image: desktop.image,
        icon: desktop.icon,
        allowed: body.allowed,
        enabled: body.enabled,
      })
      .returning();
    await lifecycle.publish(claimed);
    await publishTemplate(ctx, template!, 'template_add', 0);
    await ctx.jobs.enqueue(TEMPLATE_JOB, { userId: user.id, targetId: templateId, params: plan });
  } catch (err) {
    await db.delete(schema.domains).where(eq(schema.domains.id, templateId));
    const [back] = await db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, desktop.id)).returning();
    if (back) await lifecycle.publish(back);
    throw err;
  }
  return { id: templateId };
}

/**
 * The disks, exactly as the original engine does it (reference §4.3): the desktop's qcow2 is
 * moved into the templates folder and made read-only — it IS the template now, with the
 * desktop's earlier parents behind it — and the desktop continues on a new, empty overlay
 * backed by it. Both chains are verified (the engine's `info`) before the records switch.
 */
export function templateJobHandler(ctx: AppContext, lifecycle: DesktopLifecycle): JobHandler {
  const { db, bus } = ctx;
  const store = ctx.engine.disks;

  async function publishProgress(job: JobRow) {
    const plan = job.params as Plan;
    const template = await findDomain(db, plan.templateId);
    if (template) await publishTemplate(ctx, template, 'template_update', job.progress);
    const desktop = await findDomain(db, plan.desktopId);
    if (desktop) {
      const [view] = await desktopViews(ctx, [desktop]);
      if (view) bus.toUser(desktop.userId, 'desktop_update', { ...view, progress: { percentage: job.progress, throughput_average: '', time_left: '', size: '' } });
    }
  }

  /** Whether the records already point at the new overlays (the job's last step happened). */
  async function committed(plan: Plan) {
    const links = await db
      .select()
      .from(schema.domainDisks)
      .where(and(eq(schema.domainDisks.domainId, plan.desktopId), inArray(schema.domainDisks.storageId, plan.disks.map((d) => d.overlayId))));
    return links.length === plan.disks.length;
  }

  /** Puts the files back where they were; idempotent, also after a restart. */
  async function undoFiles(plan: Plan) {
    for (const d of plan.disks) {
      await store.remove(d.overlay).catch(() => undefined);
      if (d.host) {
        // The disk on the host was only read: the copy here and the new overlay there go.
        const made = await ctx.engine.hostDisks.at(d.host, overlayThere(d));
        if (made) await ctx.engine.hostDisks.remove(d.host, made.path);
        await store.setReadOnly(d.to, false).catch(() => undefined);
        await store.remove(d.to);
        continue;
      }
      if ((await store.exists(d.to)) && !(await store.exists(d.from))) {
        await store.setReadOnly(d.to, false);
        await store.move(d.to, d.from);
      }
    }
  }

  return {
    kind: TEMPLATE_JOB,
    resumable: false,
    async run({ job, progress, signal }) {
      const plan = job.params as Plan;
      await progress(5, { step: 'moving' });
      for (const d of plan.disks) {
        if (d.host) {
          // Copied here through libvirt, pointed at its base's path here (the same base as on the host).
          const base = d.parentPath ? { path: d.parentPath, format: d.parentFormat ?? 'qcow2' } : null;
          if (!(await store.exists(d.to))) await ctx.engine.hostDisks.download(d.host, d.from, d.to, base);
        } else if (!(await store.exists(d.to))) {
          if (!(await store.exists(d.from))) throw new Error(`the desktop disk ${d.from} is missing`);
          await store.move(d.from, d.to); // the file moves, nothing is copied
        }
        await store.setReadOnly(d.to, true); // a template base is never written again
      }
      signal.throwIfAborted();
      await progress(35, { step: 'overlay' });
      /** The new overlays on a host: their volumes there. */
      const onHost = new Map<string, HostVolume>();
      for (const d of plan.disks) {
        if (!d.host) {
          if (!(await store.exists(d.overlay))) await store.createOverlay(d.to, d.overlay);
          continue;
        }
        // Made here on the template's disk, sent pointed at the host's copy of it (the desktop's former disk).
        // In the pool of the desktop's former disk there (the host's own, or its category's).
        let vol: HostVolume | null = await ctx.engine.hostDisks.at(d.host, overlayThere(d));
        if (!vol) {
          const former = await ctx.engine.hostDisks.at(d.host, d.from);
          if (!former) throw new Error(`the desktop disk ${d.from} is not on its hypervisor`);
          if (!(await store.exists(d.overlay))) await store.createOverlay(d.to, d.overlay);
          vol = await ctx.engine.hostDisks.upload(d.host, former.pool, basename(d.overlay), d.overlay, { path: d.from, format: 'qcow2' });
        }
        await store.remove(d.overlay);
        onHost.set(d.storageId, vol);
      }
      signal.throwIfAborted();
      await progress(65, { step: 'verifying' });
      const infos = new Map<string, DiskInfo>();
      for (const d of plan.disks) {
        const vol = onHost.get(d.storageId);
        if (vol) {
          const template = await store.info(d.to);
          if ((template.backingFile ?? null) !== (d.parentPath ? resolve(d.parentPath) : null)) throw new Error(`the template disk ${d.storageId} lost its own base`);
          infos.set(d.storageId, { ...template, actualSize: vol.allocation });
          infos.set(`${d.storageId}:template`, template);
          continue;
        }
        const chain = (await store.info(d.overlay, { chain: true })).chain ?? [];
        if (chain[1]?.path !== resolve(d.to)) throw new Error(`the new overlay of ${d.storageId} is not backed by the template disk`);
        if ((chain[1]?.backingFile ?? null) !== (d.parentPath ? resolve(d.parentPath) : null)) {
          throw new Error(`the template disk ${d.storageId} lost its own base`);
        }
        infos.set(d.storageId, chain[0]!);
        infos.set(`${d.storageId}:template`, chain[1]!);
      }
      await progress(90, { step: 'saving' });
      await db.transaction(async (tx) => {
        for (const d of plan.disks) {
          const base = infos.get(`${d.storageId}:template`)!;
          const overlay = infos.get(d.storageId)!;
          await tx
            .update(schema.storage)
            .set({ kind: 'template', path: d.to, userId: plan.templateOwnerId, actualSize: base.actualSize, virtualSize: base.virtualSize, hypervisorId: null })
            .where(eq(schema.storage.id, d.storageId));
          // The desktop's former disk on its host stays there as the host's copy of the template's base.
          if (d.host) await tx.insert(schema.hostBaseCopies).values({ storageId: d.storageId, hypervisorId: d.host, path: d.from, bytes: base.actualSize });
          const [desktop] = await tx.select({ userId: schema.domains.userId }).from(schema.domains).where(eq(schema.domains.id, plan.desktopId));
          await tx.insert(schema.storage).values({
            id: d.overlayId,
            userId: desktop!.userId,
            kind: 'desktop',
            path: onHost.get(d.storageId)?.path ?? d.overlay,
            hypervisorId: d.host ?? null,
            parentId: d.storageId,
            actualSize: overlay.actualSize,
            virtualSize: overlay.virtualSize,
          });
          await tx
            .delete(schema.domainDisks)
            .where(and(eq(schema.domainDisks.domainId, plan.desktopId), eq(schema.domainDisks.storageId, d.storageId)));
          await tx.insert(schema.domainDisks).values({ domainId: plan.desktopId, storageId: d.overlayId, position: d.position });
          await tx.insert(schema.domainDisks).values({ domainId: plan.templateId, storageId: d.storageId, position: d.position });
        }
        await tx.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, plan.templateId));
        // The desktop now runs on the template's disk: it is that template's desktop.
        await tx.update(schema.domains).set({ status: 'Stopped', templateId: plan.templateId }).where(eq(schema.domains.id, plan.desktopId));
      });
    },
    progressed(job) {
      void publishProgress(job).catch((err) => ctx.log.warn({ err }, 'template progress not published'));
    },
    async finished(job, outcome) {
      const plan = job.params as Plan;
      if (outcome !== 'done' && !(await committed(plan))) {
        await undoFiles(plan).catch((err) => ctx.log.error({ err, job: job.id }, 'could not put the desktop disk back'));
        const template = await findDomain(db, plan.templateId);
        if (template) {
          await db.delete(schema.domains).where(eq(schema.domains.id, plan.templateId));
          bus.toUser(template.userId, 'template_delete', { id: template.id });
          bus.toUser(job.userId, 'msg', { type: 'danger', msg_code: 'template_creation_failed', params: { name: template.name } });
        }
        const [desktop] = await db
          .update(schema.domains)
          .set({ status: 'Stopped' })
          .where(and(eq(schema.domains.id, plan.desktopId), eq(schema.domains.status, CREATING_TEMPLATE)))
          .returning();
        if (desktop) await lifecycle.publish(desktop);
        return;
      }
      // Done (or failed after the switch, which is done as well).
      await db.update(schema.domains).set({ status: 'Stopped' }).where(and(eq(schema.domains.id, plan.templateId), eq(schema.domains.status, 'Creating')));
      const template = await findDomain(db, plan.templateId);
      if (template) await publishTemplate(ctx, template, 'template_update');
      const [desktop] = await db
        .update(schema.domains)
        .set({ status: 'Stopped' })
        .where(and(eq(schema.domains.id, plan.desktopId), eq(schema.domains.status, CREATING_TEMPLATE)))
        .returning();
      const current = desktop ?? (await findDomain(db, plan.desktopId));
      if (current) await lifecycle.publish(current);
    },
  };
}
