import { randomUUID } from 'node:crypto';
import { and, eq, inArray, isNotNull, lt, ne, or, sql } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { TViewer } from '@vdi/contracts';
import { recordDesktopEvent } from '../desktops/events';

/**
 * Viewers open now, per desktop (browser VNC bridges, SPICE tunnels, RDP relays), and when the last
 * one closed: what the temporary-desktop inactivity limit and the idle auto-shutdown count from.
 * Shared by every server process through the database (`viewer_connections`): the process holding
 * a connection refreshes its `seen_at` every `heartbeatMs` while it is open, and a connection not
 * refreshed for `staleMs` (its process died without closing it) no longer counts as open — its last
 * refresh counts as its close. Staleness is judged on the real time (`seen_at` is written with it);
 * a close may be given the clock's time (the limits count on `ctx.clock`). Decision 0018.
 */
export type ViewerTimes = { heartbeatMs: number; staleMs: number };
export const VIEWER_TIMES: ViewerTimes = { heartbeatMs: 15_000, staleMs: 45_000 };

type Activity = {
  holder: string;
  times: ViewerTimes;
  /** Connection ids open in this process. */
  mine: Set<string>;
  timer?: NodeJS.Timeout;
};
const activities = new WeakMap<AppContext, Activity>();

function activityOf(ctx: AppContext): Activity {
  let a = activities.get(ctx);
  if (!a) activities.set(ctx, (a = { holder: randomUUID(), times: VIEWER_TIMES, mine: new Set() }));
  return a;
}

/** Other times for this process's viewers (tests: a short bound); before its first viewer. */
export function setViewerTimes(ctx: AppContext, times: ViewerTimes) {
  activityOf(ctx).times = times;
}

const c = schema.viewerConnections;

function heartbeat(ctx: AppContext, a: Activity) {
  if (a.timer || a.mine.size === 0) return;
  let beating = false;
  a.timer = setInterval(() => {
    if (a.mine.size === 0) {
      clearInterval(a.timer);
      a.timer = undefined;
      return;
    }
    if (beating) return;
    beating = true;
    ctx.db
      .update(c)
      .set({ seenAt: new Date() })
      .where(inArray(c.id, [...a.mine]))
      .catch((err) => ctx.log.warn({ err }, 'viewer heartbeat failed'))
      .finally(() => (beating = false));
  }, a.times.heartbeatMs).unref();
}

/**
 * A viewer of the desktop opened in this process: answers its close (given the clock's time when
 * the limits count on another clock). A failed write is logged: the viewer itself goes on. The desktop's
 * history records it with its viewer (`protocol`) and, when its ticket names one, the person.
 */
export async function viewerOpened(ctx: AppContext, desktopId: string, protocol?: TViewer, userId: string | null = null): Promise<(now?: number) => Promise<void>> {
  const a = activityOf(ctx);
  ctx.metrics.viewer(protocol ?? 'unknown');
  await recordDesktopEvent(ctx, desktopId, 'viewer', userId ? { by: { id: userId, username: '' } } : {}, protocol ? { protocol } : {});
  const id = randomUUID();
  const at = new Date();
  const stored = await ctx.db
    .insert(c)
    .values({ id, desktopId, holder: a.holder, openedAt: at, seenAt: at })
    .then(() => true, (err) => (ctx.log.warn({ err, desktop: desktopId }, 'viewer not recorded'), false));
  if (stored) a.mine.add(id);
  heartbeat(ctx, a);
  let closed = false;
  return async (now = Date.now()) => {
    if (closed || !stored) return;
    closed = true;
    a.mine.delete(id);
    const staleBefore = new Date(Date.now() - a.times.staleMs);
    await ctx.db
      .transaction(async (tx) => {
        // Only the latest close of a desktop matters: older closes and dead processes' connections go.
        await tx.delete(c).where(and(eq(c.desktopId, desktopId), ne(c.id, id), or(isNotNull(c.closedAt), lt(c.seenAt, staleBefore))));
        await tx.update(c).set({ closedAt: new Date(now) }).where(eq(c.id, id));
      })
      .catch((err) => ctx.log.warn({ err, desktop: desktopId }, 'viewer close not recorded'));
  };
}

/** This process stops: no more heartbeats (its viewers' closes are still recorded as they end). */
export function stopViewerHeartbeat(ctx: AppContext) {
  const a = activities.get(ctx);
  if (a?.timer) clearInterval(a.timer);
  if (a) a.timer = undefined;
}

/** How many viewers are open on the desktop in every process, and when the last one closed (ms). */
export async function viewerState(ctx: AppContext, desktopId: string): Promise<{ open: number; lastClosed: number | undefined }> {
  const staleBefore = new Date(Date.now() - activityOf(ctx).times.staleMs);
  const open = sql`${c.closedAt} IS NULL AND ${c.seenAt} >= ${staleBefore.toISOString()}::timestamptz`;
  const [row] = await ctx.db
    .select({
      open: sql<number>`count(*) FILTER (WHERE ${open})`.mapWith(Number),
      lastClosed: sql<string | null>`max(CASE WHEN ${c.closedAt} IS NOT NULL THEN ${c.closedAt} WHEN NOT (${open}) THEN ${c.seenAt} END)`,
    })
    .from(c)
    .where(eq(c.desktopId, desktopId));
  return { open: row?.open ?? 0, lastClosed: row?.lastClosed ? new Date(row.lastClosed).getTime() : undefined };
}

/** The desktop is gone: its viewers' records too (its deletion also cascades to them). */
export async function forgetViewers(ctx: AppContext, desktopId: string) {
  await ctx.db.delete(c).where(eq(c.desktopId, desktopId));
}
