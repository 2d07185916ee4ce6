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
 * Each copy is recorded (`host_base_copies`) and deleted with its base (the template) and with its host.
 * A category mapped to a pool (the original's pools mapped to categories; `categories.storage_pool`, a
 * pool name hosts declare) sends its desktops' disks to that pool on the host that starts them, whether
 * or not that host also reaches the storage folder; a base the host holds already is reused in whichever
 * of its pools it is (a base is only read).
 * Before anything is copied or made there, the pool's free space must hold it all (`./room`).
 */
import { basename } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { LOCAL_HYPERVISOR, SHARED_STORAGE_POOL } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import { EngineError } from '../../engine/driver';
import { ApiError, conflict } from '../../http/errors';
import { assertRoom, type PoolFile } from './room';

/** The job that copies a template's base to a host (its progress: bytes done of the total). */
export const BASE_COPY_JOB = 'base_copy';
/** The shared pool: the installation's storage folder, at the same path on the hosts that reach it. */
export const SHARED_POOL = SHARED_STORAGE_POOL;
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

/** The pool a user's desktops' disks go to: their category's (null: the shared storage folder, `default`). */
export async function categoryPoolOf(db: Db, userId: string): Promise<string | null> {
  const [row] = await db
    .select({ pool: schema.categories.storagePool })
    .from(schema.users)
    .innerJoin(schema.categories, eq(schema.categories.id, schema.users.categoryId))
    .where(eq(schema.users.id, userId));
  return row?.pool ?? null;
}

/** The host whose own pool holds these disks (the first one's), or null when they are in the storage folder. */
export const diskHostOf = (disks: Pick<StorageRow, 'hypervisorId'>[]): string | null => disks.find((d) => d.hypervisorId)?.hypervisorId ?? null;

/**
 * Deletes a disk's file where it lives (this machine's storage folder, or its host's pool), and the
 * copies of it made on hosts as a template's base; a missing one is fine. Called once its row is gone.
 */
export async function removeDiskFile(ctx: Pick<AppContext, 'engine' | 'db' | 'log'>, disk: Pick<StorageRow, 'id' | 'path' | 'hypervisorId'>): Promise<void> {
  if (disk.hypervisorId) await ctx.engine.hostDisks.remove(disk.hypervisorId, disk.path);
  else await ctx.engine.disks.remove(disk.path);
  await removeBaseCopies(ctx, eq(schema.hostBaseCopies.storageId, disk.id));
}

/**
 * Deletes recorded base copies on their hosts (through libvirt) and their records. A copy whose host
 * does not answer keeps its record (it is still there), and the host's removal deletes it with it.
 */
export async function removeBaseCopies(ctx: Pick<AppContext, 'engine' | 'db' | 'log'>, which: ReturnType<typeof eq>): Promise<number> {
  const copies = await ctx.db.select().from(schema.hostBaseCopies).where(which);
  let removed = 0;
  for (const c of copies) {
    try {
      await ctx.engine.hostDisks.remove(c.hypervisorId, c.path);
    } catch (err) {
      ctx.log.warn({ err, storage: c.storageId, hypervisor: c.hypervisorId }, 'template base copy not removed from its hypervisor');
      continue;
    }
    await ctx.db.delete(schema.hostBaseCopies).where(and(eq(schema.hostBaseCopies.storageId, c.storageId), eq(schema.hostBaseCopies.hypervisorId, c.hypervisorId)));
    removed++;
  }
  return removed;
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
  return ctx.engine.hostDisks.exists(disk.hypervisorId, disk.path).catch(() => true);
}

/** The one host whose own pool holds all these disks, or null when all are in the storage folder;
 *  disks split between places (none are made so) are refused with a clear code. */
export function diskHostOfAll(disks: Pick<StorageRow, 'hypervisorId'>[], action: string): string | null {
  const host = diskHostOf(disks);
  if (disks.some((d) => d.hypervisorId !== host)) throw conflict('storage_on_hypervisor', `The disks live on different storage: ${action} is not available for them`, { action });
  return host;
}

/**
 * Before a template is made of a desktop's disks: the storage folder holds the template's disks (one on a
 * host's own pool is copied here whole; one here is moved, nothing copied) and every pool that gets a new
 * overlay has its reserve (`storage_pool_full` otherwise, nothing made).
 */
