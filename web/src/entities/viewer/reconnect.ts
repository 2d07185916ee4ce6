import { HttpError } from '../../lib/api';

// A browser viewer whose connection dropped under it (its server process died or stopped, the
// network blinked) while the desktop still runs reconnects by itself: a fresh ticket, a new
// websocket (the balancer sends both to a process that is up), tried again with a short backoff
// for a bounded time; only then does the page show its closed screen.

/** How long a viewer keeps reconnecting by itself after a drop before it gives up. */
export const RECONNECT_BOUND_MS = 30_000;

/** The wait before reconnection attempt `n` (0 is the first, at once): 250 ms doubling up to 2 s. */
export const reconnectDelay = (n: number) => (n <= 0 ? 0 : Math.min(2_000, 250 * 2 ** (n - 1)));

/**
 * Whether the VNC websocket's close `code` is a drop worth reconnecting through: 1006 (closed
 * without a close frame: the process or the network went away), 1001 (the server process stops),
 * 1011–1014 (server error, restart, try later, bad gateway). 1000 is the desktop's display ending
 * (it stopped), the bridge's own codes say why the screen cannot be reached: those show at once.
 */
export const isDropped = (code: number) => code === 1006 || code === 1001 || (code >= 1011 && code <= 1014);

/** Whether a failed ticket renewal may pass by trying again (no process answered in time, or none
 *  answered at all) rather than being the answer (the desktop stopped, access refused, signed out). */
export function renewMayPass(err: unknown): boolean {
  if (err instanceof HttpError) return err.status >= 500 || err.status === 408 || err.status === 429;
  return true; // the request itself failed: a dropped connection, no answer in time
}

/**
 * `renew` until it answers, its failure is the answer (`renewMayPass`), `boundMs` have passed (its
 * last failure is thrown) or `signal` aborts (rejects with the abort). Attempt n waits `reconnectDelay(n + first)`.
 */
export async function renewWithin<T>(renew: () => Promise<T>, opts: { boundMs: number; signal?: AbortSignal; first?: number }): Promise<T> {
  const until = Date.now() + opts.boundMs;
  for (let n = opts.first ?? 0; ; n++) {
    await sleep(Math.min(reconnectDelay(n), Math.max(0, until - Date.now())), opts.signal);
    try {
      return await renew();
    } catch (err) {
      opts.signal?.throwIfAborted();
      if (!renewMayPass(err) || Date.now() >= until) throw err;
    }
  }
}

function sleep(ms: number, signal?: AbortSignal) {
  signal?.throwIfAborted();
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
