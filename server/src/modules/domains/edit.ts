import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { z } from 'zod';
import { videosFor, type ZDomainUpdate, type ZVgpusChoice } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { removeDiskFile } from '../pools';
import { schema } from '../../db';
import type { DomainImage } from '../../db/schema';
import type { DiskSizes } from '../../engine/storage';
import { materializeDisk } from '../desktops/create';
import { badRequest, conflict } from '../../http/errors';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { disksOf } from '../desktops/machine-spec';
import { ownerOf, type DomainRow } from '../shared/domains';
import { publishTemplate } from '../templates/view';
import { findProfile } from '../reservables/profiles';
import { dropItemBookings } from '../bookings/service';
import { assertGpuOnlyViewers, assertGuestNetworkChoice, chooseGuest } from './guest';
import { chooseHardware, hardwareBounds, type HardwareRow } from './hardware';
import { removeUserImage, saveUserImage, stockImage } from './images';
import { assertNameFree } from './names';

type StorageRow = typeof schema.storage.$inferSelect;

export const notStopped = (row: DomainRow, action: string) =>
  conflict('domain_not_stopped', `Stop the desktop before you ${action} it`, { status: row.status, action });

/** Edit, recreate and make-template need the desktop stopped; servers cannot be edited (spec core §4). */
export async function assertEditable(ctx: AppContext, row: DomainRow, action = 'edit') {
  if (row.server) throw conflict('desktop_is_server', 'Servers cannot be edited or made into templates');
  if (row.status !== 'Stopped') throw notStopped(row, action);
  if (await ctx.jobs.activeFor(row.id)) throw conflict('template_busy', 'Work on it is still running');
}

export async function publishDomain(ctx: AppContext, lifecycle: DesktopLifecycle, row: DomainRow) {
  if (row.kind === 'desktop') await lifecycle.publish(row);
  else await publishTemplate(ctx, row);
}

/** PUT /domain/{id}: name, description, hardware, viewers, credentials and cover of a stopped desktop or template. */
export async function updateDomain(ctx: AppContext, lifecycle: DesktopLifecycle, row: DomainRow, body: z.infer<typeof ZDomainUpdate>) {
  const { db } = ctx;
  await assertEditable(ctx, row);
  const owner = await ownerOf(db, row);
  if (body.name !== undefined && body.name !== row.name) await assertNameFree(db, owner.id, row.kind, body.name, row.id);
  const { quota } = await hardwareBounds(db, owner);
  const guest = chooseGuest(
    { guest: row.guestProperties, interfaces: row.hardware.interfaces.map((i) => i.id) },
    { guest: body.guest_properties, interfaces: body.hardware?.interfaces },
  );
  const hardware = chooseHardware(row.hardware as HardwareRow, body.hardware, guest.interfaces, quota, 'domain_edit');
  assertGpuOnlyViewers(hardware.videos, guest.guest);
  assertGuestNetworkChoice(ctx.engine.network, row.hardware.interfaces.map((i) => i.id), guest.interfaces);

  let image: DomainImage = row.image;
  if (body.image?.type === 'stock') image = stockImage(body.image.id);
  else if (body.image?.type === 'user') image = await saveUserImage(ctx.config.dataDir, row.id, body.image.file.data);

  // Written only if still stopped: a start between the checks and here wins.
  const [updated] = await db
    .update(schema.domains)
    .set({
      name: body.name ?? row.name,
      description: body.description ?? row.description,
      hardware,
      guestProperties: guest.guest,
      image,
    })
    .where(and(eq(schema.domains.id, row.id), eq(schema.domains.status, 'Stopped')))
    .returning();
  if (!updated) {
    if (image !== row.image) await removeUserImage(ctx.config.dataDir, image);
    throw notStopped(row, 'edit');
  }
  if (image.id !== row.image.id) await removeUserImage(ctx.config.dataDir, row.image);
  await publishDomain(ctx, lifecycle, updated);
  return updated;
}

