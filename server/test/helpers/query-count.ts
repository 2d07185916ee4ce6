import type { Db } from '../../src/db';

/**
 * Records the SQL statements a database handle sends, through Drizzle's logger hook (every query
 * of the handle, both drivers). `stop()` puts the previous logger back.
 */
export function recordQueries(db: Db) {
  const session = (db as unknown as { session: { logger: { logQuery(query: string, params: unknown[]): void } } }).session;
  const previous = session.logger;
  const queries: string[] = [];
  session.logger = { logQuery: (query) => void queries.push(query) };
  return {
    queries,
    reset: () => void (queries.length = 0),
    stop: () => void (session.logger = previous),
  };
}
