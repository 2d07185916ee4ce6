import { describe, expect, it } from 'vitest';
import { deploymentHasUsers, videowallAvailable, ZDeploymentHardware } from '@vdi/contracts';
import type { DomainHardware, GuestProperties } from '../../db/schema';
import { ApiError } from '../../http/errors';
import { rightsOn } from './access';
import { assertHasUsers, makeCreateDict, remadeHardware } from './rules';

const hardware: DomainHardware = {
  vcpus: 1, memoryMb: 1024, bootOrder: ['disk'], diskBus: 'virtio', interfaces: [{ id: 'default', mac: '52:54:00:00:00:01' }],
  videos: ['default'], graphics: ['default'], isos: [], floppies: [], reservables: { vgpus: null },
};
const guest: GuestProperties = { credentials: { username: 'isard', password: 'pirineus' }, fullscreen: false, viewers: { browser_vnc: { options: null } } };
const template = { hardware, guestProperties: guest, image: { id: '1.svg', type: 'stock' as const, url: '/x/1.svg' } };
const quota = { memory: 4, vcpus: 2, desktops_disk_size: 50 };
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ApiError ? err.code : String(err);
  }
  return 'ok';
};

describe('deployment rules', () => {
  it('needs at least one user or group; an empty list (everyone) counts', () => {
    expect(deploymentHasUsers({ groups: false, users: false })).toBe(false);
    expect(code(() => assertHasUsers({ groups: false, users: false }))).toBe('deployment_no_users');
    expect(code(() => assertHasUsers({}))).toBe('deployment_no_users');
    expect(code(() => assertHasUsers({ groups: ['g1'], users: false }))).toBe('ok');
    expect(code(() => assertHasUsers({ groups: false, users: ['u1'] }))).toBe('ok');
    expect(code(() => assertHasUsers({ groups: [], users: false }))).toBe('ok');
  });

  it('needs at least one viewer', () => {
    expect(code(() => makeCreateDict('t', template, { guest_properties: { viewers: {} } }, quota, 'create'))).toBe('one_viewer_minimum');
    expect(code(() => makeCreateDict('t', template, { guest_properties: { viewers: { file_spice: { options: null } } } }, quota, 'create'))).toBe('ok');
  });

  it('adds the wireguard network with an RDP viewer, and removing wireguard takes the RDP viewers away', () => {
    const withRdp = makeCreateDict('t', template, { guest_properties: { viewers: { browser_vnc: { options: null }, browser_rdp: { options: null } } } }, quota, 'create');
    expect(withRdp.hardware.interfaces.map((i) => i.id)).toEqual(['default', 'wireguard']);
    const dropped = makeCreateDict('t', withRdp, { hardware: { interfaces: ['default'] } }, quota, 'edit');
    expect(Object.keys(dropped.guestProperties.viewers)).toEqual(['browser_vnc']);
    expect(dropped.guestProperties.credentials).toEqual({ username: 'isard', password: 'pirineus' });
    // Only RDP and no wireguard: no viewer would be left.
    const rdpOnly = makeCreateDict('t', template, { guest_properties: { viewers: { browser_rdp: { options: null } } } }, quota, 'create');
    expect(code(() => makeCreateDict('t', rdpOnly, { hardware: { interfaces: ['default'] } }, quota, 'edit'))).toBe('one_viewer_minimum');
  });

  it('allows GPU-only video only with RDP viewers, and gives desktops without a GPU the default video', () => {
    const gpu = { reservables: { vgpus: ['NVIDIA-A16-2Q'] }, videos: ['none'] };
    expect(code(() => makeCreateDict('t', template, { hardware: gpu }, quota, 'create'))).toBe('only_works_rdp');
    const ok = makeCreateDict('t', template, { hardware: gpu, guest_properties: { viewers: { browser_rdp: { options: null } } } }, quota, 'create');
    expect(ok.hardware.videos).toEqual(['none']);
    expect(ok.hardware.reservables.vgpus).toEqual(['NVIDIA-A16-2Q']);
    const noGpu = makeCreateDict('t', template, { hardware: { videos: ['none'] } }, quota, 'create');
    expect(noGpu.hardware.videos).toEqual(['default']);
    // The same rules on an edit: a VNC viewer next to "Only GPU" is refused; taking the GPU away brings the default video back.
    expect(code(() => makeCreateDict('t', ok, { guest_properties: { viewers: { browser_rdp: { options: null }, browser_vnc: { options: null } } } }, quota, 'edit'))).toBe('only_works_rdp');
    const unGpu = makeCreateDict('t', ok, { hardware: { reservables: { vgpus: null } } }, quota, 'edit');
    expect(unGpu.hardware.reservables.vgpus).toBeNull();
    expect(unGpu.hardware.videos).toEqual(['default']);
    // No GPU as forms send it ([], or the original portal's ["None"]), as the contract parses it.
    for (const vgpus of [[], ['None']]) {
      expect(makeCreateDict('t', ok, { hardware: ZDeploymentHardware.parse({ reservables: { vgpus } }) }, quota, 'edit').hardware.reservables.vgpus).toBeNull();
    }
  });

  it('keeps hardware within the quota and in 0.5 GB steps', () => {
    expect(code(() => makeCreateDict('t', template, { hardware: { vcpus: 3 } }, quota, 'create'))).toBe('desktop_new_vcpu_quota_exceeded');
    expect(code(() => makeCreateDict('t', template, { hardware: { memory: 0.7 } }, quota, 'create'))).toBe('hardware_memory_step');
    expect(makeCreateDict('t', template, { hardware: { memory: 2.5, vcpus: 2 } }, quota, 'create').hardware).toMatchObject({ memoryMb: 2560, vcpus: 2 });
  });

  it('keeps no MAC in the make, and each desktop keeps its own MAC when the make changes', () => {
    const make = makeCreateDict('t', template, {}, quota, 'create');
    expect(make.hardware.interfaces).toEqual([{ id: 'default', mac: '' }]);
    const own = { ...hardware, interfaces: [{ id: 'default', mac: '52:54:00:aa:bb:cc' }] };
    const next = remadeHardware(own, { ...make.hardware, interfaces: [{ id: 'default', mac: '' }, { id: 'wireguard', mac: '' }] });
    expect(next.interfaces[0]).toEqual({ id: 'default', mac: '52:54:00:aa:bb:cc' });
    expect(next.interfaces[1]!.mac).toMatch(/^52:54:00(:[0-9a-f]{2}){3}$/);
  });

  it('gives co-owners the owner’s rights except deleting and changing owners', () => {
    const d = { userId: 'teo', categoryId: 'c1', coOwners: ['ana'] };
    const actor = (id: string, role = 'advanced', categoryId = 'c1') => ({ id, role, categoryId, groupIds: [] });
    expect(rightsOn(actor('teo'), d)).toMatchObject({ owner: true, read: true, edit: true, delete: true, changeOwners: true });
    expect(rightsOn(actor('ana'), d)).toMatchObject({ owner: false, coOwner: true, read: true, edit: true, delete: false, changeOwners: false });
    expect(rightsOn(actor('bob'), d)).toMatchObject({ read: false, edit: false, delete: false });
    expect(rightsOn(actor('boss', 'manager'), d)).toMatchObject({ read: true, delete: true, changeOwners: true });
    expect(rightsOn(actor('boss', 'manager', 'c2'), d)).toMatchObject({ read: false, delete: false });
    expect(rightsOn(actor('root', 'admin', 'c9'), d)).toMatchObject({ read: true, delete: true });
  });

  it('shows the videowall only for desktops with the browser VNC viewer', () => {
    expect(videowallAvailable(['browser_vnc', 'file_spice'])).toBe(true);
    expect(videowallAvailable(['browser_rdp', 'file_rdpgw'])).toBe(false);
  });
});
