/**
 * A full pool is refused before anything is made in it (issue 25: "a pool that is full: a clear
 * catalogue code ..., nothing half-registered"). One rule for every pool: a host's own pool (its free
 * space as libvirt measures it) and the installation's storage folder (statfs).
 */
import { precondition } from '../../http/errors';

/** Room a new overlay is given beyond its file: the first writes of its guest (a fresh qcow2 is a few hundred KiB). */
export const OVERLAY_RESERVE_BYTES = 64 * 1024 ** 2;

/** A file to be made in a pool: a copy (its whole size) or an overlay (at least the reserve). */
export type PoolFile = { bytes: number; overlay: boolean };

/** The bytes these files need in a pool. */
export const roomNeeded = (files: PoolFile[]): number => files.reduce((sum, f) => sum + (f.overlay ? Math.max(f.bytes, OVERLAY_RESERVE_BYTES) : f.bytes), 0);

/** Refuses (`storage_pool_full`, nothing made yet) when `pool` has less free than the files need. */
export function assertRoom(pool: string, freeBytes: number, files: PoolFile[]): void {
  const needed = roomNeeded(files);
  if (needed > freeBytes) {
    throw precondition('storage_pool_full', `The storage pool ${pool} has ${freeBytes} bytes free; this needs ${needed}`, { pool, needed_bytes: needed, free_bytes: freeBytes });
  }
}
