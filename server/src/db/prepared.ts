import type { Db } from './index';

let statements = 0;

/**
 * A query built once per database and run with its placeholders' values (`sql.placeholder`).
 * Drizzle's builder is not free (the guard's join with its subqueries took ~0.5 ms to build), and
 * neither is the database's parse and plan (another ~0.5 ms on the embedded database): the query
 * is a named prepared statement (`build` gets its name for `.prepare(name)`), parsed once per
 * connection on PostgreSQL and once per session on the embedded one (its worker shares the named
 * statements of its one session between the pool's connections: pglite-worker.mjs).
 */
export function preparedQuery<P>(build: (db: Db, name: string) => P): (db: Db) => P {
  const built = new WeakMap<Db, P>();
  const name = `vdi_${++statements}`;
  return (db) => {
    let query = built.get(db);
    if (!query) built.set(db, (query = build(db, name)));
    return query;
  };
}
