/**
 * Requests per key (a client address) in a fixed window, in memory and bounded: entries whose
 * window has passed are swept at most once a window, and when `maxKeys` are still held the oldest
 * entry makes room, so no amount of distinct keys grows the map past `maxKeys`.
 */
export type RateLimit = { limit: number; windowMs: number; maxKeys: number };

export function createRateLimiter(rule: RateLimit) {
  const entries = new Map<string, { start: number; count: number }>();
  let lastSweep = 0;

  function sweep(now: number) {
    lastSweep = now;
    for (const [key, e] of entries) if (now - e.start >= rule.windowMs) entries.delete(key);
  }

  return {
    /** Counts one request; answers when the key may ask again if it is over the limit, else null. */
    hit(key: string, now = Date.now()): Date | null {
      if (now - lastSweep >= rule.windowMs) sweep(now);
      let e = entries.get(key);
      if (!e || now - e.start >= rule.windowMs) {
        entries.delete(key);
        if (entries.size >= rule.maxKeys) sweep(now);
        // Still full: the entry inserted longest ago goes (Map keeps insertion order).
        while (entries.size >= rule.maxKeys) entries.delete(entries.keys().next().value!);
        e = { start: now, count: 0 };
        entries.set(key, e);
      }
      e.count += 1;
      return e.count > rule.limit ? new Date(e.start + rule.windowMs) : null;
    },
    get size() {
      return entries.size;
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
