import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
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
   * PGlite: one process, always alone. `self`: this process among the live ones (PostgreSQL: the
   * backend of that connection, gone from pg_stat_activity when the process dies; PGlite: none).
   */
  join: () => Promise<{ alone: boolean; ready: () => Promise<void>; self: LiveProcess | null }>;
  /** Locks one live process at a time holds (e.g. the watch of a hypervisor): see `AdvisoryLocks`. */
  locks: AdvisoryLocks;
  /** This process's connection pool now (monitoring): connections open, idle, queries waiting for one, and its size. */
  pool: () => { total: number; idle: number; waiting: number; max: number };
};

/** An advisory lock's key: a namespace of ours and a number in it (PostgreSQL's two-int form, apart from the one-bigint keys above). */
export type LockKey = readonly [number, number];

/**
 * Session advisory locks on a connection of their own (PostgreSQL): held until released, or until the
 * process dies (its session ends), when another live process may take them. PGlite: one process,
 * every lock granted (`everyGranted`).
 */
export type AdvisoryLocks = {
  everyGranted: boolean;
  /** Tries each key once (never waits): whether this process holds it now. */
  tryHold: (keys: readonly LockKey[]) => Promise<boolean[]>;
  release: (key: LockKey) => Promise<void>;
  /** The process holding each key now (its `name` given to openDatabase), null when none (or unnamed; always on PGlite). */
  holders: (keys: readonly LockKey[]) => Promise<(string | null)[]>;
  /** How many server processes of the installation are live now, this one included (`join`'s shared lock; 1 on PGlite). */
  liveProcesses: () => Promise<number>;
  /** Called when the locks' connection is lost: every lock is gone with it (the next try connects again). */
  onLost: (cb: () => void) => () => void;
};
/** A live server process as PostgreSQL knows it: the backend of its `join` connection (pid and start, exact to the microsecond). */
export type LiveProcess = { pid: number; since: string };
export { schema };

/** The pool under a database's Drizzle handle (both kinds are a `pg.Pool`). */
export const poolOfDb = (db: Db): pg.Pool => (db as unknown as { $client: pg.Pool }).$client;

export const migrationsFolder = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Connections to the embedded database. PGlite is one session, but with several connections the
 * worker finds the next query waiting when one ends, instead of a round trip through this thread
 * for each (docs/decisions/0002-embedded-pool-and-prepared-statements.md: 25 creations at once 1.7–2× faster on a busy machine).
 */
const EMBEDDED_POOL_SIZE = 4;

/**
 * Connections to PostgreSQL a process holds unless DATABASE_POOL_SIZE says otherwise. Several processes share one
 * database (its `max_connections` is 100 by default), and more backends than the database's cores can run only take
 * turns: on two cores a class of 30 taking desktops at once was no faster with 20, and within the bench's noise with
 * 5 (docs/decisions/0042-postgres-connections-per-process.md).
 */
export const POSTGRES_POOL_SIZE = 10;

/**
 * PostgreSQL when a URL is given, embedded PGlite under `dir` otherwise (in memory without
 * either); migrated either way. Both go through one driver: drizzle's node-postgres on a
 * `pg.Pool`. The embedded PGlite runs in a worker thread, never on the caller's event loop;
 * `eagerCompile` (the product's start) compiles its WebAssembly fully at once (see pglite-worker.mjs).
 * `template` (in memory only): starts from an archive of a migrated data directory (the tests', made once per run).
 */
