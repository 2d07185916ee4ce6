import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createMetrics } from '../../src/metrics';
import pino from 'pino';
import type { AppContext } from '../../src/context';
import { schema, type Database } from '../../src/db';
import { seed } from '../../src/seed/seed';
import { forgetViewers, setViewerTimes, stopViewerHeartbeat, viewerOpened, viewerState } from '../../src/modules/viewers/activity';
import { openTestDatabase } from '../helpers/db';
import { until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

// The shared count of open viewers (modules/viewers/activity.ts): open, closed, and a dead
// process's connection that stops counting once its heartbeat is older than the bound.

let database: Database;
let ctx: AppContext;
const c = schema.viewerConnections;

async function desktop(id: string) {
  const [admin] = await database.db.select().from(schema.users).limit(1);
  await database.db.insert(schema.domains).values({
    id, kind: 'desktop', name: id, userId: admin!.id, categoryId: admin!.categoryId, groupId: admin!.groupId, status: 'Started',
    hardware: {} as never, guestProperties: {} as never, image: {} as never,
  });
  return id;
}

beforeAll(async () => {
  database = await openTestDatabase();
  await seed(database.db, { demo: false });
  ctx = { db: database.db, log: pino({ level: 'silent' }), metrics: createMetrics({ server: 'test' }) } as unknown as AppContext;
  setViewerTimes(ctx, { heartbeatMs: 100, staleMs: scaled(1_000) });
});
afterAll(async () => {
  if (ctx) stopViewerHeartbeat(ctx);
  await database?.close();
});

describe('viewers open across processes', () => {
  it('counts open viewers; the last close is what counts', async () => {
    const id = await desktop('va-open');
    expect(await viewerState(ctx, id)).toEqual({ open: 0, lastClosed: undefined });
    const first = await viewerOpened(ctx, id);
    const second = await viewerOpened(ctx, id);
    expect((await viewerState(ctx, id)).open).toBe(2);
    await first(1_000);
    expect(await viewerState(ctx, id)).toEqual({ open: 1, lastClosed: 1_000 });
    await first(5_000); // a second close of one viewer changes nothing
    await second(2_000);
    expect(await viewerState(ctx, id)).toEqual({ open: 0, lastClosed: 2_000 });
    // Only the latest close is kept.
    expect(await database.db.select().from(c).where(eq(c.desktopId, id))).toHaveLength(1);
    await forgetViewers(ctx, id);
    expect(await viewerState(ctx, id)).toEqual({ open: 0, lastClosed: undefined });
  });

  it('an open viewer is kept fresh by its process; one not refreshed for the bound stops counting, from its last refresh', async () => {
    const id = await desktop('va-stale');
    const close = await viewerOpened(ctx, id);
    const [row] = await database.db.select().from(c).where(eq(c.desktopId, id));
    await until('refreshed past the bound', async () => {
      const [now] = await database.db.select().from(c).where(eq(c.desktopId, id));
      return now!.seenAt.getTime() - row!.openedAt.getTime() > scaled(1_000);
    }, 10_000);
    expect((await viewerState(ctx, id)).open).toBe(1);
    // As a dead process's connection: its last refresh older than the bound.
    const seen = new Date(Date.now() - scaled(1_000) - 1_000);
    await close(); // (this process stops refreshing it)
    await database.db.update(c).set({ closedAt: null, seenAt: seen }).where(eq(c.desktopId, id));
    expect(await viewerState(ctx, id)).toEqual({ open: 0, lastClosed: seen.getTime() });
  });

  it('deleting the desktop deletes its viewers', async () => {
    const id = await desktop('va-gone');
    await viewerOpened(ctx, id);
    await database.db.delete(schema.domains).where(eq(schema.domains.id, id));
    expect(await database.db.select().from(c).where(eq(c.desktopId, id))).toEqual([]);
  });
});
