import type { Db } from '../../src/db';

type Queryable = { query: (...args: unknown[]) => Promise<unknown> };

/**
 * Records the SQL statements a database handle sends to its driver (PGlite, or the PostgreSQL
 * pool): every query, prepared statements included. `stop()` puts the driver's method back.
 */
export function recordQueries(db: Db) {
  const client = (db as unknown as { $client: Queryable }).$client;
  const original = client.query;
  const queries: string[] = [];
  client.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    queries.push(typeof q === 'string' ? q : String((q as { text?: string })?.text ?? q));
    return original.apply(this, args);
  };
  return {
    queries,
    reset: () => void (queries.length = 0),
    stop: () => void (client.query = original),
  };
}
