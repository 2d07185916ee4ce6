import type { Db } from './index';

/** A read shared per database and key object (see `readOnce`); `prime` hands it a value read elsewhere. */
export type ReadOnce<K extends object, V> = ((db: Db, key: K) => Promise<V>) & { prime(db: Db, key: K, value: V): void };

/**
 * A read made once per database and key object, and shared for a moment: the checks of one request
 * ask for the same facts of the same user row (the guard's, its own per request) several times. An
 * answer is reused for `freshMs` at most, so a long-lived holder of a row still sees changes. The
 * request guard primes the reads of the caller from its own query (`prime`): then they cost none.
 */
export function readOnce<K extends object, V>(read: (db: Db, key: K) => Promise<V>, freshMs = 1_000): ReadOnce<K, V> {
  const kept = new WeakMap<Db, WeakMap<K, { at: number; value: Promise<V> }>>();
  const ofDb = (db: Db) => {
    let m = kept.get(db);
    if (!m) kept.set(db, (m = new WeakMap()));
    return m;
  };
  const get = (db: Db, key: K) => {
    const m = ofDb(db);
    const now = Date.now();
    const hit = m.get(key);
    if (hit && now - hit.at < freshMs) return hit.value;
    const value = read(db, key);
    m.set(key, { at: now, value });
    value.catch(() => m.delete(key));
    return value;
  };
  return Object.assign(get, { prime: (db: Db, key: K, value: V) => void ofDb(db).set(key, { at: Date.now(), value: Promise.resolve(value) }) });
}
