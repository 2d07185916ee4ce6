/**
 * Disks where the pool is (issue 25; docs/decisions/0011-template-bases-on-hosts.md).
 *
 * A host that reaches the installation's storage folder (its pool `default`, NFS in production)
 * runs a desktop's disks where they are. A host that does not, but has a pool of its own
 * (`HOST_OWN_POOL`), takes a desktop the way Ravada's nodes do: the first time a desktop of a
 * template goes there, the template's base (the backing chain under the desktop's disk) is copied
 * into that pool through libvirt's storage API, as a `base_copy` job with progress in the console's
 * jobs; later desktops reuse the copy (same name and same size). The desktop's own disk then goes to
 * that pool too, pointed at the copy, and its storage row records the host (`hypervisor_id`): the
 * desktop is bound to that host from then on (placement's rule), and its disk's growth and removal run there.
 */
import { basename } from 'node:path';
import { eq } from 'drizzle-orm';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { EngineError } from '../../engine/driver';
import { conflict } from '../../http/errors';

/** The job that copies a template's base to a host (its progress: bytes done of the total). */
export const BASE_COPY_JOB = 'base_copy';
/** The shared pool: the installation's storage folder, at the same path on the hosts that reach it. */
export const SHARED_POOL = 'default';
/** A host's own pool, where template bases are copied and its bound desktops' disks live. */
export const HOST_OWN_POOL = 'local';

type StorageRow = typeof schema.storage.$inferSelect;
type Ctx = Pick<AppContext, 'db' | 'engine' | 'jobs' | 'log'>;
type BaseCopyParams = {
  hypervisor_id: string;
  pool: string;
  /** the volume's name on the host */
  name: string;
  /** the base's file here */
  file: string;
  /** the base is itself an overlay: its own base's path on the host */
  backing: { path: string; format: string } | null;
  bytes_done: number;
  bytes_total: number;
};

/** The host whose own pool holds these disks (the first one's), or null when they are in the storage folder. */
export const diskHostOf = (disks: Pick<StorageRow, 'hypervisorId'>[]): string | null => disks.find((d) => d.hypervisorId)?.hypervisorId ?? null;

/** Deletes a disk's file where it lives (this machine's storage folder, or its host's pool); a missing one is fine. */
export async function removeDiskFile(ctx: Pick<AppContext, 'engine'>, disk: Pick<StorageRow, 'path' | 'hypervisorId'>): Promise<void> {
  if (disk.hypervisorId) await ctx.engine.hostDisks.remove(disk.hypervisorId, disk.path);
  else await ctx.engine.disks.remove(disk.path);
}

/** Grows a disk where it lives (this machine's qemu-img, or its host's through libvirt); shrinking is refused. */
export async function growDisk(ctx: Pick<AppContext, 'engine'>, disk: Pick<StorageRow, 'path' | 'hypervisorId'>, newSizeBytes: number): Promise<{ virtualSize: number; actualSize: number }> {
  if (disk.hypervisorId) return ctx.engine.hostDisks.grow(disk.hypervisorId, disk.path, newSizeBytes);
  return ctx.engine.disks.grow(disk.path, newSizeBytes);
}

/** Whether a disk's file is where its record says. */
export async function diskFilePresent(ctx: Pick<AppContext, 'engine'>, disk: Pick<StorageRow, 'path' | 'hypervisorId'>): Promise<boolean> {
  if (!disk.hypervisorId) return ctx.engine.disks.exists(disk.path);
  // A host not answering now says nothing of its file: placement refuses the start, a retry keeps the desktop as it is.
  return ctx.engine.hostDisks.exists(disk.hypervisorId, HOST_OWN_POOL, disk.path).catch(() => true);
}

/** Operations that still run only on this machine's files (a template from a desktop)
 *  refuse a disk on a host's own pool with a clear code, rather than a wrong local operation. */
export function assertDisksHere(disks: Pick<StorageRow, 'hypervisorId'>[], action: string): void {
  const host = diskHostOf(disks);
  if (host) throw conflict('storage_on_hypervisor', `The disk lives on a hypervisor's own storage: ${action} is not available for it yet`, { action });
}

