/**
 * The desktop as the portal shows it (GET /user/desktops, desktop_* events, deployments, bookings,
 * media and templates that hand back a desktop), built in one query. It lives below the areas
 * (modules/shared) so that every area can show a desktop without importing the desktops area.
 */
import { and, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import {
  formatBookingDate, LIST_PER_PAGE_DEFAULT, ON_HYPERVISOR, sortViewers, statusIn, VIEWERS_NEEDING_IP, type TDesktop, type TDesktopField, type TListPaging, type TViewer,
} from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import { qualified } from '../../db/qualified';
import type { DomainRow } from './domains';
import type { Clock } from '../../scheduler/clock';
import { domainHostNameSql } from './hypervisor-state';

/* A desktop's booking fields (the bookings module writes bookings; the view reads the next one). */

type DesktopRef = { bookingId: string | null; scheduledShutdownAt: Date | null };
export type DesktopBookingFields = {
  booking_id: string | false;
  next_booking_start: string | null;
  next_booking_end: string | null;
  scheduled: { shutdown: string | false };
};
/** A desktop's next (or current) booking, as `nextDesktopBookingSql` reads it: epoch seconds. */
export type NextBooking = { start: number; end: number } | null;

/**
 * The next (or current) booking of a desktop or of its deployment: a subquery correlated with the
 * `domains` row of the query it is selected in (one index probe of `bookings_item_idx` per row).
 */
export function nextDesktopBookingSql(now: Date | SQL) {
  const b = schema.bookings;
  const [start, end, itemType, itemId] = [b.start, b.end, b.itemType, b.itemId].map(qualified);
  const upcoming = sql`${end} > ${now instanceof Date ? now.toISOString() : now}::timestamptz`;
  // Asked once whether any booking is to come (most of the time none): only then per row.
  return sql<NextBooking>`case when exists (select 1 from ${b} where ${upcoming}) then
    (select json_build_object('start', extract(epoch from ${start}), 'end', extract(epoch from ${end}))
      from ${b}
      where ${upcoming}
        and ((${itemType} = 'desktop' and ${itemId} = ${qualified(schema.domains.id)})
          or (${itemType} = 'deployment' and ${itemId} = ${qualified(schema.domains.tag)}))
      order by ${start} limit 1)
    end`;
}

/**
 * The booking fields of the desktop view: the booking in progress, the next (or current) booking
 * of the desktop or of its deployment, and when the scheduler will stop it.
 */
export function desktopBookingFields(row: DesktopRef, next: NextBooking): DesktopBookingFields {
  const date = (epoch: number) => formatBookingDate(new Date(Number(epoch) * 1000));
  return {
    booking_id: row.bookingId ?? false,
    next_booking_start: next ? date(next.start) : null,
    next_booking_end: next ? date(next.end) : null,
    scheduled: { shutdown: row.scheduledShutdownAt ? formatBookingDate(row.scheduledShutdownAt) : false },
  };
}

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** When the server will force-stop a desktop that is shutting down (ISO 8601), else null. */
export const forceStopAtOf = (row: { status: string; forceStopAt: Date | null }) =>
  row.status === 'Shutting-down' && row.forceStopAt ? row.forceStopAt.toISOString() : null;

/** guest_properties.viewers keys (browser_vnc…) → viewer names (browser-vnc…), in display order. */
/** A viewer's key in a desktop's guest properties (`browser_vnc`) as its name (`browser-vnc`). */
export const viewerName = (key: string) => key.replace('_', '-') as TViewer;

export function viewersOf(row: Pick<DomainRow, 'guestProperties' | 'guestIp'>): TViewer[] {
  const names = Object.keys(row.guestProperties.viewers).map(viewerName);
  // Viewers that need the guest's address are offered only once it has one.
  return sortViewers(names.filter((v) => !VIEWERS_NEEDING_IP.includes(v) || row.guestIp));
}

/** What a desktop's view needs beyond its own row, read in the same query as the row (`desktopExtras`). */
export type DesktopExtras = {
  userName: string | null;
  groupName: string | null;
  categoryName: string | null;
  /** its disks' storage ids, by position */
  storage: string[];
  /** the rights its deployment gives the student (e.g. `recreate`) */
  permissions: string[] | null;
  next: NextBooking;
  /** the name of the host it is on (read for every row: the view shows it only while the desktop runs) */
  hostName: string | null;
};

/** The fields of `DesktopExtras`: joins on the owners and the deployment, correlated subqueries for the disks and the booking. */
function desktopExtras(now: Date | SQL): Record<keyof DesktopExtras, SQL> {
  const dd = schema.domainDisks;
  return {
    userName: qualified(schema.users.name),
    groupName: qualified(schema.groups.name),
    categoryName: qualified(schema.categories.name),
    storage: sql`coalesce((select json_agg(${qualified(dd.storageId)} order by ${qualified(dd.position)}) from ${dd}
      where ${qualified(dd.domainId)} = ${qualified(schema.domains.id)}), '[]'::json)`,
    permissions: qualified(schema.deployments.userPermissions),
    next: nextDesktopBookingSql(now),
    hostName: domainHostNameSql(),
  };
}

/** The columns of a domain row that its desktop view reads. */
const VIEW_COLUMNS = {
  id: schema.domains.id,
  name: schema.domains.name,
  description: schema.domains.description,
  status: schema.domains.status,
  persistent: schema.domains.persistent,
  templateId: schema.domains.templateId,
  guestProperties: schema.domains.guestProperties,
  icon: schema.domains.icon,
  image: schema.domains.image,
  guestIp: schema.domains.guestIp,
  tag: schema.domains.tag,
  tagVisible: schema.domains.tagVisible,
  server: schema.domains.server,
  accessedAt: schema.domains.accessedAt,
  userId: schema.domains.userId,
  groupId: schema.domains.groupId,
  categoryId: schema.domains.categoryId,
  hardware: schema.domains.hardware,
  currentAction: schema.domains.currentAction,
  bookingId: schema.domains.bookingId,
  scheduledShutdownAt: schema.domains.scheduledShutdownAt,
  forceStopAt: schema.domains.forceStopAt,
} as const;
export type DesktopViewRow = Pick<DomainRow, keyof typeof VIEW_COLUMNS>;

type RowWithExtras = DesktopViewRow & { x: DesktopExtras };
/** What a view is read with: the database, and the context's clock (a desktop's next booking is the one after its "now"). */
export type ViewSource = { db: Db; clock: Pick<Clock, 'now'> };
const jsonObject = (fields: Record<string, SQL>) =>
  sql`json_build_object(${sql.join(Object.entries(fields).map(([k, v]) => sql`${sql.raw(`'${k}'`)}, ${v}`), sql`, `)})`;

/**
 * One query: the domains of `where` by name (a page of them when asked, then with the count of all), each with what its
 * view needs. The database packs the list as one JSON text (reading a thousand rows column by column costs the embedded
 * database ten times more), parsed here at once. `now`: the moment a desktop's next booking is after.
 */
function viewsQuery(where: SQL | undefined, now: Date | SQL, paging?: { limit: number; offset: number }) {
  const d = schema.domains;
  const row = jsonObject({
    ...Object.fromEntries(Object.entries(VIEW_COLUMNS).map(([k, c]) => [k, qualified(c)])),
    x: jsonObject(desktopExtras(now)),
  });
  const total = paging ? sql`(select count(*) from ${d} where ${where ?? sql`true`})` : sql`null`;
  const join = (t: typeof schema.users | typeof schema.groups | typeof schema.categories | typeof schema.deployments, id: SQL) =>
    sql`left join ${t} on ${qualified(t.id)} = ${id}`;
  const inner = sql`select ${row} as j, ${qualified(d.name)} as name, ${qualified(d.id)} as id, ${total} as total
    from ${d}
    ${join(schema.users, qualified(d.userId))} ${join(schema.groups, qualified(d.groupId))}
    ${join(schema.categories, qualified(d.categoryId))} ${join(schema.deployments, qualified(d.tag))}
    ${where ? sql`where ${where}` : sql``}
    order by ${qualified(d.name)}, ${qualified(d.id)}
    ${paging ? sql`limit ${paging.limit} offset ${paging.offset}` : sql``}`;
  return { list: sql<string>`coalesce(json_agg(t.j order by t.name, t.id), '[]')::text`, total: sql<string | number | null>`max(t.total)`, from: sql`(${inner}) t` };
}

/**
 * The views of desktops by id, as a named prepared statement built once per database: every desktop event reads it (a
 * class's thirty givings, thirty times), and building the query above costs more than running it (~300 KB of garbage
 * each time, and the database's parse and plan).
 */
const viewsByIds = preparedQuery((db, name) => {
  const q = viewsQuery(sql`${qualified(schema.domains.id)} = any(${sql.placeholder('ids')}::text[])`, sql`${sql.placeholder('now')}`);
  return db.select({ list: q.list, total: q.total }).from(q.from).prepare(name);
});

type Dated = 'accessedAt' | 'scheduledShutdownAt' | 'forceStopAt';
/** The rows of a views query's answer: its JSON list parsed, its dates as dates. */
function viewRows(answer: { list: string; total: string | number | null } | undefined) {
  const rows = JSON.parse(answer!.list) as (Omit<RowWithExtras, Dated> & Record<Dated, string | null>)[];
  const date = (s: string | null) => (s === null ? null : new Date(s));
  const out: RowWithExtras[] = rows.map((r) => ({ ...r, accessedAt: date(r.accessedAt), scheduledShutdownAt: date(r.scheduledShutdownAt), forceStopAt: date(r.forceStopAt) }));
  return { rows: out, total: answer!.total === null ? null : Number(answer!.total) };
}

async function selectWithExtras({ db, clock }: ViewSource, where: SQL | undefined, paging?: { limit: number; offset: number }) {
  const q = viewsQuery(where, clock.now(), paging);
  const result = await db.execute(sql`select ${q.list} as list, ${q.total} as total from ${q.from}`);
  return viewRows((result as unknown as { rows: { list: string; total: string | number | null }[] }).rows[0]);
}

/** `selectWithExtras` of the desktops `ids`, through the prepared statement. */
async function selectByIds({ db, clock }: ViewSource, ids: string[]) {
  const [answer] = await viewsByIds(db).execute({ ids, now: clock.now().toISOString() });
  return viewRows(answer);
}

/** The desktop as GET /user/desktops and the desktop_* events carry it (reference §2.5): built from the row, no query. */
export function desktopView(row: DesktopViewRow, x: DesktopExtras): TDesktop {
  const booking = desktopBookingFields(row, x.next);
  // In the contract's order, nested objects too (as zod wrote them before: the database's JSON orders keys its own way).
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    state: row.status,
    type: row.persistent ? 'persistent' : 'nonpersistent',
    template: row.templateId,
    viewers: viewersOf(row),
    icon: row.icon,
    image: { id: row.image.id, type: row.image.type, url: row.image.url },
    ip: row.guestIp,
    progress: null,
    editable: row.tag === null,
    scheduled: booking.scheduled,
    force_stop_at: forceStopAtOf(row),
    server: row.server,
    accessed: epoch(row.accessedAt),
    tag: row.tag ?? false,
    visible: row.tagVisible,
    user: row.userId,
    user_name: x.userName,
    group: row.groupId,
    group_name: x.groupName,
    category: row.categoryId,
    category_name: x.categoryName,
    reservables: { vgpus: row.hardware.reservables.vgpus },
    interfaces: row.hardware.interfaces.map((i) => ({ id: i.id, mac: i.mac })),
    current_action: row.currentAction,
    storage: x.storage,
    permissions: (row.tag && x.permissions) || [],
    needs_booking: Boolean(row.hardware.reservables.vgpus?.length),
    next_booking_start: booking.next_booking_start,
    next_booking_end: booking.next_booking_end,
    booking_id: booking.booking_id,
    vcpus: row.hardware.vcpus,
    memory: row.hardware.memoryMb / 1024,
    hypervisor: statusIn(ON_HYPERVISOR, row.status) ? x.hostName : null,
  };
}

