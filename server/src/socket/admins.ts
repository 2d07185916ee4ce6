import type { AdminEventName, AdminServerEvents } from '@vdi/contracts';
import type { AppContext } from '../context';

/** Every admin's socket of /administrators is in this room; a manager's in its category's. */
export const ADMINS_ROOM = 'admins';
export const adminCategoryRoom = (categoryId: string) => `admins:category:${categoryId}`;

/**
 * Tells the administration console of a change: admins always, and the managers of `categoryId`
 * when the change belongs to a category (null: admins only, e.g. system settings). The console
 * reads the changed rows again; payloads carry ids, not data a manager of another category could see.
 */
export function notifyAdmins<E extends AdminEventName>(
  ctx: Pick<AppContext, 'bus'>,
  categoryId: string | null,
  event: E,
  data: AdminServerEvents[E],
) {
  ctx.bus.toAdminRoom(ADMINS_ROOM, event, data);
  if (categoryId) ctx.bus.toAdminRoom(adminCategoryRoom(categoryId), event, data);
}

/**
 * Admins' sockets connected to THIS process now, per event bus (one per server): its hypervisor monitor
 * samples and publishes only while one is. Deliberately not across processes: with several, each
 * process whose admins are connected publishes (to every admin, through the shared rooms), and a
 * cluster-wide count would make every process publish the same numbers to everyone.
 */
const adminSockets = new WeakMap<object, number>();
export function adminSocketCount(ctx: Pick<AppContext, 'bus'>, delta = 0): number {
  const n = Math.max(0, (adminSockets.get(ctx.bus) ?? 0) + delta);
  adminSockets.set(ctx.bus, n);
  return n;
}
