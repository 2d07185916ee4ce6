import type { Db } from './index';

/**
 * A read made once per database and key object, and shared for a moment: the checks of one request
 * ask for the same facts of the same user row (the guard's, its own per request) several times. An
 * answer is reused for `freshMs` at most, so a long-lived holder of a row still sees changes.
 */
export function readOnce<K extends object, V>(read: (db: Db, key: K) => Promise<V>, freshMs = 1_000): (db: Db, key: K) => Promise<V> {
  const kept = new WeakMap<Db, WeakMap<K, { at: number; value: Promise<V> }>>();
  return (db, key) => {
    let ofDb = kept.get(db);
    if (!ofDb) kept.set(db, (ofDb = new WeakMap()));
    const now = Date.now();
    const hit = ofDb.get(key);
    if (hit && now - hit.at < freshMs) return hit.value;
    const value = read(db, key);
    ofDb.set(key, { at: now, value });
    value.catch(() => ofDb.delete(key));
    return value;
  };
}
