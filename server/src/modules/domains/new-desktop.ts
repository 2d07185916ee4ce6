import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { ZNewDesktop } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { UserRow } from '../../auth/sessions';
import { badRequest, forbidden, notFound, precondition } from '../../http/errors';
import { isAllowed } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { createDesktopFromTemplate, creating, freshInterfaces } from '../desktops/create';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { findDomain, type DomainRow } from '../shared/domains';
import { desktopView } from '../shared/desktop-view';
import { quotaLevels } from '../../auth/caller';
import { assertGpuOnlyViewers, assertGuestNetworkChoice, chooseGuest } from './guest';
import { chooseHardware, GB, hardwareBounds, type HardwareRow } from './hardware';
import { stockImage } from './images';
import { nameTaken, nameTakenSql } from './names';
import { checkNewItemQuota, quotaFieldsOf } from '../storage/new-item-quota';
import { appliedQuota, usageFrom, usageSql } from '../quotas/applied';
import { preparedQuery } from '../../db/prepared';
import { schema } from '../../db';

/** A template the user may create desktops from: allowed to them, enabled, and ready. */
export async function usableTemplate(ctx: AppContext, user: UserRow, templateId: string) {
  return assertUsableTemplate(ctx, user, await findDomain(ctx.db, templateId));
}

async function assertUsableTemplate(ctx: AppContext, user: UserRow, template: DomainRow | undefined) {
  if (!template || template.kind !== 'template') throw notFound('template_not_found', 'Template not found');
  if (!template.enabled || template.status !== 'Stopped' || !isAllowed(await actorOf(ctx.db, user), template)) {
    throw forbidden('template_not_allowed', 'This template is not available to you');
  }
  return template;
}

const DESKTOP_QUOTA_FIELDS = quotaFieldsOf('desktops');

/**
 * What the checks of a new desktop read, in one query (one round trip, one turn of the embedded
 * database): the template and its first disk, whether the person has a desktop of that name, and,
 * when a quota applies to them, their own desktop usage (group and category limits are read only
 * where set).
 */
const newDesktopReadsOf = (withUsage: boolean) =>
  preparedQuery((db, name) => {
    const { domains: d, domainDisks: dd, storage: s } = schema;
    const userId = sql`${sql.placeholder('userId')}`;
    return db
      .select({
        template: d,
        disk: s,
        nameTaken: nameTakenSql(userId, 'desktop', sql`${sql.placeholder('name')}`),
        used: withUsage ? usageSql({ userId }, DESKTOP_QUOTA_FIELDS) : sql<null>`null`,
      })
      .from(d)
      .leftJoin(dd, and(eq(dd.domainId, d.id), sql`${dd.position} = 0`))
      .leftJoin(s, eq(s.id, dd.storageId))
      .where(eq(d.id, sql.placeholder('templateId')))
      .prepare(name);
  });
const newDesktopReads = { withUsage: newDesktopReadsOf(true), withoutUsage: newDesktopReadsOf(false) };

/**
 * POST /persistent_desktop: a desktop of the user's own from a template, with hardware and
 * viewers within what they may choose, on a thin overlay of the template's disk.
 */
export async function createPersistentDesktop(ctx: AppContext, lifecycle: DesktopLifecycle, user: UserRow, body: z.infer<typeof ZNewDesktop>) {
  const { db } = ctx;
  // One read for the checks; a refusal is the first in this order (template, quota, name).
  // The applied quota is known without a query (the guard read the user's levels).
  const { quota: applied } = await appliedQuota(db, user);
  const reads = applied ? newDesktopReads.withUsage : newDesktopReads.withoutUsage;
  const [read] = await reads(db).execute({ userId: user.id, name: body.name, templateId: body.template_id });
  const template = await assertUsableTemplate(ctx, user, read?.template);
  await checkNewItemQuota(db, user, 'desktops', applied ? usageFrom(read!.used, DESKTOP_QUOTA_FIELDS) : undefined);
  if (read!.nameTaken) throw nameTaken('desktop', body.name);
  const { quota } = await hardwareBounds(db, user);
  const base: HardwareRow = { ...(template.hardware as HardwareRow), interfaces: freshInterfaces(template.hardware) };
  const guest = chooseGuest(
    { guest: template.guestProperties, interfaces: base.interfaces.map((i) => i.id) },
    { guest: body.guest_properties, interfaces: body.hardware?.interfaces },
  );
  const hardware = chooseHardware(base, body.hardware, guest.interfaces, quota, 'desktop_new');
  assertGpuOnlyViewers(hardware.videos, guest.guest);
  assertGuestNetworkChoice(ctx.engine.network, null, guest.interfaces);

  const templateDisk = read!.disk;
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
  const id = randomUUID();
  const created = await creating(ctx.locks, id, () => createDesktopFromTemplate(db, ctx.engine, template, user, {
    id,
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
  }));
  // Its view from what was just written and read (a new desktop of no deployment has no booking yet).
  const { group, category } = await quotaLevels(db, user);
  const view = desktopView(created, {
    userName: user.name, groupName: group?.name ?? null, categoryName: category?.name ?? null, storage: [storageId], permissions: null, next: null, hostName: null,
  });
  ctx.bus.toUser(user.id, 'desktop_add', view);
  return { id: created.id };
}
