// Disks that live on a remote host's own storage pool (a host without the installation's shared
// storage folder): its copies of template bases and the desktops' disks bound to it. Every operation
// runs there through libvirt's storage API (the host's LibvirtDriver); the only local work is a
// copy of an overlay pointed at its base's path on the host before it goes (qemu-img rebase -u).
// Why and how: docs/decisions/0011-template-bases-on-hosts.md.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { rebasedCopy } from './disks';
import { EngineError } from './driver';
import type { FleetDriver } from './fleet';
import { LibvirtDriver, type HostVolume, type VolumeProgress } from './libvirt/libvirt-driver';

export type { HostVolume, VolumeProgress };
export type UploadOptions = { onProgress?: (p: VolumeProgress) => void; signal?: AbortSignal };

export class HostDisks {
  constructor(
    private readonly fleet: Pick<FleetDriver, 'host'>,
    /** where the rebased copies are made before they go (this machine; removed after each) */
    private readonly tmpDir: string,
  ) {}

  private on(hostId: string): LibvirtDriver {
    if (hostId === LOCAL_HYPERVISOR) throw new EngineError('unsupported', 'the local host keeps its disks in the storage folder');
    const d = this.fleet.host(hostId);
    if (!(d instanceof LibvirtDriver)) throw new EngineError('host-unreachable', 'the hypervisor holding this disk is not connected');
    return d;
  }

  /** Volume `name` of `pool` on the host, or null. */
  volume(hostId: string, pool: string, name: string): Promise<HostVolume | null> {
    return this.on(hostId).volume(pool, name);
  }

  /**
   * `file` copied into volume `name` of the host's `pool`. `backing`: the file is a qcow2 overlay
   * whose base is already on the host at that path: the copy sent points there (its header only
   * changes; its bytes and size stay the same).
   */
  async upload(hostId: string, pool: string, name: string, file: string, backing: { path: string; format: string } | null, opts: UploadOptions = {}): Promise<HostVolume> {
    const driver = this.on(hostId);
    if (!backing) return driver.uploadVolume(pool, name, file, opts);
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const tmp = join(this.tmpDir, `${randomBytes(6).toString('hex')}.qcow2`);
    try {
      await copyFile(file, tmp);
      await rebasedCopy(tmp, backing.path, backing.format);
      return await driver.uploadVolume(pool, name, tmp, opts);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** Grows the disk at `path` on the host to `newSizeBytes` (its virtual size); shrinking is refused. */
  async grow(hostId: string, path: string, newSizeBytes: number): Promise<{ virtualSize: number; actualSize: number }> {
    const v = await this.on(hostId).resizeVolume(path, newSizeBytes);
    return { virtualSize: v.capacity, actualSize: v.allocation };
  }

  /** Deletes the disk at `path` on the host; one already gone is fine. */
  remove(hostId: string, path: string): Promise<void> {
    return this.on(hostId).deleteVolume(path);
  }

  /** Free bytes of the host's `pool` now. */
  async free(hostId: string, pool: string): Promise<number> {
    return (await this.on(hostId).poolSpace(pool)).available;
  }

  /**
   * The disk at `path` on the host copied into the new file `file` here. `backing`: the disk is a qcow2
   * overlay, its copy here points at that base (header only, as `upload` does the other way). Made
   * under a partial name beside `file` (the storage's `.name.….tmp`), renamed when whole: a failure leaves no file.
   */
  async download(hostId: string, path: string, file: string, backing: { path: string; format: string } | null): Promise<void> {
    const part = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await this.on(hostId).downloadVolume(path, part);
      if (backing) await rebasedCopy(part, backing.path, backing.format);
      await rename(part, file);
    } finally {
      await rm(part, { force: true });
    }
  }

  /** The disk at `path` on the host (in whichever of its pools) and its pool's name, or null. */
  at(hostId: string, path: string): Promise<(HostVolume & { pool: string }) | null> {
    return this.on(hostId).volumeAt(path);
  }

  /** Whether the disk at `path` is on the host (in any of its pools). */
  async exists(hostId: string, path: string): Promise<boolean> {
    return (await this.at(hostId, path)) !== null;
  }
}
