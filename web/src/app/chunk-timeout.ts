import { pageTimeout } from '../lib/page-time';
import { withRetries } from '../lib/retry';

/** A lazily loaded screen that has not arrived after this long is given up on (spec core §9). */
export const CHUNK_LOAD_TIMEOUT_MS = 120_000;

/** Raised when a screen's code did not arrive in time: the route shows an error with a retry. */
export class ChunkLoadTimeout extends Error {
  constructor() {
    super(`The screen did not load within ${CHUNK_LOAD_TIMEOUT_MS / 1000} s`);
    this.name = 'ChunkLoadTimeout';
  }
}

/** The loading `p`, or a ChunkLoadTimeout when it takes longer than `ms` of the page's own time (lib/page-time.ts). */
export function withinChunkTime<T>(p: Promise<T>, ms = CHUNK_LOAD_TIMEOUT_MS): Promise<T> {
  const limit = pageTimeout(ms);
  const late = new Promise<never>((_, reject) => limit.signal.addEventListener('abort', () => reject(new ChunkLoadTimeout()), { once: true }));
  return Promise.race([p, late]).finally(() => limit.clear());
}

/** A screen's download that failed is tried again after these pauses (a dropped connection, a server busy for a moment). */
export const CHUNK_RETRY_DELAYS_MS = [500, 1_000, 2_000] as const;

/** A screen's code, tried again after each of `delays` when its download fails (the browser fetches a module whose download failed again on the next import). */
export const loadWithRetries = <T>(load: () => Promise<T>, delays: readonly number[] = CHUNK_RETRY_DELAYS_MS): Promise<T> => withRetries(load, delays, { what: 'A screen' });
