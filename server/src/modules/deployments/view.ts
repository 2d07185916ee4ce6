import { and, asc, eq, gt, inArray } from 'drizzle-orm';
import {
  CREATING, GUEST_UP, RUNNING_STATUSES, statusIn, type TDeployment, type TDeploymentCreation, type TDeploymentDesktop, type TDesktop, type TListPaging,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { DomainRow } from '../shared/domains';
import { desktopViews, listDesktops, pick, type DesktopViewRow, type ListOf } from '../shared/desktop-view';
import { rightsOn, type DeploymentRow } from './access';
import { choosableWhere } from '../access/permissions';
import { type Actor } from '../../auth/caller';

type TDeploymentDesktopField = keyof TDeploymentDesktop;

export const DEPLOYMENT_JOB = 'deployment_create';

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

export async function desktopsOf(db: Db, deploymentIds: string[]): Promise<DomainRow[]> {
  if (deploymentIds.length === 0) return [];
  return db
    .select()
    .from(schema.domains)
    .where(and(eq(schema.domains.kind, 'desktop'), inArray(schema.domains.tag, deploymentIds)))
    .orderBy(asc(schema.domains.name));
}

/** The progress of the creation job running for a deployment, if any. */
export async function creationOf(ctx: AppContext, deploymentId: string): Promise<TDeploymentCreation | null> {
  return creationFrom(await ctx.jobs.activeFor(deploymentId, DEPLOYMENT_JOB));
}

function creationFrom(job: { params: unknown } | undefined): TDeploymentCreation | null {
  if (!job) return null;
  const p = job.params as { created?: number; failed?: number; userIds?: string[] };
  return { created: p.created ?? 0, failed: p.failed ?? 0, total: p.userIds?.length ?? 0 };
}

/** The creation jobs running for deployments, by deployment (one query for a whole list). */
async function creationsOf(db: Db, ids: string[]) {
  const jobs = await db
    .select({ targetId: schema.jobs.targetId, params: schema.jobs.params })
    .from(schema.jobs)
    .where(and(inArray(schema.jobs.targetId, ids), eq(schema.jobs.kind, DEPLOYMENT_JOB), inArray(schema.jobs.status, ['queued', 'running'])));
  const out = new Map<string, TDeploymentCreation | null>();
  for (const j of jobs) if (j.targetId && !out.has(j.targetId)) out.set(j.targetId, creationFrom(j));
  return out;
}

/** Items grouped by a key, in their order. */
function groupBy<T>(items: readonly T[], key: (item: T) => string | null): Map<string | null, T[]> {
  const out = new Map<string | null, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** The next (or current) booking of a whole deployment, from the bookings the booking module keeps. */
async function nextBookings(db: Db, ids: string[], now: Date) {
  if (ids.length === 0) return new Map<string, { start: Date; end: Date }>();
  const rows = await db
    .select({ itemId: schema.bookings.itemId, start: schema.bookings.start, end: schema.bookings.end })
    .from(schema.bookings)
    .where(and(eq(schema.bookings.itemType, 'deployment'), inArray(schema.bookings.itemId, ids), gt(schema.bookings.end, now)))
    .orderBy(asc(schema.bookings.start));
  const next = new Map<string, { start: Date; end: Date }>();
  for (const r of rows) if (!next.has(r.itemId)) next.set(r.itemId, { start: r.start, end: r.end });
  return next;
}

/** Deployments as GET /deployments and the deployment(s)_* events carry them (reference §2.8), seen by `actor`. */
export async function deploymentViews(ctx: AppContext, rows: DeploymentRow[], actor: Actor): Promise<TDeployment[]> {
  const { db } = ctx;
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [desktops, owners, templates, bookings, creations] = await Promise.all([
    db
      .select({ tag: schema.domains.tag, status: schema.domains.status, visible: schema.domains.tagVisible })
      .from(schema.domains)
      .where(and(eq(schema.domains.kind, 'desktop'), inArray(schema.domains.tag, ids))),
    db.select({ id: schema.users.id, name: schema.users.name }).from(schema.users).where(inArray(schema.users.id, [...new Set(rows.map((r) => r.userId))])),
    db.select({ id: schema.domains.id, name: schema.domains.name }).from(schema.domains).where(inArray(schema.domains.id, [...new Set(rows.map((r) => r.templateId))])),
    nextBookings(db, ids, ctx.clock.now()),
    creationsOf(db, ids),
  ]);
  const desktopsBy = groupBy(desktops, (d) => d.tag);
  const ownerNames = new Map(owners.map((o) => [o.id, o.name]));
  const templateNames = new Map(templates.map((t) => [t.id, t.name]));
  const out: TDeployment[] = [];
  for (const row of rows) {
    const mine = desktopsBy.get(row.id) ?? [];
    const creation = creations.get(row.id) ?? null;
    const rights = rightsOn(actor, row);
    const booking = bookings.get(row.id);
    out.push({
      id: row.id,
      name: row.name,
      description: row.description,
      user: row.userId,
      user_name: ownerNames.get(row.userId) ?? null,
      co_owners: row.coOwners,
      allowed: row.allowed,
      tag: row.id,
      tag_name: row.name,
      tag_visible: row.visible,
      user_permissions: row.userPermissions,
      visible: row.visible,
      template: templateNames.get(row.templateId) ?? null,
      template_id: row.templateId,
      desktop_name: row.desktopName,
      totalDesktops: mine.length,
      visibleDesktops: mine.filter((d) => d.visible).length,
      startedDesktops: mine.filter((d) => statusIn(RUNNING_STATUSES, d.status)).length,
      // A running job counts what it has left (desktops it is making are "Creating" meanwhile).
      creatingDesktops: creation ? creation.total - creation.created - creation.failed : mine.filter((d) => statusIn(CREATING, d.status)).length,
      needs_booking: Boolean(row.createDict.hardware.reservables.vgpus?.length),
      next_booking_start: booking ? booking.start.toISOString() : null,
      next_booking_end: booking ? booking.end.toISOString() : null,
      booking_id: row.bookingId ?? false,
      is_owner: rights.owner,
      can_delete: rights.delete,
      can_change_owners: rights.changeOwners,
      creation,
      created: epoch(row.createdAt),
    });
  }
  return out;
}

type Photos = Map<string, string>;
async function photosOf(db: Db, userIds: string[]): Promise<Photos> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: schema.users.id, photo: schema.users.photo }).from(schema.users).where(inArray(schema.users.id, ids));
  return new Map(rows.map((p) => [p.id, p.photo]));
}

