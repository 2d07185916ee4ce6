import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema, type Database } from '../db';
import { seed } from '../seed/seed';
import { openTestDatabase } from '../../test/helpers/db';
import { until } from '../../test/helpers/wait';
import { StartQueue, type QueuedStart, type StartQueueParts } from './start-queue';

/** A start the test finishes by hand. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const waitFor = (fn: () => boolean | Promise<boolean>) => until('the queue', async () => await fn(), 10_000);

let database: Database;
const IDS = ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'l1'];

beforeAll(async () => {
  database = await openTestDatabase();
  await seed(database.db, { demo: true, demoPassword: 'start-queue-pass' });
  const [user] = await database.db.select().from(schema.users).where(eq(schema.users.username, 'user'));
  await database.db.insert(schema.domains).values(
    IDS.map((id) => ({
      id,
      kind: 'desktop' as const,
      name: id,
      userId: user!.id,
      categoryId: user!.categoryId,
      groupId: user!.groupId,
      status: 'Starting',
      hardware: {} as never,
      guestProperties: {} as never,
      image: {} as never,
    })),
  );
});
afterAll(() => database?.close());
beforeEach(async () => {
  await database.db.delete(schema.startQueue);
});
// (A queue left open by a failed test would take the next test's entries as a second process.)
const opened: StartQueue[] = [];
afterEach(async () => {
  for (const q of opened.splice(0)) await q.close();
});

/** A queue on the test database whose starts wait for the test (`gates`), as the lifecycle would run them. */
function queueOf(concurrency: number, more: Partial<StartQueueParts> = {}) {
  const q = new StartQueue({ concurrency });
  opened.push(q);
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const started: string[] = [];
  const changes: { lane: string; left: string[] }[] = [];
  q.on('changed', (lane, left) => changes.push({ lane, left }));
  q.open({
    db: database.db,
    log: { warn: () => {}, error: () => {} },
    shared: false,
    publish: async () => {},
    subscribe: () => () => {},
    canRun: () => true,
    run: async ({ desktopId }: QueuedStart) => {
      started.push(desktopId);
      const g = deferred();
      gates.set(desktopId, g);
      await g.promise;
    },
    orphaned: async () => {},
    ...more,
  });
  q.start(null);
  /** Lets the start of `id` end, and waits until its slot went to the next (a pass after the entry left). */
  const finish = async (id: string) => {
    await waitFor(() => gates.has(id));
    const [entry] = await database.db.select().from(schema.startQueue).where(eq(schema.startQueue.desktopId, id));
    gates.get(id)!.resolve();
    await waitFor(async () => !(await q.desktops()).has(id));
    await q.pump(entry!.lane);
  };
  return { q, gates, started, changes, finish };
}

describe('StartQueue (the start_queue table)', () => {
  it('keeps a lane per host: a start waits only for starts on its own host, its position counted there', async () => {
    const { q, started, finish } = queueOf(1);
    for (const [id, host] of [['a1', 'A'], ['a2', 'A'], ['b1', 'B'], ['l1', undefined], ['b2', 'B']] as const) await q.enqueue(id, host);
    expect(started).toEqual(['a1', 'b1', 'l1']);
    expect((await q.positions()).waiting).toEqual([{ desktopId: 'a2', position: 1 }, { desktopId: 'b2', position: 1 }]);
    expect(await q.positions('local')).toEqual({ running: ['l1'], waiting: [] });
    expect(await q.positions('B')).toEqual({ running: ['b1'], waiting: [{ desktopId: 'b2', position: 1 }] });
    expect(await q.inFlight('B')).toBe(2);
    await finish('b1');
    expect(started).toEqual(['a1', 'b1', 'l1', 'b2']);
    expect(await q.position('a2')).toBe(1);
    for (const id of ['a1', 'l1', 'b2', 'a2']) await finish(id);
    expect(await q.positions()).toEqual({ running: [], waiting: [] });
    await q.close();
  });

  it('runs at most N starts at once, in FIFO order, and says who left the wait', async () => {
    const { q, started, changes, finish } = queueOf(2);
    for (const id of ['a1', 'a2', 'a3', 'a4']) await q.enqueue(id, 'A');
    expect(started).toEqual(['a1', 'a2']);
    expect(await q.positions()).toEqual({ running: ['a1', 'a2'], waiting: [{ desktopId: 'a3', position: 1 }, { desktopId: 'a4', position: 2 }] });
    // Taken at their own enqueue: they never waited, so never "left".
    expect(changes.flatMap((c) => c.left)).toEqual([]);

    await finish('a2');
    expect(started).toEqual(['a1', 'a2', 'a3']);
    expect(changes.flatMap((c) => c.left)).toEqual(['a3']);
    expect(await q.position('a4')).toBe(1);
    expect(await q.position('a1')).toBe(0);
    expect(await q.position('a2')).toBeNull();
    for (const id of ['a1', 'a3', 'a4']) await finish(id);
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4']);
    await q.close();
  });

  it('cancels a waiting entry and moves the others up; a start under way is not cancelled', async () => {
    const { q, changes, finish } = queueOf(1);
    for (const id of ['a1', 'a2', 'a3']) await q.enqueue(id, 'A');
    expect(await q.position('a3')).toBe(2);
    expect(await q.cancel('a2')).toBe(true);
    expect(changes.at(-1)).toEqual({ lane: 'A', left: ['a2'] });
    expect(await q.position('a3')).toBe(1);
    expect(await q.cancel('a1')).toBe(false); // already starting
    expect(await q.cancel('zzz')).toBe(false);
    for (const id of ['a1', 'a3']) await finish(id);
    await q.close();
  });

  it('a failing start frees its slot; a desktop queued twice is one entry', async () => {
    const { q, started, gates, finish } = queueOf(1);
    await q.enqueue('a1', 'A');
    await q.enqueue('a2', 'A');
    await q.enqueue('a2', 'A');
    expect((await q.positions('A')).waiting).toEqual([{ desktopId: 'a2', position: 1 }]);
    gates.get('a1')!.reject(new Error('no disk'));
    await waitFor(() => started.includes('a2'));
    await finish('a2');
    expect(started).toEqual(['a1', 'a2']);
    await q.close();
  });

  it('clears the entry of a runner that is gone (an earlier run) and takes the next', async () => {
    const orphans: QueuedStart[] = [];
    await database.db.insert(schema.startQueue).values({ desktopId: 'a1', lane: 'A', startedAt: new Date(), runnerPid: 1, runnerSince: new Date(0) });
    await database.db.insert(schema.startQueue).values({ desktopId: 'a2', lane: 'A' });
    const { q, started, finish } = queueOf(1, { orphaned: async (s) => void orphans.push(s) });
    await waitFor(() => started.includes('a2'));
    expect(orphans).toEqual([{ desktopId: 'a1', lane: 'A' }]);
    await finish('a2');
    await q.close();
  });

  it('raising the concurrency takes waiting entries; defaults to the cpu count', async () => {
    const { q, started, finish } = queueOf(1);
    await q.enqueue('a1', 'A');
    await q.enqueue('a2', 'A');
    expect(await q.position('a2')).toBe(1);
    q.setConcurrency(2);
    await waitFor(() => started.includes('a2'));
    for (const id of ['a1', 'a2']) await finish(id);
    await q.idle();
    await q.close();
    expect(new StartQueue().concurrency).toBeGreaterThanOrEqual(1);
    expect(() => new StartQueue({ concurrency: 0 })).toThrow(RangeError);
  });
});
