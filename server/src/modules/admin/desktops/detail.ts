import { and, asc, desc, eq, gt, inArray, notInArray, or } from 'drizzle-orm';
import { DESKTOP_EVENT_KINDS, type TAdminDesktopDetail, type TDesktopEventKind, type TDesktopHistory, type TDesktopHistoryItem } from '@vdi/contracts';
import { schema, type Db } from '../../../db';
import type { DomainRow } from '../../shared/domains';
import { adminDesktopViews } from './list';

const iso = (v: Date | string) => new Date(v).toISOString();
/** The history's length: the newest events of a desktop. */
export const HISTORY_LIMIT = 200;
/** Audit actions the recorded events already tell (the console's own start, stop… of the desktop). */
const TOLD_BY_EVENTS = ['desktop.start', 'desktop.stop', 'desktop.force_stop', 'desktop.reset'];

/** Hypervisor ids to their names (a removed one keeps its id). */
async function hostNames(db: Db, ids: (string | null | undefined)[]) {
  const wanted = [...new Set(ids.filter((x): x is string => Boolean(x)))];
  const rows = wanted.length ? await db.select({ id: schema.hypervisors.id, name: schema.hypervisors.name }).from(schema.hypervisors).where(inArray(schema.hypervisors.id, wanted)) : [];
  const names = new Map(rows.map((r) => [r.id, r.name]));
  return (id: string | null | undefined) => (id ? (names.get(id) ?? id) : null);
}

/** The console's page of one desktop: the list's facts, its hardware, disks, bookings and deployment. */
export async function adminDesktopDetail(db: Db, row: DomainRow, now: Date): Promise<TAdminDesktopDetail> {
  const [view] = await adminDesktopViews(db, [row.id]);
  const s = schema.storage;
  const b = schema.bookings;
  const [disks, bookings, deployment] = await Promise.all([
    db
      .select({ id: s.id, format: s.format, status: s.status, size: s.virtualSize, used: s.actualSize, hypervisor: s.hypervisorId })
      .from(schema.domainDisks)
      .innerJoin(s, eq(s.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, row.id))
      .orderBy(asc(schema.domainDisks.position)),
    db
      .select({ id: b.id, title: b.title, start: b.start, end: b.end, units: b.units })
      .from(b)
      .where(and(or(and(eq(b.itemType, 'desktop'), eq(b.itemId, row.id)), row.tag ? and(eq(b.itemType, 'deployment'), eq(b.itemId, row.tag)) : undefined), gt(b.end, now)))
      .orderBy(asc(b.start))
      .limit(20),
    row.tag
      ? db.select({ username: schema.users.username }).from(schema.deployments).innerJoin(schema.users, eq(schema.users.id, schema.deployments.userId)).where(eq(schema.deployments.id, row.tag))
      : Promise.resolve([]),
  ]);
  const hostName = await hostNames(db, disks.map((d) => d.hypervisor));
  const h = row.hardware;
  return {
    ...view!,
    current_action: row.currentAction,
    hardware: {
      boot_order: h.bootOrder,
      disk_bus: h.diskBus,
      videos: h.videos,
      interfaces: h.interfaces.map((i) => i.id),
      isos: h.isos.length,
      floppies: h.floppies.length,
      vgpus: h.reservables.vgpus ?? [],
    },
    disks: disks.map((d) => ({ id: d.id, format: d.format, status: d.status, size: Number(d.size), used: Number(d.used), hypervisor: hostName(d.hypervisor) })),
    bookings: bookings.map((x) => ({ id: x.id, title: x.title, start: iso(x.start), end: iso(x.end), units: x.units })),
    scheduled_shutdown: row.scheduledShutdownAt ? iso(row.scheduledShutdownAt) : null,
    deployment_owner: deployment[0]?.username ?? null,
  };
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
const isKind = (k: string): k is TDesktopEventKind => (DESKTOP_EVENT_KINDS as readonly string[]).includes(k);

/**
 * A desktop's history, newest first: what its lifecycle recorded (desktop_events), the audit log's
 * entries about it (edits, support's screen…) and its creation; with the sums the page shows.
 */
export async function adminDesktopHistory(db: Db, row: DomainRow): Promise<TDesktopHistory> {
  const e = schema.desktopEvents;
  const a = schema.auditLog;
  const [events, audits] = await Promise.all([
    db
      .select({ at: e.at, kind: e.kind, actorName: e.actorName, username: schema.users.username, detail: e.detail })
      .from(e)
      .leftJoin(schema.users, eq(schema.users.id, e.actorId))
      .where(eq(e.desktopId, row.id))
      .orderBy(desc(e.at), desc(e.id))
      .limit(HISTORY_LIMIT),
    db
      .select({ at: a.at, action: a.action, actor: a.actorName })
      .from(a)
      .where(and(eq(a.objectType, 'desktop'), eq(a.objectId, row.id), notInArray(a.action, TOLD_BY_EVENTS)))
      .orderBy(desc(a.at))
      .limit(HISTORY_LIMIT),
  ]);
  const hostName = await hostNames(db, events.map((x) => str(x.detail.hypervisor)));
  const blank = { action: null, actor: null, hypervisor: null, reason: null, seconds: null, protocol: null };
  const items: TDesktopHistoryItem[] = [
    ...events.filter((x) => isKind(x.kind)).map((x) => ({
      ...blank,
      at: iso(x.at),
      kind: x.kind as TDesktopEventKind,
      actor: str(x.actorName) ?? x.username ?? null,
      hypervisor: hostName(str(x.detail.hypervisor)),
      reason: str(x.detail.reason),
      seconds: typeof x.detail.seconds === 'number' ? x.detail.seconds : null,
      protocol: str(x.detail.protocol),
    })),
    ...audits.map((x) => ({ ...blank, at: iso(x.at), kind: 'audit' as const, action: x.action, actor: x.actor || null })),
    { ...blank, at: iso(row.createdAt), kind: 'created' as const },
  ].sort((x, y) => y.at.localeCompare(x.at));
  const viewers: Record<string, number> = {};
  for (const x of items) if (x.kind === 'viewer' && x.protocol) viewers[x.protocol] = (viewers[x.protocol] ?? 0) + 1;
  return {
    items,
    summary: {
      starts: items.filter((x) => x.kind === 'started').length,
      failures: items.filter((x) => x.kind === 'start_failed').length,
      seconds: items.reduce((n, x) => n + (x.kind === 'stopped' ? (x.seconds ?? 0) : 0), 0),
      viewers,
    },
  };
}
