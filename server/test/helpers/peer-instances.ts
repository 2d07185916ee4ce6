// Two server processes of one installation on one PostgreSQL database, as two app instances in the
// test process (each its own pool, engine, socket.io server and peers), sharing one storage folder as
// processes of one installation do: for tests of what crosses processes (server/test/processes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config';
import { buildApp, createContext } from '../../src/app';
import type { AppContext } from '../../src/context';
import { openDatabase, type Database } from '../../src/db';
import { createLocalEngine, type Engine } from '../../src/engine';
import { ensureDemoGuest } from '../../src/engine/guest-image';
import { seedDemoDesktops } from '../../src/seed/demo-desktops';
import { seed } from '../../src/seed/seed';
import { createScratchDatabase } from './db';
import { DEMO_PASSWORD, endEngine, testImagesDir, type TestServer } from './server';

export type PeerInstance = { server: TestServer; database: Database; engine: Engine };

/**
 * A scratch database seeded with the demo organisation, and instances A and B on it, listening on
 * loopback. `config`: more settings for both; `prepare`: runs on each context before its app is built.
 */
export async function startPeerInstances(opts: { tmpPrefix: string; config?: Record<string, string>; prepare?: (ctx: AppContext) => void }) {
  const scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL!, 'vdi_test');
  const dataDir = mkdtempSync(join(tmpdir(), opts.tmpPrefix));
  const started: PeerInstance[] = [];
  const start = async (engine: Engine, serverId: string): Promise<PeerInstance> => {
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DEMO_PASSWORD,
      WEB_DIST: join(dataDir, 'no-web'),
      RDP_GATEWAY_PORT: '0',
      SERVER_ID: serverId,
      ...opts.config,
    });
    const database = await openDatabase({ url: scratch.url, name: config.serverId });
    const ctx = createContext(config, database, engine);
    opts.prepare?.(ctx);
    const app: FastifyInstance = await buildApp(ctx);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const instance = { server: { url: `http://127.0.0.1:${port}`, app, ctx, config } as TestServer, database, engine };
    started.push(instance);
    return instance;
  };
  const close = async () => {
    for (const i of started) {
      await i.server.app.close();
      await endEngine(i.engine);
      await i.database.close();
    }
    await scratch.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const engineA = await createLocalEngine({ dataDir, accel: 'auto' });
    const seeding = await openDatabase({ url: scratch.url });
    try {
      await seed(seeding.db, { demo: true, demoPassword: DEMO_PASSWORD });
      await seedDemoDesktops(seeding.db, engineA, await ensureDemoGuest(testImagesDir()));
    } finally {
      await seeding.close();
    }
    const a = await start(engineA, 'A');
    const b = await start(await createLocalEngine({ dataDir, accel: 'auto' }), 'B');
    return { a, b, scratch, dataDir, close };
  } catch (err) {
    await close();
    throw err;
  }
}
