import type { THardwareItem, TInstallType } from '@vdi/contracts';

/**
 * The hardware lists a person chooses from (GET /user/hardware/allowed). They are data: the
 * engine maps each id onto the machine (see desktops/machine-spec.ts).
 */
export const INTERFACES: THardwareItem[] = [
  { id: 'default', name: 'Default', description: 'NAT network with access to the internet' },
  { id: 'wireguard', name: 'Wireguard VPN', description: 'Private network through which the RDP viewers and the VPN reach the desktop' },
];

export const GRAPHICS: THardwareItem[] = [{ id: 'default', name: 'Default', description: 'VNC in the browser, and SPICE when chosen' }];

export const VIDEOS: THardwareItem[] = [
  { id: 'default', name: 'Default', description: 'A virtual display card' },
  { id: 'none', name: 'Only GPU', description: 'No virtual display card: the GPU’s own output, reached with the RDP viewers' },
];

export const BOOT_ORDER: THardwareItem[] = [
  { id: 'disk', name: 'Hard disk', description: 'Boot the installed system' },
  { id: 'iso', name: 'CD/DVD', description: 'Boot the attached installation media' },
  { id: 'network', name: 'Network (PXE)', description: 'Boot from the network' },
];

export const DISK_BUS: THardwareItem[] = [
  { id: 'default', name: 'Default', description: 'The fastest the hypervisor offers (virtio)' },
  { id: 'virtio', name: 'Virtio', description: 'Paravirtualised; needs virtio drivers in the guest' },
  { id: 'sata', name: 'SATA', description: 'Works with every guest' },
  { id: 'ide', name: 'IDE', description: 'For old guests' },
];

/** GET /media/installs: guest operating system types, each with the disk bus it works best on. */
export const INSTALL_TYPES: TInstallType[] = [
  { id: 'linux', name: 'Linux', description: 'Any recent Linux distribution (virtio drivers built in)', disk_bus: 'virtio' },
  { id: 'win10Virtio', name: 'Windows 10 / 11', description: 'Windows with the virtio drivers installed', disk_bus: 'virtio' },
  { id: 'win10Sata', name: 'Windows 10 / 11 (no virtio drivers)', description: 'Windows installed without extra drivers', disk_bus: 'sata' },
  { id: 'legacy', name: 'Other or legacy system', description: 'Old systems that only know IDE disks', disk_bus: 'ide' },
];

export const has = (list: readonly THardwareItem[] | readonly TInstallType[], id: string) => list.some((x) => x.id === id);