/** PUT /domain/reservables/{id}: a GPU profile or none; changing it needs the desktop stopped. */
export async function setReservables(ctx: AppContext, lifecycle: DesktopLifecycle, row: DomainRow, wanted: z.infer<typeof ZVgpusChoice>) {
  for (const id of wanted ?? []) if (!(await findProfile(ctx.db, id))?.enabled) throw badRequest('reservable_not_found', `No GPU profile ${id}`, { id });
  const current = row.hardware.reservables.vgpus ?? null;
  if (JSON.stringify(current) === JSON.stringify(wanted)) return row;
  if (row.server) throw conflict('desktop_is_server', 'Servers cannot be edited');
  if (row.status !== 'Stopped') throw notStopped(row, 'change the GPU of');
  const hardware = { ...row.hardware, reservables: { vgpus: wanted } };
  hardware.videos = videosFor(wanted, hardware.videos);
  const [updated] = await ctx.db
    .update(schema.domains)
    .set({ hardware })
    .where(and(eq(schema.domains.id, row.id), eq(schema.domains.status, 'Stopped')))
    .returning();
  if (!updated) throw notStopped(row, 'change the GPU of');
  // Bookings were for the old profile (reference §6.2).
  await dropItemBookings(ctx, 'desktop', row.id);
  await publishDomain(ctx, lifecycle, updated);
  return updated;
}

/**
 * POST /domain/{id}/recreate_disk: the desktop starts over — a fresh overlay on its template's
 * disk (or a fresh empty disk of the same size when it has none); the old disk is removed.
 */
export async function recreateDisk(ctx: AppContext, lifecycle: DesktopLifecycle, row: DomainRow) {
  const { db } = ctx;
  if (row.kind !== 'desktop') throw badRequest('bad_request', 'Only desktops have their disk recreated');
  if (row.status !== 'Stopped') throw notStopped(row, 'recreate');
  if (await ctx.jobs.activeFor(row.id)) throw conflict('template_busy', 'Work on it is still running');
  const disks = await disksOf(db, row.id);
  if (disks.length === 0) throw badRequest('domain_has_no_disk', 'The desktop has no disk');
  for (const d of disks) {
    const children = await db.select({ id: schema.storage.id }).from(schema.storage).where(eq(schema.storage.parentId, d.id)).limit(1);
    if (children.length > 0 || d.kind === 'template') throw conflict('storage_has_derivatives', 'Other disks are built on this one');
  }
  const [claimed] = await db
    .update(schema.domains)
    .set({ status: 'Updating' })
    .where(and(eq(schema.domains.id, row.id), eq(schema.domains.status, 'Stopped')))
    .returning();
  if (!claimed) throw notStopped(row, 'recreate');
  await lifecycle.publish(claimed);

  // Crash-consistent: the new disks are recorded ("creating", at their planned paths) before their
  // files exist; a kill in between leaves records the startup sweep clears, never a stray file.
  const made: { old: (typeof disks)[number]; row: StorageRow; info?: DiskSizes }[] = [];
  try {
    for (const old of disks) {
      const id = randomUUID();
      const [row] = await db
        .insert(schema.storage)
        .values({
          id, userId: old.userId, kind: old.kind, path: ctx.engine.disks.pathFor('desktop', id), parentId: old.parentId,
          status: 'creating', virtualSize: old.virtualSize,
        })
        .returning();
      made.push({ old, row: row! });
    }
    for (const m of made) m.info = await materializeDisk(db, ctx.engine.disks, m.row);
    await db.transaction(async (tx) => {
      for (const [position, m] of made.entries()) {
        await tx
          .update(schema.storage)
          .set({ status: 'ready', actualSize: m.info!.actualSize, virtualSize: m.info!.virtualSize })
          .where(eq(schema.storage.id, m.row.id));
        await tx.delete(schema.domainDisks).where(and(eq(schema.domainDisks.domainId, row.id), eq(schema.domainDisks.storageId, m.old.id)));
        await tx.insert(schema.domainDisks).values({ domainId: row.id, storageId: m.row.id, position });
        await tx.delete(schema.storage).where(eq(schema.storage.id, m.old.id));
      }
    });
  } catch (err) {
    for (const m of made) {
      await ctx.engine.disks.remove(m.row.path).catch(() => undefined);
      await db.delete(schema.storage).where(eq(schema.storage.id, m.row.id)).catch(() => undefined);
    }
    const [back] = await db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, row.id)).returning();
    if (back) await lifecycle.publish(back);
    throw err;
  }
  // (A recreated disk is made in the storage folder again: the old one goes from where it lived.)
  for (const m of made) await removeDiskFile(ctx, m.old).catch((err) => ctx.log.warn({ err, path: m.old.path }, 'could not remove the old disk'));
  const [done] = await db.update(schema.domains).set({ status: 'Stopped', currentAction: null }).where(eq(schema.domains.id, row.id)).returning();
  if (done) await lifecycle.publish(done);
  return { id: row.id };
}
