import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client as limits count it: an IPv4 address (also when IPv4-mapped), or the /64 of an IPv6
 * one — a single host usually holds a whole /64, so counting its addresses one by one would give it
 * 2^64 allowances.
 */
export function clientKey(ip: string): string {
  const mapped = ip.toLowerCase().startsWith('::ffff:') ? ip.slice(7) : ip;
  if (isIPv4(mapped)) return mapped;
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return ip;
  const [head, tail] = address.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  // An embedded IPv4 at the end takes two groups.
  const backGroups = back.length + (back.at(-1)?.includes('.') ? 1 : 0);
  const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - backGroups).fill('0'), ...back];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

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
