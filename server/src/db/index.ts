import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema';
import { acquireDirLock } from './lock';
import { startEmbedded } from './embedded';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** `url`: PostgreSQL's connection string (what other server processes on it share, `socket/peers.ts`); none when embedded. */
export type Database = { db: Db; kind: 'pglite' | 'postgres'; url?: string; close: () => Promise<void> };
export { schema };

export const migrationsFolder = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Connections to the embedded database. PGlite is one session, but with several connections the
 * worker finds the next query waiting when one ends, instead of a round trip through this thread
 * for each (docs/decisions/0002-embedded-pool-and-prepared-statements.md: 25 creations at once 1.7–2× faster on a busy machine).
 */
const EMBEDDED_POOL_SIZE = 4;

/**
 * PostgreSQL when a URL is given, embedded PGlite under `dir` otherwise (in memory without
 * either); migrated either way. Both go through one driver: drizzle's node-postgres on a
 * `pg.Pool`. The embedded PGlite runs in a worker thread, never on the caller's event loop;
 * `eagerCompile` (the product's start) compiles its WebAssembly fully at once (see pglite-worker.mjs).
 * `template` (in memory only): starts from an archive of a migrated data directory (the tests', made once per run).
 */
export async function openDatabase(opts: { url?: string; dir?: string; eagerCompile?: boolean; template?: string }): Promise<Database> {
  if (opts.url) {
    const pool = new pg.Pool({ connectionString: opts.url, max: 10 });
    return { ...(await migrated(pool, 'postgres', () => pool.end())), url: opts.url };
  }
  let release = () => {};
  if (opts.dir) {
    mkdirSync(opts.dir, { recursive: true });
    release = acquireDirLock(join(opts.dir, '..', 'db.lock'));
  }
  let embedded;
  try {
    embedded = await startEmbedded(opts.dir, { eagerCompile: opts.eagerCompile, template: opts.dir ? undefined : opts.template });
  } catch (err) {
    release();
    throw err;
  }
  const server = embedded;
  // PGlite's own user and database (an empty user name in the startup message stalls it).
  const pool = new pg.Pool({ stream: server.stream, max: EMBEDDED_POOL_SIZE, user: 'postgres', database: 'postgres' });
  let analyzer: ReturnType<typeof setInterval> | undefined;
  const database = await migrated(pool, 'pglite', async () => {
    clearInterval(analyzer);
    try {
      await pool.end();
      await server.close();
    } finally {
      release();
    }
  });
  // The embedded server has no autovacuum: nothing would refresh the planner's statistics, and a
  // table that grew since (5,000 desktops counted as 31) gets whole-table sorts instead of its
  // index. ANALYZE at the start and every EMBEDDED_ANALYZE_MS (milliseconds on a portal's tables).
  const analyze = () => pool.query('ANALYZE').catch(() => undefined);
  await analyze();
  analyzer = setInterval(() => void analyze(), EMBEDDED_ANALYZE_MS);
  analyzer.unref();
  return database;
}

/** How often the embedded database refreshes its planner statistics (PostgreSQL's autovacuum does it there). */
export const EMBEDDED_ANALYZE_MS = 10 * 60_000;

async function migrated(pool: pg.Pool, kind: Database['kind'], close: () => Promise<void>): Promise<Database> {
  // A connection that fails while idle in the pool is dropped and replaced; it must not crash the process.
  pool.on('error', () => {});
  const db = drizzle(pool, { schema });
  try {
    await migrate(db, { migrationsFolder });
  } catch (err) {
    await close();
    throw err;
  }
  let closing: Promise<void> | null = null;
  return { db: db as unknown as Db, kind, close: () => (closing ??= close()) };
}
