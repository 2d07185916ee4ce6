import { describe, expect, it } from 'vitest';
import { StartCancelledError, StartQueue, type QueuePositions } from './start-queue';

/** A start function the test finishes by hand. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('StartQueue', () => {
  it('keeps a lane per host: a start waits only for starts on its own host, its position counted there', async () => {
    const q = new StartQueue<string>({ concurrency: 1 });
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const started: string[] = [];
    const start = (id: string, host?: string) =>
      q.enqueue(
        id,
        async () => {
          started.push(id);
          const g = deferred();
          gates.set(id, g);
          await g.promise;
          return id;
        },
        host,
      );
    const results = [start('a1', 'A'), start('a2', 'A'), start('b1', 'B'), start('l1'), start('b2', 'B')];
    await tick();
    expect(started).toEqual(['a1', 'b1', 'l1']);
    expect(q.positions().waiting).toEqual([{ desktopId: 'a2', position: 1 }, { desktopId: 'b2', position: 1 }]);
    expect(q.positions('local')).toEqual({ running: ['l1'], waiting: [] });
    expect(q.positions('B')).toEqual({ running: ['b1'], waiting: [{ desktopId: 'b2', position: 1 }] });
    gates.get('b1')!.resolve();
    await tick();
    expect(started).toEqual(['a1', 'b1', 'l1', 'b2']);
    expect(q.position('a2')).toBe(1);
    for (const id of ['a1', 'l1', 'b2']) gates.get(id)!.resolve();
    await tick();
    gates.get('a2')!.resolve();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'b1', 'l1', 'b2']);
  });

  it('runs at most N starts at once, in FIFO order', async () => {
    const q = new StartQueue<string>({ concurrency: 2 });
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const started: string[] = [];
    const start = (id: string) =>
      q.enqueue(id, async () => {
        started.push(id);
        const g = deferred();
        gates.set(id, g);
        await g.promise;
        return `${id}-up`;
      });
    const results = ['a', 'b', 'c', 'd'].map(start);
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect(q.positions()).toEqual({ running: ['a', 'b'], waiting: [{ desktopId: 'c', position: 1 }, { desktopId: 'd', position: 2 }] });

    gates.get('b')!.resolve();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    expect(q.position('d')).toBe(1);
    expect(q.position('a')).toBe(0);
    expect(q.position('b')).toBeNull();

    for (const id of ['a', 'c']) gates.get(id)!.resolve();
    await tick();
    gates.get('d')!.resolve();
    expect(await Promise.all(results)).toEqual(['a-up', 'b-up', 'c-up', 'd-up']);
    expect(q.positions()).toEqual({ running: [], waiting: [] });
  });

  it('emits positions on every change', async () => {
    const q = new StartQueue({ concurrency: 1 });
    const seen: QueuePositions[] = [];
    q.on('positions', (p) => seen.push(p));
    const g = deferred();
    const first = q.enqueue('a', () => g.promise);
    const second = q.enqueue('b', async () => {});
    expect(seen.at(-1)).toEqual({ running: ['a'], waiting: [{ desktopId: 'b', position: 1 }] });
    g.resolve();
    await Promise.all([first, second]);
    expect(seen.at(-1)).toEqual({ running: [], waiting: [] });
    expect(seen.some((p) => p.running.includes('b'))).toBe(true);
  });

  it('cancels a waiting entry and moves the others up', async () => {
    const q = new StartQueue({ concurrency: 1 });
    const g = deferred();
    const a = q.enqueue('a', () => g.promise);
    const b = q.enqueue('b', async () => {});
    const c = q.enqueue('c', async () => {});
    expect(q.position('c')).toBe(2);
    expect(q.cancel('b')).toBe(true);
    await expect(b).rejects.toBeInstanceOf(StartCancelledError);
    expect(q.position('c')).toBe(1);
    expect(q.cancel('a')).toBe(false); // already starting
    expect(q.cancel('zzz')).toBe(false);
    g.resolve();
    await Promise.all([a, c]);
  });

  it('a failing start rejects its caller and frees its slot', async () => {
    const q = new StartQueue({ concurrency: 1 });
    const bad = q.enqueue('bad', async () => {
      throw new Error('no disk');
    });
    const good = q.enqueue('good', async () => {});
    await expect(bad).rejects.toThrow('no disk');
    await expect(good).resolves.toBeUndefined();
  });

  it('enqueuing the same desktop twice returns the same start', async () => {
    const q = new StartQueue<number>({ concurrency: 1 });
    let calls = 0;
    const g = deferred<number>();
    const p1 = q.enqueue('a', () => {
      calls++;
      return g.promise;
    });
    const p2 = q.enqueue('a', async () => 99);
    expect(p2).toBe(p1);
    g.resolve(7);
    expect(await p2).toBe(7);
    expect(calls).toBe(1);
  });

  it('raising the concurrency starts waiting entries; defaults to the cpu count', async () => {
    const q = new StartQueue({ concurrency: 1 });
    const g = deferred();
    void q.enqueue('a', () => g.promise);
    const b = q.enqueue('b', async () => {});
    expect(q.position('b')).toBe(1);
    q.setConcurrency(2);
    await b;
    g.resolve();
    await q.idle();
    expect(new StartQueue().concurrency).toBeGreaterThanOrEqual(1);
    expect(() => new StartQueue({ concurrency: 0 })).toThrow(RangeError);
  });
});
