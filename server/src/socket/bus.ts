import type { ServerEventName, ServerToClientEvents } from '@vdi/contracts';

export type Delivery = { room: string; event: ServerEventName; payload: unknown };
type Sink = (d: Delivery) => void;

export const userRoom = (userId: string) => `user:${userId}`;
export const desktopRoom = (desktopId: string) => `desktop:${desktopId}`;

/**
 * Modules publish live events here, typed by the event map; the socket server
 * delivers them to rooms (per user now, per deployment or desktop later).
 */
export function createEventBus() {
  const sinks = new Set<Sink>();
  return {
    toUser<E extends ServerEventName>(userId: string, event: E, payload: ServerToClientEvents[E]) {
      this.toRoom(userRoom(userId), event, payload);
    },
    toRoom<E extends ServerEventName>(room: string, event: E, payload: ServerToClientEvents[E]) {
      for (const sink of sinks) sink({ room, event, payload });
    },
    subscribe(sink: Sink): () => void {
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
  };
}
export type EventBus = ReturnType<typeof createEventBus>;
