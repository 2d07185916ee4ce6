import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema, type Database } from '../../src/db';
import { seed } from '../../src/seed/seed';
import { createLoginLimits } from '../../src/auth/throttle';
import { issueViewerToken } from '../../src/modules/viewers/tokens';
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
});
