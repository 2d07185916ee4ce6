import type { Db } from './index';

/**
 * A query built once per database and run with its placeholders' values (`sql.placeholder`).
 * Drizzle's builder is not free: the guard's join with its subqueries took ~0.5 ms to build, on
 * every call. Unnamed (`prepare('')`): PGlite is one session shared by the pool's connections,
 * where a named server-side statement of one connection would collide with another's.
 */
export function preparedQuery<P>(build: (db: Db) => P): (db: Db) => P {
  const built = new WeakMap<Db, P>();
  return (db) => {
    let query = built.get(db);
    if (!query) built.set(db, (query = build(db)));
    return query;
  };
}