/** The views of desktops as they stand now, by id: rows and extras in one query (in no particular order). */
export async function currentDesktopViews(src: ViewSource, ids: string[]): Promise<TDesktop[]> {
  if (ids.length === 0) return [];
  const { rows } = await selectByIds(src, ids);
  return rows.map((r) => desktopView(r, r.x));
}

/** The views of rows the caller holds (events: the row as just written), their extras in one query. */
export async function desktopViews(src: ViewSource, rows: DomainRow[]): Promise<TDesktop[]> {
  if (rows.length === 0) return [];
  const { rows: found } = await selectByIds(src, rows.map((r) => r.id));
  const extras = new Map(found.map((f) => [f.id, f.x]));
  const none: DesktopExtras = { userName: null, groupName: null, categoryName: null, storage: [], permissions: null, next: null, hostName: null };
  return rows.map((row) => desktopView(row, extras.get(row.id) ?? none));
}

export type DesktopListOptions = TListPaging & { fields?: readonly TDesktopField[] };
/** A list's items and, when paged, the whole list's length. */
export type ListOf<T> = { items: T[]; total: number | null };

/**
 * Desktops and their views in one query (rows, owners' names, disks, deployment rights and next
 * booking; with paging also the whole list's length), by name: the whole list, or the page asked.
 */
