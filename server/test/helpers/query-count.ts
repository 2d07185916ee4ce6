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
  const pool = (db as unknown as { $client: Queryable & { connect: (...args: unknown[]) => Promise<Queryable | undefined> } }).$client;
  const queries: string[] = [];
  const restore: (() => void)[] = [];
  const wrap = (target: Queryable) => {
    const original = target.query;
    target.query = function (this: unknown, ...args: unknown[]) {
      if (!opts.onlyWithin || calls.getStore() === queries) {
        const q = args[0];
        queries.push(typeof q === 'string' ? q : String((q as { text?: string })?.text ?? q));
      }
      return original.apply(this, args);
    };
    return () => void (target.query = original);
  };
  restore.push(wrap(pool));
  // A transaction's statements go through a connection taken from the pool: recorded while it is held. The pool's own
  // query() takes its connection with a callback and is counted once, at the pool: that connection is left alone.
  const connect = pool.connect;
  pool.connect = async function (this: unknown, ...args: unknown[]) {
    if (args.some((a) => typeof a === 'function')) return connect.apply(this, args);
    const held = (await connect.apply(this, args)) as (Queryable & { release?: (...a: unknown[]) => unknown }) | undefined;
    if (held && typeof held === 'object' && typeof held.release === 'function') {
      const unwrap = wrap(held);
      const release = held.release;
      held.release = function (this: unknown, ...a: unknown[]) {
        unwrap();
        held.release = release;
        return release.apply(this, a);
      };
    }
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
