import { describe, expect, it } from 'vitest';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import type { AdvisoryLocks, LockKey } from '../../db';
import { createHostWatch, hostWatchKey, HOST_WATCH_LOCK_CLASS } from './host-watch';

/** PostgreSQL's session advisory locks as a table shared by "processes" (reentrant for the holder). */
function lockTable() {
  const owners = new Map<string, { who: number; count: number }>();
  const name = (k: LockKey) => k.join(':');
  const lost = new Map<number, Set<() => void>>();
  const locksOf = (who: number): Pick<AdvisoryLocks, 'everyGranted' | 'tryHold' | 'release' | 'onLost'> & { tries: string[] } => {
    const tries: string[] = [];
    return {
      everyGranted: false,
      tries,
      tryHold: async (keys) =>
        keys.map((k) => {
          tries.push(name(k));
          const o = owners.get(name(k));
          if (o && o.who !== who) return false;
          owners.set(name(k), { who, count: (o?.count ?? 0) + 1 });
          return true;
        }),
      release: async (k) => {
        const o = owners.get(name(k));
        if (o?.who === who && --o.count === 0) owners.delete(name(k));
      },
      onLost: (cb) => {
        const set = lost.get(who) ?? new Set();
        set.add(cb);
        lost.set(who, set);
        return () => set.delete(cb);
      },
    };
  };
  return {
    locksOf,
    holder: (hostId: string) => owners.get(name(hostWatchKey(hostId)))?.who,
    count: (hostId: string) => owners.get(name(hostWatchKey(hostId)))?.count ?? 0,
    /** process `who` dies (or its locks' connection ends): its locks are freed */
    die(who: number, tellLost = false) {
      for (const [k, o] of owners) if (o.who === who) owners.delete(k);
      if (tellLost) for (const cb of lost.get(who) ?? []) cb();
    },
  };
}

const quiet = { warn: () => undefined, error: () => undefined };

function processOn(table: ReturnType<typeof lockTable>, who: number, stored: { ids: string[] }) {
  const taken: string[] = [];
  const dropped: string[] = [];
  const locks = table.locksOf(who);
  const watch = createHostWatch({ locks, hosts: async () => stored.ids, taken: async (id) => void taken.push(id), dropped: (id) => void dropped.push(id), log: quiet, retryMs: 60_000 });
  return { watch, taken, dropped, locks };
}

describe('one watcher per hypervisor', () => {
  it('a stable key per hypervisor id, in our own namespace', () => {
    expect(hostWatchKey('h1')).toEqual(hostWatchKey('h1'));
    expect(hostWatchKey('h1')[0]).toBe(HOST_WATCH_LOCK_CLASS);
    expect(hostWatchKey('h1')[1]).not.toBe(hostWatchKey('h2')[1]);
    expect(Number.isInteger(hostWatchKey('h1')[1]) && Math.abs(hostWatchKey('h1')[1]) < 2 ** 31).toBe(true);
  });

  it('two processes: each host is watched by exactly one, the first to try; the other writes nothing from it', async () => {
    const table = lockTable();
    const stored = { ids: ['h1', 'h2'] };
    const a = processOn(table, 1, stored);
    const b = processOn(table, 2, stored);
    expect(await a.watch.tryTake(['h1'])).toEqual(['h1']);
    expect(await b.watch.tryTake(['h1'])).toEqual([]);
    await b.watch.tick();
    await a.watch.tick();
    expect(a.watch.watches('h1')).toBe(true);
    expect(b.watch.watches('h1')).toBe(false);
    expect(b.watch.watches('h2')).toBe(true);
    expect(a.watch.watches('h2')).toBe(false);
    expect([a.taken, b.taken]).toEqual([['h1'], ['h2']]);
    // This machine's own host: every process runs its own QEMU part (unchanged).
    expect(a.watch.watches(LOCAL_HYPERVISOR) && b.watch.watches(LOCAL_HYPERVISOR)).toBe(true);
    a.watch.close();
    b.watch.close();
  });

  it("a watcher's death: another takes its hosts at its next try, and takes them up (once)", async () => {
    const table = lockTable();
    const stored = { ids: ['h1'] };
    const a = processOn(table, 1, stored);
    const b = processOn(table, 2, stored);
    await a.watch.tick();
    await b.watch.tick();
    expect(table.holder('h1')).toBe(1);
    table.die(1);
    await b.watch.tick();
    await b.watch.tick();
    expect(table.holder('h1')).toBe(2);
    expect(b.watch.watches('h1')).toBe(true);
    expect(b.taken).toEqual(['h1']);
    expect(table.count('h1')).toBe(1);
    b.watch.close();
  });

  it('a connection and the periodic try at once hold the lock once', async () => {
    const table = lockTable();
    const a = processOn(table, 1, { ids: ['h1'] });
    await Promise.all([a.watch.tryTake(['h1']), a.watch.tick(), a.watch.tryTake(['h1', 'h1'])]);
    expect(table.count('h1')).toBe(1);
    expect(a.taken).toEqual(['h1']);
    a.watch.close();
  });

  it('a removed host is let go; a lost locks connection drops every watch until they are taken again', async () => {
    const table = lockTable();
    const stored = { ids: ['h1', 'h2'] };
    const a = processOn(table, 1, stored);
    await a.watch.tick();
    stored.ids = ['h2'];
    await a.watch.tick();
    expect(a.dropped).toEqual(['h1']);
    expect(table.holder('h1')).toBeUndefined();
    expect(a.watch.watches('h1')).toBe(false);
    table.die(1, true);
    expect(a.dropped).toEqual(['h1', 'h2']);
    expect(a.watch.watches('h2')).toBe(false);
    await a.watch.tick();
    expect(a.watch.watches('h2')).toBe(true);
    a.watch.close();
  });

  it('a process that stops lets its watches go at once', async () => {
    const table = lockTable();
    const a = processOn(table, 1, { ids: ['h1'] });
    await a.watch.tick();
    a.watch.close();
    await new Promise((r) => setImmediate(r));
    expect(table.holder('h1')).toBeUndefined();
    expect(await a.watch.tryTake(['h1'])).toEqual([]);
  });

  it('one process (PGlite: every lock granted) watches every host without trying', async () => {
    const taken: string[] = [];
    const watch = createHostWatch({
      locks: { everyGranted: true, tryHold: async () => [], release: async () => undefined, onLost: () => () => undefined },
      hosts: async () => ['h1'],
      taken: async (id) => void taken.push(id),
      dropped: () => undefined,
      log: quiet,
    });
    expect(watch.watches('h1') && watch.watches('anything')).toBe(true);
    expect(await watch.tryTake(['h1'])).toEqual([]);
    expect(taken).toEqual([]);
    watch.close();
  });
});
