/**
 * Items that come close together, handled as one: the first starts a window of `ms`, at whose end `flush` gets all
 * that came meanwhile (a class taking thirty desktops at once: one write, one query, not thirty).
 */
export function batchWithin<T>(ms: number, flush: (items: T[]) => Promise<void>, onError: (err: unknown) => void) {
  let items: T[] = [];
  let timer: NodeJS.Timeout | null = null;
  const run = async () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const all = items;
    items = [];
    if (all.length > 0) await flush(all).catch(onError);
  };
  return {
    add(item: T) {
      items.push(item);
      if (timer) return;
      timer = setTimeout(() => void run(), ms);
      timer.unref();
    },
    /** What waits is handled now (a server's stop). */
    flushNow: run,
  };
}
