import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { ZNewDesktop } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { UserRow } from '../../auth/sessions';
import { badRequest, forbidden, notFound, precondition } from '../../http/errors';
import { actorOf, isAllowed } from '../access/permissions';
import { createDesktopFromTemplate, freshInterfaces } from '../desktops/create';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { disksOf } from '../desktops/machine-spec';
import { desktopView, findDomain } from '../desktops/view';
import { quotaLevels } from '../quotas/levels';
import { assertGpuOnlyViewers, assertGuestNetworkChoice, chooseGuest } from './guest';
import { chooseHardware, GB, hardwareBounds, type HardwareRow } from './hardware';
import { stockImage } from './images';
import { assertNameFree } from './names';
import { checkNewItemQuota } from '../storage/new-item-quota';

/** A template the user may create desktops from: allowed to them, enabled, and ready. */
export async function usableTemplate(ctx: AppContext, user: UserRow, templateId: string) {
  const template = await findDomain(ctx.db, templateId);
  if (!template || template.kind !== 'template') throw notFound('template_not_found', 'Template not found');
  if (!template.enabled || template.status !== 'Stopped' || !isAllowed(await actorOf(ctx.db, user), template)) {
    throw forbidden('template_not_allowed', 'This template is not available to you');
  }
  return template;
}

/** All the promises' values; when some fail, the failure of the first of them in the list. */
async function firstRefusal<T extends readonly unknown[]>(all: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(all);
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * POST /persistent_desktop: a desktop of the user's own from a template, with hardware and
 * viewers within what they may choose, on a thin overlay of the template's disk.
 */
export async function createPersistentDesktop(ctx: AppContext, lifecycle: DesktopLifecycle, user: UserRow, body: z.infer<typeof ZNewDesktop>) {
  const { db } = ctx;
  // The checks read independently; a refusal is the first in this order (template, quota, name).
  const [template, , , bounds, templateDisks] = await firstRefusal([
    usableTemplate(ctx, user, body.template_id),
    checkNewItemQuota(db, user, 'desktops'),
    assertNameFree(db, user.id, 'desktop', body.name),
    hardwareBounds(db, user),
    disksOf(db, body.template_id),
  ] as const);
  const { quota } = bounds;
  const base: HardwareRow = { ...(template.hardware as HardwareRow), interfaces: freshInterfaces(template.hardware) };
  const guest = chooseGuest(
    { guest: template.guestProperties, interfaces: base.interfaces.map((i) => i.id) },
    { guest: body.guest_properties, interfaces: body.hardware?.interfaces },
  );
  const hardware = chooseHardware(base, body.hardware, guest.interfaces, quota, 'desktop_new');
  assertGpuOnlyViewers(hardware.videos, guest.guest);
  assertGuestNetworkChoice(ctx.engine.network, null, guest.interfaces);

  const [templateDisk] = templateDisks;
  if (!templateDisk) throw precondition('domain_has_no_disk', 'The template has no disk');
  let sizeBytes: number | undefined;
  const wantedGb = body.hardware?.disk_size;
  if (wantedGb !== undefined) {
    if (wantedGb > quota.desktops_disk_size) {
      throw precondition('desktop_new_disk_size_quota_exceeded', `At most ${quota.desktops_disk_size} GB of disk`, { desktops_disk_size: quota.desktops_disk_size });
    }
    if (wantedGb * GB < templateDisk.virtualSize) {
      throw badRequest('disk_size_too_small', 'The disk cannot be smaller than the template’s', { min: Math.ceil(templateDisk.virtualSize / GB) });
    }
    if (wantedGb * GB > templateDisk.virtualSize) sizeBytes = wantedGb * GB;
  }
  const image = body.image ? stockImage(body.image.id) : template.image;

  // One transaction of records with what was chosen (hardware, viewers, image, disk size), then the file.
  const storageId = randomUUID();
  const created = await createDesktopFromTemplate(db, ctx.engine, template, user, {
    storageId,
    name: body.name,
    description: body.description,
    persistent: true,
    status: 'Stopped',
    hardware,
    keepMacs: true,
    guestProperties: guest.guest,
    image,
    base: templateDisk,
    sizeBytes,
  });
  // Its view from what was just written and read (a new desktop of no deployment has no booking yet).
  const { group, category } = await quotaLevels(db, user);
  const view = desktopView(created, {
    userName: user.name, groupName: group?.name ?? null, categoryName: category?.name ?? null, storage: [storageId], permissions: null, next: null,
  });
  ctx.bus.toUser(user.id, 'desktop_add', view);
  return { id: created.id };
}
