import type { AdminEventName, AdminServerEvents, ServerEventName, ServerToClientEvents } from '@vdi/contracts';

/**
 * `admin`: a room of the administration console's namespace (/administrators), else /userspace. Several rooms: one
 * emit reaches each socket in any of them once.
 */
export type Delivery = { room: string | string[]; event: ServerEventName | AdminEventName; payload: unknown; admin?: true };
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
    /** To several people at once: one delivery (one message between server processes), each socket once. */
    toUsers<E extends ServerEventName>(userIds: readonly string[], event: E, payload: ServerToClientEvents[E]) {
      if (!userIds.length) return;
      const room = userIds.map(userRoom);
      for (const sink of sinks) sink({ room, event, payload });
    },
    /** To a room of /administrators (see `socket/admins.ts` `notifyAdmins`). */
    toAdminRoom<E extends AdminEventName>(room: string, event: E, payload: AdminServerEvents[E]) {
      for (const sink of sinks) sink({ room, event, payload, admin: true });
    },
    subscribe(sink: Sink): () => void {
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
  };
}
export type EventBus = ReturnType<typeof createEventBus>;
