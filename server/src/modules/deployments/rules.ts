import type { z } from 'zod';
import type { THardwareQuota, TGuestChoice, ZDeploymentHardware } from '@vdi/contracts';
import { deploymentHasUsers } from '@vdi/contracts';
import type { DeploymentCreateDict, DomainHardware, DomainImage, GuestProperties } from '../../db/schema';
import { badRequest } from '../../http/errors';
import { randomMac } from '../desktops/create';
import { assertGpuOnlyViewers, chooseGuest } from '../domains/guest';
import { chooseHardware, type HardwareRow } from '../domains/hardware';
import { stockImage } from '../domains/images';

/**
 * The pure rules of a deployment's making (spec core §5): who it is for, and what its desktops
 * are made of — the template's hardware and viewers with the person's choices, checked as a new
 * desktop's are (at least one viewer, RDP ↔ wireguard, GPU-only only with RDP, within the quota).
 */

export function assertHasUsers(allowed: { groups?: string[] | false; users?: string[] | false }) {
  if (!deploymentHasUsers(allowed)) throw badRequest('deployment_no_users', 'Choose at least one user or group');
}

type Source = { hardware: DomainHardware; guestProperties: GuestProperties; image: DomainImage };
export type MakeInput = { hardware?: z.infer<typeof ZDeploymentHardware>; guest_properties?: TGuestChoice; image?: { type: 'stock'; id: string } };

/**
 * What each desktop is made of. `base` is the template (creation) or the current create_dict
 * (edit: values left as they were pass even beyond the quota, changed ones must fit).
 */
export function makeCreateDict(templateId: string, base: Source, input: MakeInput, quota: THardwareQuota, mode: 'create' | 'edit'): DeploymentCreateDict {
  // The contract has made "no GPU" (null, [], ["None"]) null.
  const vgpus = input.hardware?.reservables !== undefined ? input.hardware.reservables.vgpus : base.hardware.reservables.vgpus;
  const start: HardwareRow = { ...base.hardware, reservables: { vgpus } };
  const guest = chooseGuest(
    { guest: base.guestProperties, interfaces: start.interfaces.map((i) => i.id) },
    { guest: input.guest_properties, interfaces: input.hardware?.interfaces },
  );
  const { reservables: _r, ...choice } = input.hardware ?? {};
  const { install: _i, ...hardware } = chooseHardware(start, choice, guest.interfaces, quota, mode === 'create' ? 'desktop_new' : 'domain_edit');
  assertGpuOnlyViewers(hardware.videos, guest.guest);
  // Each desktop gets its own MAC addresses when it is made; the dict keeps none.
  hardware.interfaces = hardware.interfaces.map((i) => ({ id: i.id, mac: '' }));
  return { templateId, hardware, guestProperties: guest.guest, image: input.image ? stockImage(input.image.id) : base.image };
}

/** A desktop of the deployment after an edit: the new make, its own MAC addresses kept. */
export function remadeHardware(current: DomainHardware, make: DomainHardware): DomainHardware {
  const macs = new Map(current.interfaces.map((i) => [i.id, i.mac]));
  return { ...make, interfaces: make.interfaces.map((i) => ({ id: i.id, mac: macs.get(i.id) || randomMac() })) };
}
