import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import { loadConfig } from '../../src/config';
import { buildApp, createContext } from '../../src/app';
import { openDatabase, schema, type Database } from '../../src/db';
import { createLocalEngine, type Engine } from '../../src/engine';
import { seed } from '../../src/seed/seed';
import { seedDemoDesktops } from '../../src/seed/demo-desktops';
import { ensureDemoGuest } from '../../src/engine/guest-image';
import type { AppContext } from '../../src/context';
import type { DesktopLifecycle } from '../../src/modules/desktops/lifecycle';
import { sweepIdleTemporaryDesktops } from '../../src/modules/desktops/temporary-sweep';
import { setViewerTimes, stopViewerHeartbeat, viewerOpened, viewerState } from '../../src/modules/viewers/activity';
import { createScratchDatabase } from '../helpers/db';
import { DEMO_PASSWORD, endEngine, testImagesDir } from '../helpers/server';
import { until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

// Two server processes on one PostgreSQL database, as two app instances in this test process: a
// viewer open through A keeps its desktop from B's temporary-desktop sweep and idle rule; once A
// is gone without closing it (its database connection closed under it), it stops counting after
// the bound, from A's last heartbeat (modules/viewers/activity.ts, decision 0018).

type Instance = { app: FastifyInstance; ctx: AppContext; database: Database; engine: Engine };
let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let dataDir: string;
let a: Instance;
let b: Instance;
const times = { heartbeatMs: 100, staleMs: scaled(1_000) };

async function startInstance(url: string, engine: Engine): Promise<Instance> {
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', DEMO_PASSWORD, WEB_DIST: join(dataDir, 'no-web'), RDP_GATEWAY_PORT: '0' });
  const database = await openDatabase({ url });
  const ctx = createContext(config, database, engine);
  setViewerTimes(ctx, times);
  const app = await buildApp(ctx);
  return { app, ctx, database, engine };
}

beforeAll(async () => {
  scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL!, 'vdi_test');
  dataDir = mkdtempSync(join(tmpdir(), 'i26viewers-'));
  const engineA = await createLocalEngine({ dataDir, accel: 'auto' });
  const seeding = await openDatabase({ url: scratch.url });
  try {
    await seed(seeding.db, { demo: true, demoPassword: DEMO_PASSWORD });
    await seedDemoDesktops(seeding.db, engineA, await ensureDemoGuest(testImagesDir()));
  } finally {
    await seeding.close();
  }
  a = await startInstance(scratch.url, engineA);
  b = await startInstance(scratch.url, await createLocalEngine({ dataDir, accel: 'auto' }));
}, scaled(120_000));

afterAll(async () => {
  for (const i of [a, b]) {
    if (!i) continue;
    await i.app.close();
    await endEngine(i.engine);
    await i.database.close();
  }
  await scratch?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
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
    const aDb = await openDatabase({ url: scratch.url });
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
