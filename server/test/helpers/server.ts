import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config';
import { buildApp, createContext } from '../../src/app';
import type { AppContext } from '../../src/context';
import type { Mailer } from '../../src/mail/mailer';
import { seed } from '../../src/seed/seed';
import { seedDemoDesktops } from '../../src/seed/demo-desktops';
import { createLocalEngine, type Engine, type EngineNetworkOptions } from '../../src/engine';
import { testNetworkOptions } from './guest-network';
import { ensureDemoGuest } from '../../src/engine/guest-image';
import { openTestDatabase } from './db';
import { scaled } from './slowdown';
import type { Clock } from '../../src/scheduler/clock';

export const DEMO_PASSWORD = 'demo-pass-123';

/** The demo guest, built once and shared by every test run (the engine tests use the same cache). */
export const testImagesDir = () => process.env.VDI_TEST_IMAGES ?? join(import.meta.dirname, '..', '..', '..', 'data', 'test-cache', 'images');

export type TestServer = {
  url: string;
  app: FastifyInstance;
  ctx: AppContext;
  config: Config;
  /** The test database's URL on PostgreSQL (TEST_DATABASE_URL), undefined on the embedded one. */
  dbUrl?: string;
  /** Stops the web server and the engine as a server's stop does (machines keep running), then serves again from the same data and database. */
  restart(): Promise<void>;
  close(): Promise<void>;
};

/** Ends an engine of a test: its machines destroyed (a machine outlives its engine by design, and a
 *  test must leave none running), then the engine closed. */
export async function endEngine(engine: Engine) {
  for (const m of await engine.driver.list().catch(() => [])) await engine.driver.destroy(m.id).catch(() => undefined);
  await engine.driver.close().catch(() => undefined);
}

/** The real server on a free loopback port, with a fresh database seeded with the demo organisation. */
/** `network`: a guest network of its own (true: a fresh namespace and free range; see helpers/guest-network.ts). */
/** `log`: the server's log instead of the one LOG_LEVEL makes (a test reads what it wrote). */
export async function startTestServer(opts: { env?: Record<string, string>; mailer?: Mailer; startConcurrency?: number; clock?: Clock; network?: boolean | EngineNetworkOptions; log?: Logger } = {}): Promise<TestServer> {
  // Short: QEMU's unix socket paths (run/<desktop id>/qmp.sock) must fit 107 bytes.
  const dataDir = mkdtempSync(join(tmpdir(), 'vt-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', // e.g. TEST_LOG_LEVEL=info to read a test server's log
    DEMO_PASSWORD,
    WEB_DIST: join(dataDir, 'no-web'),
    // The RD Gateway on a free port (tests run side by side).
    RDP_GATEWAY_PORT: '0',
    // Tests sign in once and call for minutes: the default 5-minute sessions, times the measured
    // slowdown (at a load of 30 the authorisation matrix outlasted its callers' sessions).
    SESSION_TOKEN_SECONDS: String(scaled(300)),
    ...opts.env,
  });
  const database = await openTestDatabase();
  await seed(database.db, { demo: true, demoPassword: DEMO_PASSWORD });
  const network = opts.network === true ? testNetworkOptions() : opts.network || undefined;
  const engine = await createLocalEngine({ dataDir, accel: 'auto', concurrency: opts.startConcurrency, network });
  await seedDemoDesktops(database.db, engine, await ensureDemoGuest(testImagesDir()));
  const listen = async (engine: Engine) => {
    const ctx = createContext(config, database, engine, { mailer: opts.mailer, clock: opts.clock, log: opts.log });
    const app = await buildApp(ctx);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    return { url: `http://127.0.0.1:${port}`, app, ctx };
  };
  const server: TestServer = {
    ...(await listen(engine)),
    config,
    dbUrl: database.url,
    async restart() {
      // As a server's stop: the web server, then the engine (machines keep running, the guest network while guests use it).
      await server.app.close();
      await server.ctx.engine.detach();
      const next = await createLocalEngine({ dataDir, accel: 'auto', concurrency: opts.startConcurrency, network });
      Object.assign(server, await listen(next));
    },
    async close() {
      const { app, ctx } = server;
      await app.close();
      await endEngine(ctx.engine);
      await ctx.engine.network.close({ teardown: true });
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Signs in through the authentication service and answers the raw token (`headers`: e.g. an X-Forwarded-For). */
export async function login(
  server: Pick<TestServer, 'url'>,
  username: string,
  password = DEMO_PASSWORD,
  categoryId: string | null = 'default',
  headers: Record<string, string> = {},
) {
  const form = new FormData();
  form.append('username', username);
  form.append('password', password);
  const qs = categoryId ? `?provider=form&category_id=${categoryId}` : '?provider=form';
  const res = await fetch(`${server.url}/authentication/login${qs}`, { method: 'POST', body: form, headers });
  return { res, token: res.ok ? await res.text() : undefined };
}

export async function loginToken(server: TestServer, username: string): Promise<string> {
  const { res, token } = await login(server, username);
  if (!token) throw new Error(`login ${username} failed: ${res.status} ${await res.text()}`);
  return token;
}

export function call(server: Pick<TestServer, 'url'>, path: string, opts: { token?: string; method?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method: opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'),
    headers,
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
}

export const userIdOf = async (server: TestServer, username: string) => {
  const { schema } = await import('../../src/db');
  const { eq } = await import('drizzle-orm');
  const [u] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, username));
  return u!.id;
};
