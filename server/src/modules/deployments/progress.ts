/** Creation progress goes out at most this often (issue: at most one progress event per 250 ms). */
export const PROGRESS_INTERVAL_MS = 250;

/**
 * Calls `publish` at most once per `ms`: a change when nothing went out for `ms` goes out at
 * once, later ones are gathered into one call at the end of the interval. `flush()` publishes
 * the final, exact count — once the interval since the last call is over — and waits for it;
 * calls never overlap. `publish` should send its event before it awaits anything, so that
 * events leave as far apart as the calls.
 */
export function createThrottle(publish: () => Promise<void> | void, ms = PROGRESS_INTERVAL_MS, clock: () => number = Date.now) {
  let last = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    timer = undefined;
    dirty = false;
    last = clock();
    running = running.then(publish).catch(() => undefined);
    return running;
  };
  return {
    /** Something changed: publish now or at the end of the current interval. */
    touch() {
      dirty = true;
      if (timer) return;
      const wait = last + ms - clock();
      if (wait <= 0) void run();
      else timer = setTimeout(() => void run(), wait);
    },
    /** Publishes the final figures (even when nothing changed since) as soon as the interval allows, and waits. */
    async flush() {
      clearTimeout(timer);
      timer = undefined;
      await running;
      const wait = last + ms - clock();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await run();
    },
    /** Drops what is pending (the job was aborted). */
    stop() {
      clearTimeout(timer);
      timer = undefined;
      dirty = false;
    },
    get pending() {
      return dirty;
    },
  };
}
