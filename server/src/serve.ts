import { join } from 'node:path';
import { loadConfig } from './config';
import { openDatabase, SchemaTooNewError } from './db';
import { DataDirLockedError } from './db/lock';
import { buildApp, createContext } from './app';
import { seed, type SeedResult } from './seed/seed';
import { seedDemoDesktops } from './seed/demo-desktops';
import { createLocalEngine } from './engine';
import { ensureDemoGuest, ensureRdpGuest } from './engine/guest-image';
import { seedRdpTemplate } from './seed/rdp-template';
import { createStopper, SHUTDOWN_BOUND_MS } from './shutdown';
import { createLog } from './http/log';
import { welcomeText } from './seed/welcome';

function printWelcome(url: string, result: SeedResult, demoPasswordSet: boolean) {
  process.stdout.write(welcomeText(url, result, demoPasswordSet));
}

async function main() {
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dir: config.databaseUrl ? undefined : join(config.dataDir, 'db'), eagerCompile: config.embeddedEagerCompile, name: config.serverId, poolSize: config.databasePoolSize });
  const engine = await createLocalEngine({
    dataDir: config.dataDir,
    accel: config.accel,
    concurrency: config.startConcurrency,
    network: { ...config.guestNetwork, log: createLog(config.logLevel) },
    localHypervisor: config.localHypervisor,
    // On PostgreSQL the guest network is set up by the process that holds this machine's pieces
    // (modules/pieces: taken in buildApp when no other process runs them).
    networkNow: !config.databaseUrl,
  });
  // Several processes starting at once on one PostgreSQL seed it once (the others wait, then find it seeded).
  const seeded = await database.exclusive(async () => {
    const result = await seed(database.db, { demo: config.seedDemo, demoPassword: config.demoPassword });
    if (config.seedDemo) {
      // The demo guest (13 MB, built from Debian packages) is made once; it takes about 15 s.
      const images = await ensureDemoGuest(config.imagesDir, (line) => process.stdout.write(`  [demo guest] ${line}\n`));
      await seedDemoDesktops(database.db, engine, images);
    }
    // (On PostgreSQL the network comes up later, in the process that takes this machine's pieces.)
    if (config.seedDemo && (engine.network.available || (config.databaseUrl && engine.network.cannotRun() === null))) {
      // The "Debian desktop (RDP)" guest (xrdp, about a minute to build the first time) and its template.
      const rdp = await ensureRdpGuest(config.imagesDir, (line) => process.stdout.write(`  [RDP guest] ${line}\n`));
      await seedRdpTemplate(database.db, engine, rdp);
    }
    return result;
  });
  const ctx = createContext(config, database, engine);
  const app = await buildApp(ctx);

  const stop = createStopper({
    log: ctx.log,
    exit: (code) => process.exit(code),
    // The drain comes on top of the stop's own bound.
    boundMs: SHUTDOWN_BOUND_MS + config.shutdownDrainSeconds * 1000,
    steps: [
      // A balancer in front sees the health route answer 503 and sends elsewhere before the listener closes.
      ['draining (health answers 503)', () => app.drain(config.shutdownDrainSeconds * 1000)],
      ['the web server and its connections', () => app.close()],
      ['the engine (machines keep running, the guest network while guests use it; the next start adopts them)', () => engine.detach()],
      ['the database', () => database.close()],
    ],
  });
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  printWelcome(config.publicUrl ?? `http://localhost:${port}`, seeded, Boolean(config.demoPassword));
}

main().catch((err) => {
  if (err instanceof DataDirLockedError || err instanceof SchemaTooNewError) {
    process.stderr.write(`\n${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
