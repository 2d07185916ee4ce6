import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { FALLBACK_HARDWARE_QUOTA, MEDIA_DESKTOP_DEFAULTS, type ZDesktopFromMedia } from '@vdi/contracts';
import type { z } from 'zod';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { DomainHardware, GuestProperties } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';
import { badRequest, conflict, forbidden, notFound, precondition } from '../../http/errors';
import { isAllowed } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { appliedQuota } from '../quotas/applied';
import { checkNewDesktopQuota } from '../quotas/create-check';
import { createDesktopRecords, creating, desktopDiskPath, randomMac } from '../desktops/create';
import { desktopViews } from '../shared/desktop-view';
import { findMedia } from './view';
import { GB } from './quota';

/** Names of desktops: letters, numbers, spaces, comma, period, hyphen, underscore (spec core §5). */
const NAME_FORMAT = /^[\p{L}\p{N} ,._-]+$/u;

/** Guest settings of a desktop installed from media: the reference's default credentials and both viewers. */
export const MEDIA_DESKTOP_GUEST: GuestProperties = {
  credentials: { username: 'isard', password: 'pirineus' },
  fullscreen: false,
  viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
};

/**
 * POST /desktop/from/media: a new persistent desktop with an empty qcow2 disk of `disk_size` GB,
 * the media attached as a CD-ROM and booted first ([iso, disk]).
 */
export async function createDesktopFromMedia(ctx: AppContext, user: UserRow, body: z.output<typeof ZDesktopFromMedia>) {
  const { db } = ctx;
  if (!NAME_FORMAT.test(body.name)) throw badRequest('validation_error', 'name: only letters, numbers, comma, period, hyphen and underscore');
  const media = await findMedia(db, body.media_id);
  if (!media || media.status === 'deleted') throw notFound('media_not_found', 'Media not found');
  if (!isAllowed(await actorOf(db, user), media)) throw forbidden('forbidden', 'Not enough rights on this media');
  if (media.status !== 'Downloaded' || !media.path) throw conflict('media_not_downloaded', 'The media is not downloaded', { status: media.status });
  if (body.kind !== media.kind) throw badRequest('bad_request', `The media is ${media.kind}, not ${body.kind}`);
  // The engine has CD-ROMs only; floppy images can be downloaded and shared but not booted.
  if (media.kind !== 'iso') throw badRequest('media_floppy_not_bootable', 'Desktops boot from ISO media only');

  const taken = await db
    .select({ id: schema.domains.id })
    .from(schema.domains)
    .where(and(eq(schema.domains.userId, user.id), eq(schema.domains.kind, 'desktop'), eq(schema.domains.name, body.name)));
  if (taken.length > 0) throw conflict('new_desktop_name_exists', 'You already have a desktop with this name');

  await checkNewDesktopQuota(db, user, 'desktops');
  const { quota } = await appliedQuota(db, user);
  const caps = quota || FALLBACK_HARDWARE_QUOTA;
  const vcpus = body.hardware?.vcpus ?? MEDIA_DESKTOP_DEFAULTS.vcpus;
  const memory = body.hardware?.memory ?? MEDIA_DESKTOP_DEFAULTS.memory;
  if (body.disk_size > caps.desktops_disk_size) {
    throw precondition('desktop_new_disk_size_quota_exceeded', `Disk larger than ${caps.desktops_disk_size} GB`, { desktops_disk_size: caps.desktops_disk_size });
  }
  if (vcpus > caps.vcpus) throw precondition('desktop_new_vcpu_quota_exceeded', `More than ${caps.vcpus} vCPUs`, { vcpus: caps.vcpus });
  if (memory > caps.memory) throw precondition('desktop_new_memory_quota_exceeded', `More than ${caps.memory} GB of memory`, { memory: caps.memory });

  const id = randomUUID();
  const storageId = randomUUID();
  const hardware: DomainHardware = {
    vcpus,
    memoryMb: Math.round(memory * 1024),
    bootOrder: ['iso', 'disk'],
    diskBus: body.disk_bus,
    interfaces: [{ id: 'default', mac: randomMac() }],
    videos: ['default'],
    graphics: ['default'],
    isos: [media.id],
    floppies: [],
    reservables: { vgpus: null },
  };
  // The records first (the disk planned at its path), then the empty disk: crash-consistent.
  const row = await creating(ctx.locks, id, () => createDesktopRecords(
    db,
    ctx.engine.disks,
    {
      id,
      name: body.name,
      description: body.description,
      userId: user.id,
      categoryId: user.categoryId,
      groupId: user.groupId,
      persistent: true,
      templateId: null,
      hardware,
      guestProperties: MEDIA_DESKTOP_GUEST,
      image: { id: '2.jpg', type: 'stock', url: '/assets/img/desktops/stock/2.jpg' },
      icon: 'fa-circle-o',
    },
    [{ id: storageId, userId: user.id, kind: 'desktop', path: desktopDiskPath(ctx.engine, storageId), parentId: null, virtualSize: body.disk_size * GB }],
    'Stopped',
    async (tx) => {
      await tx.insert(schema.domainMedia).values({ domainId: id, mediaId: media.id, kind: 'iso' });
    },
  ));
  await db.update(schema.media).set({ accessedAt: new Date() }).where(eq(schema.media.id, media.id));
  const [view] = await desktopViews(ctx, [row]);
  ctx.bus.toUser(user.id, 'desktop_add', view!);
  return { id };
}
