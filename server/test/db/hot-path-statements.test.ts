import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { poolOfDb, schema, type Database } from '../../src/db';
import { seed } from '../../src/seed/seed';
import { createLoginLimits } from '../../src/auth/throttle';
import { issueViewerToken } from '../../src/modules/viewers/tokens';
import { StartQueue } from '../../src/engine/start-queue';
import { runningAround } from '../../src/modules/quotas/usage';
import { openTestDatabase } from '../helpers/db';
import { countQueries } from '../helpers/query-count';

// What a class of thirty does at once, statement by statement: on PostgreSQL every statement waits for one of the
// process's connections (DATABASE_POOL_SIZE), so a statement less per sign-in or per viewer is a wait less for all.

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
  await seed(database.db, { demo: false });
});
afterAll(async () => {
  await database?.close();
});

const on = (queries: string[], table: string) => queries.filter((q) => q.includes(`"${table}"`));

describe('statements on the hot paths', () => {
  it('a sign-in reads its three limits (address, address and name, name) in one statement', async () => {
    const limits = createLoginLimits(database.db, { addressFailuresPerHour: 30 });
    const { result, queries } = await countQueries(database.db, () => limits.attempt('192.0.2.7', 'someone', async () => true));
    expect(result).toBe(true);
    const throttle = on(queries, 'login_throttle');
    expect(throttle.filter((q) => q.startsWith('select'))).toHaveLength(1);
    // (and the right password clears its own (address, name) bucket)
    expect(throttle.filter((q) => q.startsWith('delete'))).toHaveLength(1);
    expect(throttle).toHaveLength(2);
  });

  it('a sign-in still refuses a blocked address with the one read', async () => {
    const limits = createLoginLimits(database.db, { addressFailuresPerHour: 30 });
    await database.db.insert(schema.loginThrottle).values({ key: limits.keys('192.0.2.8', 'x').address, failures: 30, blocks: 1, blockedUntil: new Date(Date.now() + 60_000) });
    await expect(limits.attempt('192.0.2.8', 'someone', async () => true)).rejects.toMatchObject({ code: 'login_too_many_attempts' });
  });

  it('thirty viewer tickets at once delete the expired tokens once, not thirty times', async () => {
    const [admin] = await database.db.select().from(schema.users).limit(1);
    await database.db.insert(schema.domains).values({
      id: 'hot-path-desktop', kind: 'desktop', name: 'hot path', userId: admin!.id, categoryId: admin!.categoryId, groupId: admin!.groupId, status: 'Started',
      hardware: {} as never, guestProperties: {} as never, image: {} as never,
    });
    await database.db.insert(schema.viewerTokens).values({ tokenHash: 'expired', desktopId: 'hot-path-desktop', userId: admin!.id, protocol: 'vnc', expiresAt: new Date(Date.now() - 1000) });
    const { queries } = await countQueries(database.db, () => Promise.all(Array.from({ length: 30 }, () => issueViewerToken(database.db, 'hot-path-desktop', admin!.id, 'vnc'))));
    expect(on(queries, 'viewer_tokens').filter((q) => q.startsWith('insert'))).toHaveLength(30);
    expect(on(queries, 'viewer_tokens').filter((q) => q.startsWith('delete'))).toHaveLength(1);
    // The expired one went with the first ticket of this database.
    expect(await database.db.select().from(schema.viewerTokens).where(eq(schema.viewerTokens.tokenHash, 'expired'))).toEqual([]);
  });

  it('a start is queued and taken in two statements, with nobody told of places that did not change', async () => {
    const [admin] = await database.db.select().from(schema.users).limit(1);
    await database.db.insert(schema.domains).values({
      id: 'hot-path-start', kind: 'desktop', name: 'hot path start', userId: admin!.id, categoryId: admin!.categoryId, groupId: admin!.groupId, status: 'Starting',
      hardware: {} as never, guestProperties: {} as never, image: {} as never,
    });
    const ran: string[] = [];
    const queue = new StartQueue({ concurrency: 2 });
    const changed: string[][] = [];
    queue.on('changed', (_lane, left) => changed.push(left));
    queue.open({
      db: database.db, log: { warn: () => {}, error: () => {} }, shared: false,
      publish: async () => {}, subscribe: () => () => {}, canRun: () => true,
      run: async (s) => void ran.push(`${s.desktopId}${s.fresh ? ' fresh' : ''}`), orphaned: async () => {},
    });
    queue.start(null);
    try {
      const { queries } = await countQueries(database.db, () => queue.enqueue('hot-path-start'));
      // (the insert, then the lane's lock and its pass as one call, a transaction of six statements before; the run's
      // own delete of its finished entry comes after)
      const before = queries.filter((q) => !q.startsWith('delete'));
      expect(before).toHaveLength(2);
      expect(before[1]).toContain('start_queue_take(');
        await queue.idle();
      expect(ran).toEqual(['hot-path-start fresh']);
      expect(changed).toEqual([]);
    } finally {
      await queue.close();
    }
  });

  it('the running desktops a start weighs are read by their state, not by a pass over every desktop', async () => {
    const [admin] = await database.db.select().from(schema.users).limit(1);
    await database.db.insert(schema.domains).values(
      Array.from({ length: 400 }, (_, i) => ({
        id: `at-rest-${i}`, kind: 'desktop' as const, name: `at rest ${i}`, userId: admin!.id, categoryId: admin!.categoryId, groupId: admin!.groupId, status: 'Stopped',
        hardware: { vcpus: 1, memoryMb: 1024 } as never, guestProperties: {} as never, image: {} as never,
      })),
    );
    await database.db.execute(sql`analyze domains`);
    // The statement as sent, with its values: explained as it runs.
    const pool = poolOfDb(database.db);
    const query = pool.query;
    const sent: { text: string; values?: unknown[] }[] = [];
    pool.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0] as string | { text: string; values?: unknown[] };
      sent.push({ text: typeof q === 'string' ? q : q.text, values: (typeof q === 'string' ? undefined : q.values) ?? (args[1] as unknown[]) });
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pool.query;
    try {
      await runningAround(database.db, admin!);
    } finally {
      pool.query = query;
    }
    const plan = await pool.query(`explain ${sent[0]!.text}`, sent[0]!.values);
    expect(JSON.stringify((plan as unknown as { rows: unknown[] }).rows)).toContain('domains_status_idx');
  });
});
