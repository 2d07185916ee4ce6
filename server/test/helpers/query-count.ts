import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '../../src/db';

type Queryable = { query: (...args: unknown[]) => Promise<unknown> };

/** The recording a query belongs to, when it is counted for one call only. */
const calls = new AsyncLocalStorage<string[]>();

/**
 * Records the SQL statements a database handle sends to its driver (PGlite, or the PostgreSQL
 * pool): every query, prepared statements included. `stop()` puts the driver's method back.
 * With `onlyWithin`, a query counts only when sent from within `within(fn)` (the server's own
 * background work — jobs, scheduler, purge — is left out, so a loaded machine cannot add to a count).
 */
export function recordQueries(db: Db, opts: { onlyWithin?: boolean } = {}) {
  const pool = (db as unknown as { $client: Queryable & { connect: (...args: unknown[]) => Promise<Queryable> } }).$client;
  const queries: string[] = [];
  const restore: (() => void)[] = [];
  const recorded = new WeakSet<Queryable>();
  const record = (target: Queryable) => {
    if (recorded.has(target)) return;
    recorded.add(target);
    const original = target.query;
    target.query = function (this: unknown, ...args: unknown[]) {
      if (!opts.onlyWithin || calls.getStore() === queries) {
        const q = args[0];
        queries.push(typeof q === 'string' ? q : String((q as { text?: string })?.text ?? q));
      }
      return original.apply(this, args);
    };
    restore.push(() => void (target.query = original));
  };
  record(pool);
  // A transaction's statements go through a connection taken from the pool: recorded while it is held.
  const connect = pool.connect;
  pool.connect = async function (this: unknown, ...args: unknown[]) {
    const held = await connect.apply(this, args);
    if (held && typeof held === 'object') record(held);
    return held;
  };
  restore.push(() => void (pool.connect = connect));
  return {
    queries,
    reset: () => void (queries.length = 0),
    stop: () => {
      for (const undo of restore.splice(0).reverse()) undo();
    },
    within: <T>(fn: () => Promise<T>) => calls.run(queries, fn),
  };
}

/** The statements `fn` itself sends (not the server's background work meanwhile), and its result. */
export async function countQueries<T>(db: Db, fn: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const rec = recordQueries(db, { onlyWithin: true });
  try {
    return { result: await rec.within(fn), queries: rec.queries };
  } finally {
    rec.stop();
  }
}