/** A deployment desktop's view: its desktop view, its user's photo and the videowall handle. */
function deploymentDesktopView(row: DesktopViewRow, view: TDesktop, photos: Photos): TDeploymentDesktop {
  // The videowall shows a desktop's screen while its guest is up (reference §2.8 `viewer`).
  const onWall = statusIn(GUEST_UP, row.status) && view.viewers.includes('browser-vnc');
  const viewer: TDeploymentDesktop['viewer'] = onWall
    ? { kind: 'browser', protocol: 'vnc', viewer: '/viewer/vnc', ticket_url: `/desktop/${row.id}/viewer/browser-vnc` }
    : false;
  return { ...view, viewer, user_photo: photos.get(row.userId) ?? '', deployment_id: row.tag ?? '' };
}

/** A deployment's desktops as the deploymentdesktop_* events carry them, each with its user's photo and the videowall handle. */
export async function deploymentDesktopViews(ctx: AppContext, rows: DomainRow[]): Promise<TDeploymentDesktop[]> {
  const [views, photos] = await Promise.all([desktopViews(ctx, rows), photosOf(ctx.db, rows.map((r) => r.userId))]);
  return views.map((view, i) => deploymentDesktopView(rows[i]!, view, photos));
}

/**
 * The desktops of GET /deployment/{id}: those the actor reaches (`reachesDesktop`, as a condition),
 * by name, whole or paged and with only the `fields` asked: the list in one query, the photos in one more.
 */
export async function deploymentDesktopList(
  ctx: AppContext,
  d: DeploymentRow,
  actor: Actor,
  opts: TListPaging & { fields?: readonly TDeploymentDesktopField[] } = {},
): Promise<ListOf<Partial<TDeploymentDesktop>>> {
  const paged = opts.page !== undefined || opts.per_page !== undefined;
  if (!rightsOn(actor, d).edit) return { items: [], total: paged ? 0 : null };
  const domains = schema.domains;
  const reach = d.userId === actor.id ? undefined : choosableWhere([actor], domains.categoryId);
  const { items, total } = await listDesktops(ctx, and(eq(domains.kind, 'desktop'), eq(domains.tag, d.id), reach), opts);
  const photos = await photosOf(ctx.db, items.map((i) => i.row.userId));
  const views = items.map(({ row, view }) => deploymentDesktopView(row, view, photos));
  return { items: opts.fields ? views.map((v) => pick(v, opts.fields!)) : views, total };
}