export async function openDatabase(opts: {
  url?: string;
  dir?: string;
  eagerCompile?: boolean;
  template?: string;
  name?: string;
  migrations?: string;
  /** connections to PostgreSQL at most (DATABASE_POOL_SIZE); default POSTGRES_POOL_SIZE */
  poolSize?: number;
}): Promise<Database> {
  const migrations = opts.migrations ?? migrationsFolder;
  if (opts.url) {
    const url = opts.url;
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? POSTGRES_POOL_SIZE });
    let live: pg.Client | undefined;
    const database = await migrated(pool, 'postgres', migrations, async () => {
      await live?.end().catch(() => undefined);
      await pool.end();
    });
    const locks = postgresLocks(url, opts.name);
    return {
      ...database,
      url,
      locks,
      close: async () => {
        await locks.close();
        await database.close();
      },
      join: () =>
        joinInstallation(pool, async () => {
          if (live) return live;
          live = new pg.Client({ connectionString: url });
          // Lost (the database restarted): the lock goes with it; the process serves on.
          live.on('error', () => {});
          await live.connect();
          return live;
        }),
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
  // Idle connections cost nothing here (a port to the worker): none is closed for idleness, so that a query's release
  // sets no timer (pg-pool's idle timeout is a setTimeout per release, a clearTimeout per checkout).
  const pool = new pg.Pool({ stream: server.stream, max: EMBEDDED_POOL_SIZE, user: 'postgres', database: 'postgres', idleTimeoutMillis: 0 });
  let analyzer: ReturnType<typeof setInterval> | undefined;
  const database = await migrated(pool, 'pglite', migrations, async () => {
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

/**
 * The namespaces of the two-int advisory locks (the first int; the second names the object in it).
 * Kept here, one list, so that no two kinds of lock share a namespace (a session lock of one kind
 * would block a transaction lock of another whose object hashes the same).
 */
export const LOCK_CLASSES = {
  /** a remote hypervisor's watcher (modules/desktops/host-watch.ts): session lock per host */
  hostWatch: 0x76_64_69_33, // 'vdi3'
  /** a start-queue lane's admission (engine/start-queue.ts): transaction lock per host */
  startLane: 0x76_64_69_34, // 'vdi4'
  /** this machine's own pieces (modules/pieces/service.ts): one session lock, object 0 */
  pieces: 0x76_64_69_35, // 'vdi5'
  /** a desktop's creation under way (modules/desktops/create.ts `creating`): session lock per desktop */
  creation: 0x76_64_69_36, // 'vdi6'
  /** the usage roll-up (modules/usage/rollup.ts): transaction lock, object 0 */
  usageRollup: 0x76_64_69_37, // 'vdi7'
  /** a desktop pool's manager pass (modules/desktop-pools): session lock per pool, held while the pass runs */
  desktopPool: 0x76_64_69_38, // 'vdi8'
} as const;

/** The lock of object `name` in namespace `cls`: the same in every process (two names sharing one are held together). */
export const lockKey = (cls: number, name: string): LockKey => [cls, createHash('sha256').update(name).digest().readInt32BE(0)];

/** `AdvisoryLocks` on PostgreSQL: on a connection of their own, opened at the first try (and again after a loss). */
function postgresLocks(url: string, name?: string): AdvisoryLocks & { close: () => Promise<void> } {
  let client: Promise<pg.Client> | undefined;
  let closed = false;
  const lost = new Set<() => void>();
  const connection = () => {
    // A closed database holds nothing again (a process stopping, or one a test made "die").
    if (closed) return Promise.reject(new Error('the database is closed'));
    return (client ??= (async () => {
      // Named (the process's SERVER_ID) so that `holders` can say who holds a lock.
      const c = new pg.Client({ connectionString: url, ...(name ? { application_name: name } : {}) });
      const gone = () => {
        if (client === undefined) return;
        client = undefined;
        if (!closed) for (const cb of lost) cb();
      };
      // Lost (the database restarted, the connection cut): its locks with it; the next try connects again.
      c.on('error', gone);
      c.on('end', gone);
      try {
        await c.connect();
      } catch (err) {
        client = undefined;
        throw err;
      }
      return c;
    })());
  };
  return {
    everyGranted: false,
    async tryHold(keys) {
      if (keys.length === 0) return [];
      const c = await connection();
      const { rows } = await c.query<{ held: boolean }>(
        'SELECT pg_try_advisory_lock(k.a, k.b) AS held FROM unnest($1::int[], $2::int[]) WITH ORDINALITY AS k(a, b, i) ORDER BY k.i',
        [keys.map((k) => k[0]), keys.map((k) => k[1])],
      );
      return rows.map((r) => r.held);
    },
    async release(key) {
      if (!client) return;
      await (await client).query('SELECT pg_advisory_unlock($1::int, $2::int)', [key[0], key[1]]);
    },
    async holders(keys) {
      if (keys.length === 0) return [];
      const c = await connection();
      const { rows } = await c.query<{ name: string | null }>(
        `SELECT (SELECT NULLIF(a.application_name, '') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                  WHERE l.locktype = 'advisory' AND l.granted AND l.classid = k.a::oid AND l.objid = k.b::oid AND l.objsubid = 2
                    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) LIMIT 1) AS name
           FROM unnest($1::int[], $2::int[]) WITH ORDINALITY AS k(a, b, i) ORDER BY k.i`,
        [keys.map((k) => k[0]), keys.map((k) => k[1])],
      );
      return rows.map((r) => r.name);
    },
    async liveProcesses() {
      const c = await connection();
      // A one-bigint key is (classid: its high half, objid: its low half, objsubid 1) in pg_locks.
      const { rows } = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = $1 AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [LIVE_LOCK_KEY],
      );
      return rows[0]?.n ?? 0;
    },
    onLost(cb) {
      lost.add(cb);
      return () => lost.delete(cb);
    },
    async close() {
      closed = true;
      const c = client;
      client = undefined;
      if (c) await (await c.catch(() => undefined))?.end().catch(() => undefined);
    },
  };
}

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
    const me = await live.query<LiveProcess>('SELECT pid, backend_start::text AS since FROM pg_stat_activity WHERE pid = pg_backend_pid()');
    return { alone, ready: release, self: me.rows[0] ?? null };
  } catch (err) {
    if (held) await release();
    else startup.release();
    throw err;
  }
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

/** The database was written by a newer version of the product than this one: it is left as it is. */
export class SchemaTooNewError extends Error {
  constructor(readonly applied: number, readonly known: number) {
    super(
      `This database was written by a newer version of the portal (its schema has migrations up to ${new Date(applied).toISOString()}, ` +
        `this version knows them up to ${new Date(known).toISOString()}). Nothing was changed: start that version or a newer one, or restore a backup made by this one.`,
    );
  }
}

/** The newest migration this version carries (the `when` of the journal's last entry, as drizzle stores it in `created_at`). */
export function newestKnownMigration(folder = migrationsFolder): number {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { when: number }[] };
  return Math.max(...journal.entries.map((e) => e.when));
}

