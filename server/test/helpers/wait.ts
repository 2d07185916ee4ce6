import { io, type Socket } from 'socket.io-client';
import type { TestServer } from './server';
import { scaled } from './slowdown';

/** Polls `fn` until it answers something truthy (every 100 ms), or fails after `ms` (what a quiet
 *  machine needs at most: times the measured slowdown). */
export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + scaled(ms);
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A live socket signed in with the token (no reconnection: a test sees what it got). */
export const socketOf = (server: TestServer, token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });

/** Records the events (payloads parsed from their JSON strings) a socket receives. */
export function recordEvents(s: Socket, events: string[]) {
  const got: { event: string; payload: Record<string, unknown> }[] = [];
  for (const event of events) s.on(event, (raw: string) => got.push({ event, payload: JSON.parse(raw) }));
  return got;
}
