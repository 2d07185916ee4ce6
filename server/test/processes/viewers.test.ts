import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { openDatabase, schema } from '../../src/db';
import type { AppContext } from '../../src/context';
import type { DesktopLifecycle } from '../../src/modules/desktops/lifecycle';
import { sweepIdleTemporaryDesktops } from '../../src/modules/desktops/temporary-sweep';
import { setViewerTimes, stopViewerHeartbeat, viewerOpened, viewerState } from '../../src/modules/viewers/activity';
import { startPeerInstances } from '../helpers/peer-instances';
import { until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

// Two server processes on one PostgreSQL database, as two app instances in this test process: a
// viewer open through A keeps its desktop from B's temporary-desktop sweep and idle rule; once A
// is gone without closing it (its database connection closed under it), it stops counting after
// the bound, from A's last heartbeat (modules/viewers/activity.ts, decision 0018).

let a: { ctx: AppContext };
let b: { ctx: AppContext };
let peers: Awaited<ReturnType<typeof startPeerInstances>> | undefined;
const times = { heartbeatMs: 100, staleMs: scaled(1_000) };

beforeAll(async () => {
  peers = await startPeerInstances({ tmpPrefix: 'i26viewers-', prepare: (ctx) => setViewerTimes(ctx, times) });
  a = { ctx: peers.a.server.ctx };
  b = { ctx: peers.b.server.ctx };
}, scaled(120_000));

afterAll(async () => {
  await peers?.close();
});

describe('viewers open through another process', () => {
  it("a viewer open on A keeps the temporary desktop from B's sweep; A gone, it stops counting within the bound", async () => {
    const d = schema.domains;
    const [row] = await b.ctx.db.select().from(d).where(and(eq(d.kind, 'desktop'), eq(d.name, 'Demo desktop'))).limit(1);
    const startedAt = new Date(Date.now() - 10 * 60_000);
    await b.ctx.db.update(d).set({ persistent: false, status: 'Started', startedAt, accessedAt: startedAt }).where(eq(d.id, row!.id));
    await b.ctx.settings.set('temporary_desktops', { inactivity_minutes: 5 });
    const destroyed: string[] = [];
    const lifecycle = { destroyDesktop: async (r: { id: string }) => void destroyed.push(r.id) } as unknown as DesktopLifecycle;

    // A's process dies below: its viewers are recorded through a connection of its own, closed then.
    const aDb = await openDatabase({ url: peers!.scratch.url });
    const aCtx = { ...a.ctx, db: aDb.db };
    setViewerTimes(aCtx, times);
    try {
      await viewerOpened(aCtx, row!.id);
      const [opened] = await b.ctx.db.select().from(schema.viewerConnections).where(eq(schema.viewerConnections.desktopId, row!.id));
      // Past the bound, A's heartbeat keeps it open for B.
      await until('refreshed past the bound', async () => {
        const [now] = await b.ctx.db.select().from(schema.viewerConnections).where(eq(schema.viewerConnections.desktopId, row!.id));
        return now!.seenAt.getTime() - opened!.openedAt.getTime() > times.staleMs;
      }, 10_000);
      expect((await viewerState(b.ctx, row!.id)).open).toBe(1);
      expect(await sweepIdleTemporaryDesktops(b.ctx, lifecycle)).toBe(0);
    } finally {
      await aDb.close(); // A dies: no close recorded, no heartbeat
    }
    stopViewerHeartbeat(aCtx); // (its timer, failing since, in this test process)
    const diedAt = Date.now();
    const state = await until('the viewer stops counting', async () => {
      const s = await viewerState(b.ctx, row!.id);
      return s.open === 0 && s;
    }, 10_000);
    expect(Date.now() - diedAt).toBeLessThan(times.staleMs + scaled(2_000));
    // The inactivity limit counts from A's last heartbeat.
    expect(state.lastClosed).toBeGreaterThan(diedAt - times.staleMs);
    expect(await sweepIdleTemporaryDesktops(b.ctx, lifecycle, state.lastClosed! + 4 * 60_000)).toBe(0);
    expect(await sweepIdleTemporaryDesktops(b.ctx, lifecycle, state.lastClosed! + 6 * 60_000)).toBe(1);
    expect(destroyed).toEqual([row!.id]);
  }, scaled(60_000));
});