export function createHostPools(ctx: Ctx) {
  const { db } = ctx;
  /** copies under way here, one per host, pool and volume: a second start waits for the same copy */
  const copying = new Map<string, Promise<string>>();

  ctx.jobs.register({
    kind: BASE_COPY_JOB,
    // A copy cut by a restart is made again by the next start that needs it.
    resumable: false,
    async run(jc) {
      const p = jc.job.params as BaseCopyParams;
      await ctx.engine.hostDisks.upload(p.hypervisor_id, p.pool, p.name, p.file, p.backing, {
        signal: jc.signal,
        onProgress: ({ done, total }) =>
          void jc.progress(total > 0 ? (done * 100) / total : 100, { bytes_done: done, bytes_total: total }).catch((err) => ctx.log.warn({ err }, 'base copy progress not stored')),
      });
    },
  });

  /** The base `file` in the host's own pool (its path there): reused when a volume of its name and size is there, else copied by a job. */
  function ensureBase(hostId: string, base: { file: string; size: number; backing: BaseCopyParams['backing']; storageId: string; userId: string }): Promise<string> {
    const name = basename(base.file);
    const key = `${hostId}\0${name}`;
    const under = copying.get(key);
    if (under) return under;
    const work = (async () => {
      const there = await ctx.engine.hostDisks.volume(hostId, HOST_OWN_POOL, name);
      if (there && there.physical === base.size) return there.path;
      const params: BaseCopyParams = { hypervisor_id: hostId, pool: HOST_OWN_POOL, name, file: base.file, backing: base.backing, bytes_done: 0, bytes_total: base.size };
      const { job, done } = await ctx.jobs.enqueue(BASE_COPY_JOB, { userId: base.userId, targetId: base.storageId, params });
      const outcome = await done;
      if (outcome !== 'done') {
        const [row] = await db.select({ error: schema.jobs.error }).from(schema.jobs).where(eq(schema.jobs.id, job.id));
        throw new EngineError('start-failed', 'the template was not copied to the hypervisor', row?.error ?? outcome);
      }
      const copied = await ctx.engine.hostDisks.volume(hostId, HOST_OWN_POOL, name);
      if (!copied) throw new EngineError('start-failed', 'the template copied to the hypervisor is gone');
      return copied.path;
    })().finally(() => copying.delete(key));
    copying.set(key, work);
    return work;
  }

  /**
   * Before a start on `hostId`: when the host does not reach the storage folder, the desktop's
   * disks go to its own pool (bases copied once per host, the desktop's disk pointed at them) and
   * are recorded there. Answers whether any disk moved (its path in the machine spec changed).
   */
  async function bringDisks(hostId: string, owner: string, disks: StorageRow[]): Promise<boolean> {
    if (hostId === LOCAL_HYPERVISOR || disks.every((d) => d.hypervisorId === hostId)) return false;
    const status = await ctx.engine.hosts.status(hostId);
    if (status?.pools.some((p) => p.name === SHARED_POOL)) return false;
    if (!status?.pools.some((p) => p.name === HOST_OWN_POOL)) throw new EngineError('start-failed', `the hypervisor has neither the shared pool nor a pool named ${HOST_OWN_POOL}`);
    let moved = false;
    for (const d of disks) {
      if (d.hypervisorId === hostId) continue;
      if (d.hypervisorId) throw new EngineError('start-failed', 'the disk lives on another hypervisor');
      const top = await ctx.engine.disks.info(d.path, { chain: true });
      let backing: BaseCopyParams['backing'] = null;
      // Bottom up: each base on the host before the layer that points at it.
      for (const layer of (top.chain ?? [top]).slice(1).reverse()) {
        const facts = await ctx.engine.disks.fileFacts(layer.path);
        if (!facts) throw new EngineError('start-failed', 'a base of the desktop disk is missing');
        const [row] = await db.select({ id: schema.storage.id, userId: schema.storage.userId }).from(schema.storage).where(eq(schema.storage.path, layer.path));
        const path = await ensureBase(hostId, { file: layer.path, size: facts.size, backing, storageId: row?.id ?? d.id, userId: row?.userId ?? owner });
        backing = { path, format: layer.format };
      }
      const vol = await ctx.engine.hostDisks.upload(hostId, HOST_OWN_POOL, basename(d.path), d.path, backing);
      await db.update(schema.storage).set({ path: vol.path, hypervisorId: hostId }).where(eq(schema.storage.id, d.id));
      await ctx.engine.disks.remove(d.path).catch((err) => ctx.log.warn({ err, storage: d.id }, 'disk moved to its hypervisor; its old file not removed'));
      ctx.log.info({ storage: d.id, hypervisor: hostId }, 'desktop disk moved to its hypervisor');
      moved = true;
    }
    return moved;
  }

  return { bringDisks };
}
export type HostPools = ReturnType<typeof createHostPools>;
