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
  const client = (db as unknown as { $client: Queryable }).$client;
  const original = client.query;
  const queries: string[] = [];
  client.query = function (this: unknown, ...args: unknown[]) {
    if (!opts.onlyWithin || calls.getStore() === queries) {
      const q = args[0];
      queries.push(typeof q === 'string' ? q : String((q as { text?: string })?.text ?? q));
    }
    return original.apply(this, args);
  };
  return {
    queries,
    reset: () => void (queries.length = 0),
    stop: () => void (client.query = original),
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
