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
export type Database = {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** PostgreSQL's connection string (what other server processes on it share, `socket/peers.ts`); none when embedded. */
  url?: string;
  close: () => Promise<void>;
  /**
   * Runs `fn` while no other process of the installation runs one (a PostgreSQL advisory lock: several
   * server processes starting at once on one database seed it once). PGlite: one process, `fn` runs as is.
   */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
  /**
   * Joins the installation's live server processes. `alone`: no other process of it is running, so
   * this one does the start-up's repairs (adopting machines, finishing interrupted creations, the
   * storage sweep) — with others running, what looks interrupted may be their work under way. Until
   * `ready()`, a process starting beside it waits (PostgreSQL: the start-up advisory lock held, and a
   * shared advisory lock every live process keeps on a connection of its own, freed by its death).
   * PGlite: one process, always alone.
   */
  join: () => Promise<{ alone: boolean; ready: () => Promise<void> }>;
  /**
   * Tries the installation's advisory lock `key` (a session lock on a connection of its own, kept while
   * held, named `name` in pg_stat_activity: who holds it): null when another live process holds it.
   * `onLost`: the connection dropped, and the lock with it (another process may take it now). PGlite:
   * one process, held at once.
   */
  tryHold: (key: number, opts: { name: string; onLost: () => void }) => Promise<{ release: () => Promise<void> } | null>;
};
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
    const url = opts.url;
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    let live: pg.Client | undefined;
    const database = await migrated(pool, 'postgres', async () => {
      await live?.end().catch(() => undefined);
      await pool.end();
    });
    return {
      ...database,
      url,
      join: () =>
        joinInstallation(pool, async () => {
          if (live) return live;
          live = new pg.Client({ connectionString: url });
          // Lost (the database restarted): the lock goes with it; the process serves on.
          live.on('error', () => {});
          await live.connect();
          return live;
        }),
      tryHold: (key, opts) => tryHold(url, key, opts),
    };
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

/** The advisory lock key of the start-up steps (migrations, seed) on PostgreSQL: any fixed number of ours. */
export const STARTUP_LOCK_KEY = 0x76_64_69_31; // 'vdi1'

/** The advisory lock every live server process of an installation holds shared (PostgreSQL). */
export const LIVE_LOCK_KEY = 0x76_64_69_32; // 'vdi2'

/** The advisory lock of the process that runs this machine's own pieces (guest network, VPN, RD Gateway, bastion). */
export const PIECES_LOCK_KEY = 0x76_64_69_33; // 'vdi3'

/** `Database.join` on PostgreSQL: under the start-up lock, alone when no live process holds LIVE_LOCK_KEY shared. */
async function joinInstallation(pool: pg.Pool, liveClient: () => Promise<pg.Client>) {
  const startup = await pool.connect();
  let held = false;
  const release = async () => {
    if (!held) return;
    held = false;
    try {
      await startup.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK_KEY]);
    } finally {
      startup.release();
    }
  };
  try {
    await startup.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK_KEY]);
    held = true;
    const live = await liveClient();
    const { rows } = await live.query<{ alone: boolean }>('SELECT pg_try_advisory_lock($1) AS alone', [LIVE_LOCK_KEY]);
    const alone = rows[0]?.alone === true;
    if (alone) await live.query('SELECT pg_advisory_unlock($1)', [LIVE_LOCK_KEY]);
    await live.query('SELECT pg_advisory_lock_shared($1)', [LIVE_LOCK_KEY]);
    return { alone, ready: release };
  } catch (err) {
    if (held) await release();
    else startup.release();
    throw err;
  }
}

/** `Database.tryHold` on PostgreSQL: a client of its own, kept only while it holds `key`. */
async function tryHold(url: string, key: number, opts: { name: string; onLost: () => void }) {
  const client = new pg.Client({ connectionString: url, application_name: opts.name.slice(0, 63) });
  let released = false;
  client.on('error', () => {});
  client.on('end', () => {
    if (!released) opts.onLost();
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1) AS held', [key]);
    if (rows[0]?.held === true) {
      return {
        release: async () => {
          released = true;
          await client.end().catch(() => undefined);
        },
      };
    }
  } catch {
    // unreachable now: not held, tried again later
  }
  released = true;
  await client.end().catch(() => undefined);
  return null;
}

/**
 * `fn` on one connection of `pool` holding the installation's advisory lock: a second server process
 * starting at the same moment waits there (drizzle's migrator and the seed check, then write: two at
 * once would both write). The lock is the session's, so it ends with the connection if the process dies.
 */
async function underStartupLock<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK_KEY]);
    try {
      return await fn(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}

async function migrated(pool: pg.Pool, kind: Database['kind'], close: () => Promise<void>): Promise<Database> {
  // A connection that fails while idle in the pool is dropped and replaced; it must not crash the process.
  pool.on('error', () => {});
  const db = drizzle(pool, { schema });
  const exclusive: Database['exclusive'] = kind === 'postgres' ? (fn) => underStartupLock(pool, () => fn()) : (fn) => fn();
  try {
    if (kind === 'postgres') await underStartupLock(pool, (client) => migrate(drizzle(client, { schema }), { migrationsFolder }));
    else await migrate(db, { migrationsFolder });
  } catch (err) {
    await close();
    throw err;
  }
  let closing: Promise<void> | null = null;
  return { db: db as unknown as Db, kind, close: () => (closing ??= close()), exclusive, join: async () => ({ alone: true, ready: async () => {} }), tryHold: async () => ({ release: async () => {} }) };
}