export async function listDesktops(src: ViewSource, where: SQL | undefined, paging: TListPaging = {}): Promise<ListOf<{ row: DesktopViewRow; view: TDesktop }>> {
  const paged = paging.page !== undefined || paging.per_page !== undefined;
  const perPage = paging.per_page ?? LIST_PER_PAGE_DEFAULT;
  const found = await selectWithExtras(src, where, paged ? { limit: perPage, offset: ((paging.page ?? 1) - 1) * perPage } : undefined);
  const { rows } = found;
  // A page past the end has no row to carry the count: then it is asked alone.
  const total = paged ? (found.total ?? (await src.db.$count(schema.domains, where))) : null;
  return { items: rows.map((r) => ({ row: r, view: desktopView(r, r.x) })), total };
}

/** The list's views, whole or with only the `fields` asked. */
export async function listDesktopViews(src: ViewSource, where: SQL | undefined, opts: DesktopListOptions = {}): Promise<ListOf<Partial<TDesktop>>> {
  const { items, total } = await listDesktops(src, where, opts);
  return { items: items.map(({ view }) => (opts.fields ? pick(view, opts.fields) : view)), total };
}

/** Only the named top-level fields of an object, in the order named. */
export function pick<T extends object, K extends keyof T>(item: T, fields: readonly K[]): Partial<T> {
  const out: Partial<T> = {};
  for (const f of fields) out[f] = item[f];
  return out;
}

/** The desktops a user sees on their screen: their own, deployment ones only while visible. */
export async function userDesktops(src: ViewSource, userId: string, opts: DesktopListOptions = {}) {
  return listDesktopViews(src, userDesktopsWhere(userId), opts);
}

/**
 * Whether a desktop shows in its owner's list (userDesktopsWhere's rule for one row): a deployment's while visible, a
 * pool's once given. The list counters' trigger holds the same rule (`desktop_list_shows`, migration 0037): a write to a
 * row shown neither before nor after raises nobody's counter.
 */
export const shownToOwner = (row: Pick<DomainRow, 'kind' | 'tag' | 'tagVisible' | 'poolId' | 'poolAssignedAt'>) =>
  row.kind === 'desktop' && (row.tag === null || row.tagVisible) && (row.poolId === null || row.poolAssignedAt !== null);

export function userDesktopsWhere(userId: string) {
  const d = schema.domains;
  // A pool's desktop shows once it is given to its person (before, it waits, prepared, in nobody's list).
  return and(eq(d.userId, userId), eq(d.kind, 'desktop'), or(isNull(d.tag), eq(d.tagVisible, true)), or(isNull(d.poolId), isNotNull(d.poolAssignedAt)));
}