export async function assertRoomForTemplate(ctx: Pick<AppContext, 'engine'>, host: string | null, disks: Pick<StorageRow, 'path'>[]): Promise<void> {
  const overlays = disks.map(() => ({ bytes: 0, overlay: true }));
  const folderFree = (await ctx.engine.disks.space()).free;
  if (!host) return assertRoom(SHARED_POOL, folderFree, overlays);
  const there = await Promise.all(disks.map((d) => ctx.engine.hostDisks.at(host, d.path)));
  assertRoom(SHARED_POOL, folderFree, there.map((v) => ({ bytes: v?.physical ?? 0, overlay: false })));
  // Each new overlay goes beside its desktop's former disk, in that disk's pool there.
  const byPool = new Map<string, PoolFile[]>();
  for (const v of there) if (v) byPool.set(v.pool, [...(byPool.get(v.pool) ?? []), { bytes: 0, overlay: true }]);
  for (const [pool, files] of byPool) assertRoom(pool, await ctx.engine.hostDisks.free(host, pool), files);
}

/** One layer under a desktop disk to be on the host: the base's file here and its copy there (null: to be made). */
type BaseLayer = { file: string; size: number; format: string; storageId: string | null; userId: string; there: string | null; jobTarget: string };
/** A disk to go to the host: its bases (bottom up) and its own file. */
type DiskMove = { disk: StorageRow; bases: BaseLayer[]; ownBytes: number };
/** What a start on a host must bring there, and the pool of the host it goes to. */
type Moves = { pool: string; moves: DiskMove[] };

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

  /** Records that the host holds a copy of base `storageId` at `path`. */
  async function record(storageId: string | null, hostId: string, path: string, bytes: number) {
    if (!storageId) return;
    await db
      .insert(schema.hostBaseCopies)
      .values({ storageId, hypervisorId: hostId, path, bytes })
      .onConflictDoUpdate({ target: [schema.hostBaseCopies.storageId, schema.hostBaseCopies.hypervisorId], set: { path, bytes } });
  }

  /** The host's copy of a base (its path there), or null: the recorded one when it is still there (in
   *  whichever pool of the host: a base is only read), else a volume of the base's file name and size in
   *  `pool` (a copy made before records were kept, recorded now). */
  async function copyOn(hostId: string, pool: string, base: Pick<BaseLayer, 'file' | 'size' | 'storageId'>): Promise<string | null> {
    if (base.storageId) {
      const [rec] = await db
        .select()
        .from(schema.hostBaseCopies)
        .where(and(eq(schema.hostBaseCopies.storageId, base.storageId), eq(schema.hostBaseCopies.hypervisorId, hostId)));
      if (rec) {
        if (await ctx.engine.hostDisks.exists(hostId, rec.path)) return rec.path;
        await db.delete(schema.hostBaseCopies).where(and(eq(schema.hostBaseCopies.storageId, base.storageId), eq(schema.hostBaseCopies.hypervisorId, hostId)));
      }
    }
    const there = await ctx.engine.hostDisks.volume(hostId, pool, basename(base.file));
    if (!there || there.physical !== base.size) return null;
    await record(base.storageId, hostId, there.path, base.size);
    return there.path;
  }

  /** The base `file` on the host (its path there): the copy there, else copied into `pool` by a job and recorded. */
  function ensureBase(hostId: string, pool: string, base: BaseLayer, backing: BaseCopyParams['backing']): Promise<string> {
    const name = basename(base.file);
    const key = `${hostId}\0${name}`;
    const under = copying.get(key);
    if (under) return under;
    const work = (async () => {
      const there = await copyOn(hostId, pool, base);
      if (there) return there;
      const params: BaseCopyParams = { hypervisor_id: hostId, pool, name, file: base.file, backing, bytes_done: 0, bytes_total: base.size };
      const { job, done } = await ctx.jobs.enqueue(BASE_COPY_JOB, { userId: base.userId, targetId: base.jobTarget, params });
      const outcome = await done;
      if (outcome !== 'done') {
        const [row] = await db.select({ error: schema.jobs.error }).from(schema.jobs).where(eq(schema.jobs.id, job.id));
        throw new EngineError('start-failed', 'the template was not copied to the hypervisor', row?.error ?? outcome);
      }
      const copied = await ctx.engine.hostDisks.volume(hostId, pool, name);
      if (!copied) throw new EngineError('start-failed', 'the template copied to the hypervisor is gone');
      await record(base.storageId, hostId, copied.path, base.size);
      return copied.path;
    })().finally(() => copying.delete(key));
    copying.set(key, work);
    return work;
  }

  /**
   * What a start on `hostId` must bring there, and into which of its pools: the owner's category's pool
   * when it has one (the original's pools mapped to categories); else nothing when the host reaches the
   * storage folder (or the disks are there already), or its own pool. Each disk's bases (bottom up, with
   * the copies the host holds) and its own file. A host without the pool is refused.
   */
  async function movesTo(hostId: string, owner: string, disks: StorageRow[]): Promise<Moves> {
    const none = { pool: SHARED_POOL, moves: [] };
    if (hostId === LOCAL_HYPERVISOR || disks.every((d) => d.hypervisorId === hostId)) return none;
    const [status, wanted] = await Promise.all([ctx.engine.hosts.status(hostId), categoryPoolOf(db, owner)]);
    const has = (name: string) => status?.pools.some((p) => p.name === name) ?? false;
    if (!wanted && has(SHARED_POOL)) return none;
    const pool = wanted ?? HOST_OWN_POOL;
    if (!has(pool)) throw new EngineError('start-failed', wanted ? `the hypervisor has no pool named ${pool}` : `the hypervisor has neither the shared pool nor a pool named ${pool}`);
    const moves: DiskMove[] = [];
    for (const d of disks) {
      if (d.hypervisorId === hostId) continue;
      if (d.hypervisorId) throw new EngineError('start-failed', 'the disk lives on another hypervisor');
      const top = await ctx.engine.disks.info(d.path, { chain: true });
      const bases: BaseLayer[] = [];
      for (const layer of (top.chain ?? [top]).slice(1).reverse()) {
        const facts = await ctx.engine.disks.fileFacts(layer.path);
        if (!facts) throw new EngineError('start-failed', 'a base of the desktop disk is missing');
        const [row] = await db.select({ id: schema.storage.id, userId: schema.storage.userId }).from(schema.storage).where(eq(schema.storage.path, layer.path));
        const base = { file: layer.path, size: facts.size, format: layer.format, storageId: row?.id ?? null, userId: row?.userId ?? owner };
        bases.push({ ...base, there: await copyOn(hostId, pool, base), jobTarget: row?.id ?? d.id });
      }
      const own = await ctx.engine.disks.fileFacts(d.path);
      if (!own) throw new EngineError('start-failed', 'the desktop disk is missing');
      moves.push({ disk: d, bases, ownBytes: own.size });
    }
    return { pool, moves };
  }

  /** Refuses (`storage_pool_full`) when the host's pool cannot hold what the moves bring (each base once). */
  async function assertRoomFor(hostId: string, { pool, moves }: Moves): Promise<void> {
    if (moves.length === 0) return;
    const files: PoolFile[] = [];
    const seen = new Set<string>();
    for (const m of moves) {
      for (const b of m.bases) {
        if (b.there || seen.has(b.file)) continue;
        seen.add(b.file);
        files.push({ bytes: b.size, overlay: false });
      }
      files.push({ bytes: m.ownBytes, overlay: true });
    }
    assertRoom(pool, await ctx.engine.hostDisks.free(hostId, pool), files);
  }

  /** Before a start is queued: the host's pool has room for what it must receive (else `storage_pool_full`). */
  async function assertRoomOn(hostId: string, owner: string, disks: StorageRow[]): Promise<void> {
    await assertRoomFor(hostId, await movesTo(hostId, owner, disks));
  }

  /**
   * Before a start on `hostId`: when the owner's category has a pool, or the host does not reach the
   * storage folder, the desktop's disks go to that pool there (bases copied once per host, the desktop's
   * disk pointed at them) and are recorded there. Answers whether any disk moved (its path in the machine
   * spec changed). A pool without the room is refused before anything is copied (`storage_pool_full`).
   */
  async function bringDisks(hostId: string, owner: string, disks: StorageRow[]): Promise<boolean> {
    const brought = await movesTo(hostId, owner, disks);
    await assertRoomFor(hostId, brought);
    const { pool, moves } = brought;
    for (const { disk: d, bases } of moves) {
      let backing: BaseCopyParams['backing'] = null;
      // Bottom up: each base on the host before the layer that points at it.
      for (const layer of bases) {
        const path = await ensureBase(hostId, pool, layer, backing);
        backing = { path, format: layer.format };
      }
      const vol = await ctx.engine.hostDisks.upload(hostId, pool, basename(d.path), d.path, backing);
      await db.update(schema.storage).set({ path: vol.path, hypervisorId: hostId }).where(eq(schema.storage.id, d.id));
      await ctx.engine.disks.remove(d.path).catch((err) => ctx.log.warn({ err, storage: d.id }, 'disk moved to its hypervisor; its old file not removed'));
      ctx.log.info({ storage: d.id, hypervisor: hostId, pool }, 'desktop disk moved to its hypervisor');
    }
    return moves.length > 0;
  }

  return { bringDisks, assertRoomOn };
}
export type HostPools = ReturnType<typeof createHostPools>;

/** A failed start's reason for the owner's card: a catalogue code the refusal carries, else the generic one. */
export const startFailureCode = (err: unknown): string | null => (err instanceof ApiError && err.code === 'storage_pool_full' ? err.code : null);
