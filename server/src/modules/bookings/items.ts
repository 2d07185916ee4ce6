import { and, eq, inArray } from 'drizzle-orm';
import type { TBookingItemType } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { forbidden, notFound } from '../../http/errors';
import { canManage } from '../access/permissions';
import { type Actor } from '../../auth/caller';
import type { DomainRow } from '../shared/domains';

/** What a booking is for: one desktop, a whole deployment (one unit per desktop), or a desktop pool (one per desktop it may hold). */
export type BookingItem = {
  type: TBookingItemType;
  id: string;
  name: string;
  userId: string;
  categoryId: string;
  coOwners: string[];
  /** Deployment the desktop belongs to. */
  tag: string | null;
  profiles: string[];
  desktops: DomainRow[];
  /** A pool's size (its units), whatever it holds now. */
  size?: number;
};

/** Units one booking of the item takes. */
export const unitsOf = (item: BookingItem) => (item.type === 'desktop' ? 1 : item.size ?? Math.max(1, item.desktops.length));

export async function findItem(db: Db, type: TBookingItemType, id: string): Promise<BookingItem | null> {
  if (type === 'desktop') {
    const [row] = await db.select().from(schema.domains).where(and(eq(schema.domains.id, id), eq(schema.domains.kind, 'desktop')));
    if (!row) return null;
    return {
      type, id, name: row.name, userId: row.userId, categoryId: row.categoryId, coOwners: [], tag: row.tag,
      profiles: row.hardware.reservables.vgpus ?? [], desktops: [row],
    };
  }
  if (type === 'pool') {
    const [pool] = await db.select().from(schema.desktopPools).where(eq(schema.desktopPools.id, id));
    if (!pool) return null;
    const [template] = await db.select().from(schema.domains).where(eq(schema.domains.id, pool.templateId));
    const desktops = await db.select().from(schema.domains).where(eq(schema.domains.poolId, id));
    return {
      type, id, name: pool.name, userId: pool.userId, categoryId: pool.categoryId, coOwners: [], tag: null,
      profiles: template?.hardware.reservables.vgpus ?? [], desktops, size: pool.maxDesktops,
    };
  }
  const [d] = await db.select().from(schema.deployments).where(eq(schema.deployments.id, id));
  if (!d || d.status !== 'ready') return null;
  const desktops = await db.select().from(schema.domains).where(and(eq(schema.domains.tag, id), eq(schema.domains.kind, 'desktop')));
  return {
    type, id, name: d.name, userId: d.userId, categoryId: d.categoryId, coOwners: d.coOwners, tag: null,
    profiles: d.createDict.hardware.reservables.vgpus ?? [], desktops,
  };
}

/** Owner (and a deployment's co-owners), an admin, or a manager of the owner's category. */
export const mayBook = (actor: Actor, item: BookingItem) => canManage(actor, item) || item.coOwners.includes(actor.id);

/** The item named in a request, when the caller may see and book it. */
export async function itemFor(db: Db, actor: Actor, type: TBookingItemType, id: string): Promise<BookingItem> {
  const item = await findItem(db, type, id);
  if (!item) throw notFound(type === 'desktop' ? 'desktop_not_found' : type === 'pool' ? 'desktop_pool_not_found' : 'deployment_not_found', `No ${type} ${id}`);
  if (!mayBook(actor, item)) throw forbidden('forbidden', `Not enough rights on this ${type}`);
  return item;
}

/** Who hears about a booking of the item: its booker, the item's owners and the users of its desktops. */
export function audienceOf(item: BookingItem | null, bookerId: string): string[] {
  return [...new Set([bookerId, ...(item ? [item.userId, ...item.coOwners, ...item.desktops.map((d) => d.userId)] : [])])];
}

/** Names of desktops, deployments and desktop pools by id, for the booking views. */
export async function itemNames(db: Db, refs: { itemType: string; itemId: string }[]): Promise<Map<string, string>> {
  const ids = (t: string) => [...new Set(refs.filter((r) => r.itemType === t).map((r) => r.itemId))];
  const [desktops, deployments, pools] = await Promise.all([
    ids('desktop').length ? db.select({ id: schema.domains.id, name: schema.domains.name }).from(schema.domains).where(inArray(schema.domains.id, ids('desktop'))) : [],
    ids('deployment').length
      ? db.select({ id: schema.deployments.id, name: schema.deployments.name }).from(schema.deployments).where(inArray(schema.deployments.id, ids('deployment')))
      : [],
    ids('pool').length
      ? db.select({ id: schema.desktopPools.id, name: schema.desktopPools.name }).from(schema.desktopPools).where(inArray(schema.desktopPools.id, ids('pool')))
      : [],
  ]);
  return new Map([...desktops, ...deployments, ...pools].map((x) => [x.id, x.name]));
}

export type { UserRow };
