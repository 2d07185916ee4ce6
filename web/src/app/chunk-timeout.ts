/** A lazily loaded screen that has not arrived after this long is given up on (spec core §9). */
export const CHUNK_LOAD_TIMEOUT_MS = 120_000;

/** Raised when a screen's code did not arrive in time: the route shows an error with a retry. */
export class ChunkLoadTimeout extends Error {
  constructor() {
    super(`The screen did not load within ${CHUNK_LOAD_TIMEOUT_MS / 1000} s`);
    this.name = 'ChunkLoadTimeout';
  }
}

/** The loading `p`, or a ChunkLoadTimeout when it takes longer than `ms`. */
export function withinChunkTime<T>(p: Promise<T>, ms = CHUNK_LOAD_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ChunkLoadTimeout()), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