/** Throws `SchemaTooNewError` when the database holds a migration newer than any this version knows. */
async function refuseNewerSchema(q: Pick<pg.Pool, 'query'>, folder: string): Promise<void> {
  // (Two steps: a query naming a table that does not exist fails at planning, whatever its CASE says.)
  const { rows: there } = await q.query<{ there: boolean }>(`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS there`);
  if (!there[0]?.there) return;
  const { rows } = await q.query<{ applied: string | null }>('SELECT max(created_at)::text AS applied FROM drizzle.__drizzle_migrations');
  const applied = rows[0]?.applied ? Number(rows[0].applied) : null;
  const known = newestKnownMigration(folder);
  if (applied !== null && applied > known) throw new SchemaTooNewError(applied, known);
}

/**
 * VDI_SQL_TRACE=<file> (engineers, benches): each query's text with the time it was sent (epoch ms), one line each; its
 * parameters are never written (they may hold hashes and tokens).
 */
function sqlTrace(): { logQuery(query: string): void } | undefined {
  const file = process.env.VDI_SQL_TRACE;
  if (!file) return undefined;
  return { logQuery: (query) => appendFileSync(file, `${(performance.timeOrigin + performance.now()).toFixed(1)} ${query.replace(/\s+/g, ' ')}\n`) };
}

async function migrated(pool: pg.Pool, kind: Database['kind'], folder: string, close: () => Promise<void>): Promise<Database> {
  // A connection that fails while idle in the pool is dropped and replaced; it must not crash the process.
  pool.on('error', () => {});
  const db = drizzle(pool, { schema, logger: sqlTrace() });
  const exclusive: Database['exclusive'] = kind === 'postgres' ? (fn) => underStartupLock(pool, () => fn()) : (fn) => fn();
  try {
    // An older database is brought up to this version; one a newer version wrote is refused, untouched.
    if (kind === 'postgres') {
      await underStartupLock(pool, async (client) => {
        await refuseNewerSchema(client, folder);
        await migrate(drizzle(client, { schema }), { migrationsFolder: folder });
      });
    } else {
      await refuseNewerSchema(pool, folder);
      await migrate(db, { migrationsFolder: folder });
    }
  } catch (err) {
    await close();
    throw err;
  }
  let closing: Promise<void> | null = null;
  const locks: AdvisoryLocks = { everyGranted: true, tryHold: async (keys) => keys.map(() => true), holders: async (keys) => keys.map(() => null), release: async () => {}, liveProcesses: async () => 1, onLost: () => () => {} };
  const poolNow = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 });
  return { db: db as unknown as Db, kind, close: () => (closing ??= close()), exclusive, join: async () => ({ alone: true, ready: async () => {}, self: null }), locks, pool: poolNow };
}
