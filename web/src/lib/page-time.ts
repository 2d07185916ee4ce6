/*
 * Time limits counted in the page's own time. A page whose browser cannot run it (a thin client running many tabs, a
 * classroom's computers loading the portal at the same moment, a laptop waking up) gets its timers late: an answer that
 * arrived while it could not run would be judged late, and a screen or request failed that had in fact come. A page-time
 * limit looks at the clock every tick and counts at most twice a tick between two looks, so the time the page was frozen
 * does not count; on a page that runs, it is the plain limit (a server that does not answer still fails it).
 */

/** How often a page-time limit looks at the clock (ms). */
export const PAGE_TICK_MS = 1_000;

export type PageTimer = {
  /** aborted with a TimeoutError (as AbortSignal.timeout's) once the page has waited its limit */
  signal: AbortSignal;
  /** stops counting (the work ended) */
  clear(): void;
};

/** A limit of `ms` of the page's own time. `clock`: the time now in ms (a clock set back or forward counts 0 to 2 ticks). */
export function pageTimeout(ms: number, clock: () => number = Date.now): PageTimer {
  const controller = new AbortController();
  const tick = Math.min(PAGE_TICK_MS, ms);
  let waited = 0;
  let last = clock();
  const timer = setInterval(() => {
    const now = clock();
    waited += Math.min(Math.max(0, now - last), 2 * tick);
    last = now;
    if (waited < ms) return;
    clearInterval(timer);
    controller.abort(new DOMException(`no answer within ${ms} ms of the page's time`, 'TimeoutError'));
  }, tick);
  return { signal: controller.signal, clear: () => clearInterval(timer) };
}
