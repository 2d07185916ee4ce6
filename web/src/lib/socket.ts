import type { Socket } from 'socket.io-client';
import { SOCKET_NAMESPACE, SOCKET_OPTIONS, SOCKET_PATH, SOCKET_REJECTED, type ServerEventName, type ServerToClientEvents } from '@vdi/contracts';
import { freshSessionToken } from './api';

let socket: Socket | null = null;
let onRejected: () => void = () => {};
/** Counts closes: an opening that a close overtook does not connect. */
let generation = 0;

/**
 * The live socket: same origin, /userspace, websocket, authenticated with the current session token.
 * Its client loads with the first signed-in screen (the guard waits for it), not with the sign-in page.
 */
export async function openSocket(rejected: () => void): Promise<Socket | null> {
  onRejected = rejected;
  if (socket) return socket;
  const opening = generation;
  const { io } = await import('socket.io-client');
  if (opening !== generation) return null;
  if (socket) return socket;
  socket = io(SOCKET_NAMESPACE, {
    path: SOCKET_PATH,
    transports: ['websocket'],
    rememberUpgrade: true,
    ...SOCKET_OPTIONS,
    // A callback, so that each reconnection carries the newest token (renewed first when in its last 30 s: a
    // reconnection with an expired one is rejected, which signs out).
    auth: (cb) => void freshSessionToken().then((jwt) => cb({ jwt: jwt ?? '' })),
  });
  socket.on('connect_error', (err) => {
    if (err.message === SOCKET_REJECTED) onRejected();
  });
  socket.on('logout', () => onRejected());
  return socket;
}

export function closeSocket() {
  generation += 1;
  socket?.disconnect();
  socket = null;
}

/** Subscribes to one live event; payloads arrive as JSON strings. */
export function onEvent<E extends ServerEventName>(event: E, handler: (payload: ServerToClientEvents[E]) => void): () => void {
  const s = socket;
  if (!s) return () => {};
  const listener = (raw: unknown) => {
    try {
      handler((typeof raw === 'string' ? JSON.parse(raw) : raw) as ServerToClientEvents[E]);
    } catch (err) {
      console.warn(`Bad ${event} payload`, err);
    }
  };
  s.on(event as string, listener);
  return () => void s.off(event as string, listener);
}

export const currentSocket = () => socket;
