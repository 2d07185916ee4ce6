import {
  FALLBACK_HARDWARE_QUOTA,
  GB,
  GUEST_VIEWER_KEYS,
  RDP_VIEWER_KEYS,
  WIREGUARD_INTERFACE,
  isMemoryStep,
  videosFor,
  type THardwareAllowed,
  type THardwareChoice,
  type THardwareQuota,
  type TRestrictionApplied,
} from '@vdi/contracts';
import type { Db } from '../../db';
import type { DomainHardware } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';
import { badRequest, precondition } from '../../http/errors';
import { appliedQuota } from '../quotas/applied';
import { randomMac } from '../desktops/create';
import { BOOT_ORDER, DISK_BUS, GRAPHICS, has, INSTALL_TYPES, INTERFACES, VIDEOS } from './catalog';
import { profileChoices } from '../reservables/profiles';
import { actorOf } from '../../auth/caller';

/** The stored hardware, plus the install type the edit form keeps beside it. */
export type HardwareRow = DomainHardware & { install?: string };

export { GB };
export const memoryGbOf = (hw: DomainHardware) => hw.memoryMb / 1024;

/** What the user may choose up to: the applied quota, or the fallback 128 GB / 128 vCPUs / 500 GB (spec core §9). */
export async function hardwareBounds(db: Db, user: UserRow): Promise<{ quota: THardwareQuota; restriction_applied: TRestrictionApplied }> {
  const applied = await appliedQuota(db, user);
  const q = applied.quota;
  return {
    quota: q
      ? { memory: q.memory, vcpus: q.vcpus, desktops_disk_size: q.desktops_disk_size }
      : { ...FALLBACK_HARDWARE_QUOTA },
    restriction_applied: applied.restriction_applied,
  };
}

/** `guestNetwork`: whether this server has the guests' private network; without it neither the
 *  wireguard interface nor the RDP viewers are offered. */
export async function allowedHardware(db: Db, user: UserRow, guestNetwork: boolean): Promise<THardwareAllowed> {
  const bounds = await hardwareBounds(db, user);
  return {
    interfaces: guestNetwork ? INTERFACES : INTERFACES.filter((i) => i.id !== WIREGUARD_INTERFACE),
    viewers: guestNetwork ? [...GUEST_VIEWER_KEYS] : GUEST_VIEWER_KEYS.filter((v) => !RDP_VIEWER_KEYS.includes(v)),
    graphics: GRAPHICS,
    videos: VIDEOS,
    boot_order: BOOT_ORDER,
    disk_bus: DISK_BUS,
    // The GPU profiles of the planner's cards that the user may pick.
    reservables: { vgpus: await profileChoices(db, await actorOf(db, user)) },
    ...bounds,
  };
}

/** Does the domain ask for more than the user may choose? (domain info's limited_hardware) */
export const beyondBounds = (hw: DomainHardware, diskGb: number, q: THardwareQuota) =>
  hw.vcpus > q.vcpus || memoryGbOf(hw) > q.memory || diskGb > q.desktops_disk_size;

type Prefix = 'desktop_new' | 'domain_edit';

/**
 * The hardware after a person's choice, checked against the lists and the quota.
 * New desktops: what the template has beyond the quota is capped when not chosen, refused when
 * chosen. Edits: values left as they were pass, changed ones must fit.
 */
export function chooseHardware(
  base: HardwareRow,
  input: Partial<Omit<THardwareChoice, 'disk_size'>> | undefined,
  interfaceIds: string[],
  q: THardwareQuota,
  prefix: Prefix,
): HardwareRow {
  const next: HardwareRow = { ...base };
  const edit = prefix === 'domain_edit';

  if (input?.vcpus !== undefined && input.vcpus !== base.vcpus) {
    if (input.vcpus > q.vcpus) throw precondition(`${prefix}_vcpu_quota_exceeded`, `At most ${q.vcpus} vCPUs`, { vcpus: q.vcpus });
    next.vcpus = input.vcpus;
  } else if (!edit && base.vcpus > q.vcpus) next.vcpus = Math.max(1, Math.floor(q.vcpus));

  const baseGb = memoryGbOf(base);
  if (input?.memory !== undefined && input.memory !== baseGb) {
    if (!isMemoryStep(input.memory)) throw badRequest('hardware_memory_step', 'Memory goes in steps of 0.5 GB', { step: 0.5 });
    if (input.memory > q.memory) throw precondition(`${prefix}_memory_quota_exceeded`, `At most ${q.memory} GB of memory`, { memory: q.memory });
    next.memoryMb = Math.round(input.memory * 1024);
  } else if (!edit && baseGb > q.memory) next.memoryMb = Math.max(512, Math.floor(q.memory / 0.5) * 512);

  if (input?.disk_bus !== undefined) next.diskBus = input.disk_bus;
  if (input?.boot_order !== undefined) next.bootOrder = [...new Set(input.boot_order)];

  for (const id of interfaceIds) if (!has(INTERFACES, id)) throw badRequest('hardware_not_allowed', `Unknown network ${id}`, { interface: id });
  const macs = new Map(base.interfaces.map((i) => [i.id, i.mac]));
  next.interfaces = [...new Set(interfaceIds)].map((id) => ({ id, mac: macs.get(id) || randomMac() }));

  const videos = input?.videos ?? base.videos;
  for (const v of videos) if (!has(VIDEOS, v)) throw badRequest('hardware_not_allowed', `Unknown video ${v}`, { video: v });
  next.videos = videosFor(base.reservables.vgpus, videos);

  if (input?.graphics !== undefined) {
    for (const g of input.graphics) if (!has(GRAPHICS, g)) throw badRequest('hardware_not_allowed', `Unknown graphics ${g}`, { graphics: g });
    next.graphics = input.graphics;
  }
  if (input?.install !== undefined) {
    if (!has(INSTALL_TYPES, input.install)) throw badRequest('hardware_not_allowed', `Unknown install type ${input.install}`, { install: input.install });
    next.install = input.install;
  }
  return next;
}
