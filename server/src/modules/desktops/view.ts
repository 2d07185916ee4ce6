import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import { sortViewers, VIEWERS_NEEDING_IP, type TDesktop, type TViewer } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { desktopBookingFields } from '../bookings/view';
import { ownerNamesOf } from '../access/owner-names';

export type DomainRow = typeof schema.domains.$inferSelect;

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** guest_properties.viewers keys (browser_vnc…) → viewer names (browser-vnc…), in display order. */
export function viewersOf(row: DomainRow): TViewer[] {
  const names = Object.keys(row.guestProperties.viewers).map((k) => k.replace('_', '-') as TViewer);
  // Viewers that need the guest's address are offered only once it has one.
  return sortViewers(names.filter((v) => !VIEWERS_NEEDING_IP.includes(v) || row.guestIp));
}

/** A deployment's desktop carries the rights its deployment gives the students (e.g. `recreate`). */
async function studentPermissionsOf(db: Db, rows: DomainRow[]) {
  const tags = [...new Set(rows.map((r) => r.tag).filter((t): t is string => Boolean(t)))];
  const found = tags.length
    ? await db.select({ id: schema.deployments.id, perms: schema.deployments.userPermissions }).from(schema.deployments).where(inArray(schema.deployments.id, tags))
    : [];
  return new Map(found.map((d) => [d.id, d.perms]));
}

async function namesOf(db: Db, rows: DomainRow[]) {
  const [names, disks] = await Promise.all([
    ownerNamesOf(db, rows),
    rows.length
      ? db.select().from(schema.domainDisks).where(inArray(schema.domainDisks.domainId, rows.map((r) => r.id))).orderBy(asc(schema.domainDisks.position))
      : [],
  ]);
  return { ...names, disks };
}

/** The desktop as GET /user/desktops and the desktop_* events carry it (reference §2.5). */
export async function desktopViews(db: Db, rows: DomainRow[]): Promise<TDesktop[]> {
  const n = await namesOf(db, rows);
  const perms = await studentPermissionsOf(db, rows);
  const booking = await desktopBookingFields(db, rows);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    state: row.status,
    type: row.persistent ? 'persistent' : 'nonpersistent',
    template: row.templateId,
    viewers: viewersOf(row),
    icon: row.icon,
    image: row.image,
    ip: row.guestIp,
    progress: null,
    editable: row.tag === null,
    server: row.server,
    accessed: epoch(row.accessedAt),
    tag: row.tag ?? false,
    visible: row.tagVisible,
    user: row.userId,
    user_name: n.users.get(row.userId) ?? null,
    group: row.groupId,
    group_name: n.groups.get(row.groupId) ?? null,
    category: row.categoryId,
    category_name: n.cats.get(row.categoryId) ?? null,
    reservables: { vgpus: row.hardware.reservables.vgpus },
    interfaces: row.hardware.interfaces,
    current_action: row.currentAction,
    storage: n.disks.filter((d) => d.domainId === row.id).map((d) => d.storageId),
    permissions: (row.tag && perms.get(row.tag)) || [],
    needs_booking: Boolean(row.hardware.reservables.vgpus?.length),
    ...booking.get(row.id)!,
    vcpus: row.hardware.vcpus,
    memory: row.hardware.memoryMb / 1024,
  }));
}

export async function findDomains(db: Db, where: SQL | undefined) {
  return db.select().from(schema.domains).where(where).orderBy(asc(schema.domains.name));
}

/** The desktops a user sees on their screen: their own, deployment ones only while visible. */
export async function userDesktops(db: Db, userId: string) {
  const rows = await findDomains(db, and(eq(schema.domains.userId, userId), eq(schema.domains.kind, 'desktop')));
  return desktopViews(db, rows.filter((r) => r.tag === null || r.tagVisible));
}

export async function findDomain(db: Db, id: string) {
  return (await db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0];
}

/** The owner of a desktop (quotas and limits are theirs, whoever presses start). */
export async function ownerOf(db: Db, row: DomainRow) {
  const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, row.userId));
  if (!owner) throw new Error(`desktop ${row.id} has no owner`);
  return owner;
}
