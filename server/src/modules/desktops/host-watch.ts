import type { Logger } from 'pino';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { LOCK_CLASSES, lockKey, type AdvisoryLocks, type LockKey } from '../../db';

/*
 * Each remote hypervisor is watched by one live server process at a time: the one holding its advisory
 * lock (`Database.locks`, a session lock: freed when the process dies). Every process keeps a
 * connection to every host (any of them may be asked to start or stop a desktop there), but only the
 * watcher acts on what the host tells: its machines' events, its (re)connection (reconciled), its loss
 * (desktops `Unknown`, marked down later). The others try to take the watch at each connection and
 * every HOST_WATCH_RETRY_MS, so a dead watcher's hosts are taken over within that. This machine's own
 * host is watched by the process that runs its QEMU. PGlite: one process, it watches every host.
 */

/** How often a process tries to take the watch of hosts nobody holds (a dead watcher's). */
export const HOST_WATCH_RETRY_MS = 2_000;

/** The namespace of the hypervisors' watch locks ('vdi3'). */
export const HOST_WATCH_LOCK_CLASS = LOCK_CLASSES.hostWatch;

/** A host's watch lock: stable for its id in every process (two ids sharing one are watched by one process). */
export const hostWatchKey = (hostId: string): LockKey => lockKey(HOST_WATCH_LOCK_CLASS, hostId);

export type HostWatch = ReturnType<typeof createHostWatch>;

export function createHostWatch(deps: {
  locks: Pick<AdvisoryLocks, 'everyGranted' | 'tryHold' | 'release' | 'onLost'>;
  /** The installation's remote hosts now (the stored ones). */
  hosts: () => Promise<string[]>;
  /** This process watches `hostId` from now on (its first try, or a dead watcher's taken over). */
  taken: (hostId: string) => Promise<void>;
  /** This process no longer watches `hostId` (the host removed, or the locks' connection lost). */
  dropped: (hostId: string) => void;
  log: Pick<Logger, 'warn' | 'error'>;
  retryMs?: number;
}) {
  const held = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // One try at a time: a lock is session-reentrant, so two tries of one host at once would hold it twice.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(fn, fn);
    chain = next.catch(() => undefined);
    return next;
  };

  /** Whether this process acts on `hostId`'s events, connection and loss. */
  const watches = (hostId: string) => hostId === LOCAL_HYPERVISOR || deps.locks.everyGranted || held.has(hostId);

  async function take(ids: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(ids)].filter((id) => !watches(id));
    if (closed || wanted.length === 0) return [];
    const got = await deps.locks.tryHold(wanted.map(hostWatchKey));
    const taken = wanted.filter((_, i) => got[i]);
    for (const id of taken) held.add(id);
    for (const id of taken) await deps.taken(id).catch((err) => deps.log.error({ err, hypervisor: id }, 'hypervisor watch not taken up'));
    return taken;
  }

  /** The stored hosts: the ones removed let go, the ones nobody watches taken if their lock is free. */
  const tick = () =>
    serial(async () => {
      const stored = new Set(await deps.hosts());
      for (const id of [...held]) {
        if (stored.has(id)) continue;
        held.delete(id);
        deps.dropped(id);
        await deps.locks.release(hostWatchKey(id));
      }
      return take([...stored]);
    });

  const offLost = deps.locks.onLost(() => {
    for (const id of held) deps.dropped(id);
    held.clear();
  });
  if (!deps.locks.everyGranted) {
    timer = setInterval(() => void tick().catch((err) => deps.log.warn({ err }, 'hypervisor watches not tried')), deps.retryMs ?? HOST_WATCH_RETRY_MS);
    timer.unref();
  }

  return {
    watches,
    /** Tries to take the watch of `ids` now (a host just connected); the ones taken. */
    tryTake: (ids: readonly string[]) => serial(() => take(ids)),
    tick,
    /** The hosts this process watches (PGlite: every one, none listed). */
    held: () => [...held],
    /** Stops trying; the watches are let go for another live process to take. */
    close() {
      closed = true;
      clearInterval(timer);
      offLost();
      const ids = [...held];
      held.clear();
      void serial(async () => {
        for (const id of ids) await deps.locks.release(hostWatchKey(id));
      }).catch(() => undefined);
    },
  };
}

/**
 * Who watches each host now, by SERVER_ID (the console's hypervisor view): the holder of its lock (null: none, or
 * a process started without a name); this machine's own host, this process if it runs its QEMU; PGlite: this process.
 */
export async function hostWatchers(
  ctx: { locks: Pick<AdvisoryLocks, 'everyGranted' | 'holders'>; config: { serverId: string; localHypervisor: boolean } },
  hostIds: readonly string[],
): Promise<(string | null)[]> {
  const remote = hostIds.filter((id) => id !== LOCAL_HYPERVISOR);
  const held = ctx.locks.everyGranted ? remote.map(() => ctx.config.serverId) : await ctx.locks.holders(remote.map(hostWatchKey));
  const byId = new Map(remote.map((id, i) => [id, held[i] ?? null]));
  return hostIds.map((id) => (id === LOCAL_HYPERVISOR ? (ctx.config.localHypervisor ? ctx.config.serverId : null) : (byId.get(id) ?? null)));
}
