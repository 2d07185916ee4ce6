import { and, asc, desc, eq, gt, inArray, notInArray, or, sql, type AnyColumn } from 'drizzle-orm';
import { DESKTOP_EVENT_KINDS, DESKTOP_HISTORY_PAGE, type TAdminDesktopDetail, type TDesktopEventKind, type TDesktopHistory, type TDesktopHistoryItem } from '@vdi/contracts';
import { schema, type Db } from '../../../db';
import type { DomainRow } from '../../shared/domains';
import { adminDesktopViews } from './list';
import { compareHistory, encodeHistoryCursor, HISTORY_SOURCE_RANK, type HistoryCursor } from '../../desktops/events';

const iso = (v: Date | string) => new Date(v).toISOString();
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

/** A timestamp column as whole microseconds since the epoch (text: exact, whatever the driver makes of numbers). */
const micros = (col: AnyColumn) => sql<string>`((extract(epoch from ${col}) * 1000000)::bigint)::text`;

/**
 * A page of a desktop's history, newest first: what its lifecycle recorded (desktop_events), the audit log's
 * entries about it (edits, support's screen…) and its creation, at most DESKTOP_HISTORY_PAGE lines; with
 * `cursor` (a page's `next_cursor`) the lines older than that page. The sums are of the whole history.
 */
export async function adminDesktopHistory(db: Db, row: DomainRow, cursor: HistoryCursor | null = null): Promise<TDesktopHistory> {
  const e = schema.desktopEvents;
  const a = schema.auditLog;
  // Each source's lines after the cursor in the history's order (time, source, id; descending): one more than a
  // page from each is enough to fill the page and know whether more follow.
  const after = (col: AnyColumn, idCol: AnyColumn, rank: number) =>
    cursor
      ? sql`((extract(epoch from ${col}) * 1000000)::bigint, ${rank}::int, ${idCol}) < (${cursor.us.toString()}::bigint, ${HISTORY_SOURCE_RANK[cursor.source]}::int, ${cursor.id.toString()}::bigint)`
      : undefined;
  const [events, audits, sums, viewerRows] = await Promise.all([
    db
      .select({ id: e.id, us: micros(e.at), at: e.at, kind: e.kind, actorName: e.actorName, username: schema.users.username, detail: e.detail })
      .from(e)
      .leftJoin(schema.users, eq(schema.users.id, e.actorId))
      .where(and(eq(e.desktopId, row.id), inArray(e.kind, [...DESKTOP_EVENT_KINDS]), after(e.at, e.id, HISTORY_SOURCE_RANK.e)))
      .orderBy(desc(e.at), desc(e.id))
      .limit(DESKTOP_HISTORY_PAGE + 1),
    db
      .select({ id: a.id, us: micros(a.at), at: a.at, action: a.action, actor: a.actorName })
      .from(a)
      .where(and(eq(a.objectType, 'desktop'), eq(a.objectId, row.id), notInArray(a.action, TOLD_BY_EVENTS), after(a.at, a.id, HISTORY_SOURCE_RANK.a)))
      .orderBy(desc(a.at), desc(a.id))
      .limit(DESKTOP_HISTORY_PAGE + 1),
    db
      .select({
        starts: sql<number>`count(*) filter (where ${e.kind} = 'started')::int`,
        failures: sql<number>`count(*) filter (where ${e.kind} = 'start_failed')::int`,
        seconds: sql<string>`coalesce(sum((${e.detail}->>'seconds')::numeric) filter (where ${e.kind} = 'stopped' and jsonb_typeof(${e.detail}->'seconds') = 'number'), 0)::text`,
      })
      .from(e)
      .where(eq(e.desktopId, row.id)),
    db
      .select({ protocol: sql<string>`${e.detail}->>'protocol'`, n: sql<number>`count(*)::int` })
      .from(e)
      .where(and(eq(e.desktopId, row.id), eq(e.kind, 'viewer'), sql`coalesce(${e.detail}->>'protocol', '') <> ''`))
      .groupBy(sql`${e.detail}->>'protocol'`),
  ]);
  const hostName = await hostNames(db, events.map((x) => str(x.detail.hypervisor)));
  const blank = { action: null, actor: null, hypervisor: null, reason: null, seconds: null, protocol: null };
  type Line = { key: HistoryCursor; item: TDesktopHistoryItem };
  const created: HistoryCursor = { us: BigInt(new Date(row.createdAt).getTime()) * 1000n, source: 'c', id: 0n };
  const lines: Line[] = [
    ...events.map((x) => ({
      key: { us: BigInt(x.us), source: 'e' as const, id: BigInt(x.id) },
      item: {
        ...blank,
        at: iso(x.at),
        kind: x.kind as TDesktopEventKind,
        actor: str(x.actorName) ?? x.username ?? null,
        hypervisor: hostName(str(x.detail.hypervisor)),
        reason: str(x.detail.reason),
        seconds: typeof x.detail.seconds === 'number' ? x.detail.seconds : null,
        protocol: str(x.detail.protocol),
      },
    })),
    ...audits.map((x) => ({ key: { us: BigInt(x.us), source: 'a' as const, id: BigInt(x.id) }, item: { ...blank, at: iso(x.at), kind: 'audit' as const, action: x.action, actor: x.actor || null } })),
    ...(!cursor || compareHistory(cursor, created) < 0 ? [{ key: created, item: { ...blank, at: iso(row.createdAt), kind: 'created' as const } }] : []),
  ].sort((x, y) => compareHistory(x.key, y.key));
  const page = lines.slice(0, DESKTOP_HISTORY_PAGE);
  const viewers: Record<string, number> = {};
  for (const v of viewerRows) viewers[v.protocol] = v.n;
  return {
    items: page.map((x) => x.item),
    next_cursor: lines.length > DESKTOP_HISTORY_PAGE ? encodeHistoryCursor(page[page.length - 1]!.key) : null,
    summary: { starts: sums[0]?.starts ?? 0, failures: sums[0]?.failures ?? 0, seconds: Number(sums[0]?.seconds ?? 0), viewers },
  };
}
