import { and, eq, inArray, isNull, type SQL } from 'drizzle-orm';
import { AT_REST, AUTO_SHUTDOWN_MSG_CODE, FORCE_STOPPABLE, formatBookingDate, IDLE_SHUTDOWN_MSG_CODE, statusIn, STOPPABLE, type TSocketMessage } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import { audit } from '../../audit/record';
import type { Scheduler } from '../../scheduler/scheduler';
import { desktopRoom } from '../../socket/bus';
import { viewerState } from '../viewers/activity';
import type { DesktopLifecycle } from './lifecycle';
import type { DomainRow } from '../shared/domains';

const MINUTE = 60_000;
type PolicyRow = typeof schema.shutdownPolicies.$inferSelect;

/** What applies to one owner: the longest time started and idle (minutes, null = none), warnings (minutes before). */
export type ShutdownRule = { maxTime: number | null; idleTime: number | null; warnings: number[]; policyIds: string[] };
export type PolicyOwner = { id: string; roleId: string; categoryId: string; groupIds: string[] };

const SPECIFICITY = ['user', 'group', 'category', 'role'] as const;
const minOf = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? Math.min(...v) : null;
};

/**
 * The policy of an owner among the enabled ones: the most specific level that names them (user,
 * then their groups — primary and secondary —, then category, then role); several groups give
 * the shortest times and every warning.
 */
export function ruleOf(owner: PolicyOwner, policies: readonly PolicyRow[]): ShutdownRule | null {
  for (const kind of SPECIFICITY) {
    const targets = kind === 'user' ? [owner.id] : kind === 'group' ? owner.groupIds : kind === 'category' ? [owner.categoryId] : [owner.roleId];
    const hits = policies.filter((p) => p.enabled && p.kind === kind && targets.includes(p.targetId));
    if (hits.length === 0) continue;
    return {
      maxTime: minOf(hits.map((h) => h.maxTime)),
      idleTime: minOf(hits.map((h) => h.idleTime)),
      warnings: [...new Set(hits.flatMap((h) => h.warnings))].sort((a, b) => b - a),
      policyIds: hits.map((h) => h.id),
    };
  }
  return null;
}

export const AUTO_SHUTDOWN_JOBS = { start: 'autoshutdown.start', warn: 'autoshutdown.warn', end: 'autoshutdown.stop' } as const;
export const IDLE_CHECK_JOB = 'autoshutdown.idle';
const maxKey = (id: string) => `autoshutdown:${id}`;
const idleKey = (id: string) => `autoidle:${id}`;
/** Running and not yet being stopped (the statuses a stop is offered in). */
const isRunning = (row: DomainRow) => statusIn(STOPPABLE, row.status);

/**
 * Auto-shutdown of running desktops by policy (admin/shutdown-policies, the original's
 * desktops_priority). When a desktop reaches Started its owner's policy is resolved:
 * - longest time started: the deadline (start + max_time) is written to the desktop
 *   (`scheduled_shutdown_at`, the card's "stops automatically at…"; the list cache follows through
 *   its database trigger), warnings are scheduled `warnings` minutes before and a stop at it;
 * - idle: "idle" is no viewer open through the portal's viewer bridges (browser VNC websocket,
 *   SPICE tunnel) since the later of the desktop's start and the last viewer closing. A scheduled
 *   check re-reads that; before the idle deadline it warns the owner (and shows the deadline on the
 *   card), at the deadline it stops the desktop; a viewer opened meanwhile puts it off.
 * A desktop under a GPU booking ends with its booking instead. Every job runs on the scheduler
 * (`ctx.clock`, database rows): a restart keeps them. A policy write re-plans running desktops.
 */
export function createAutoShutdown(ctx: AppContext, lifecycle: DesktopLifecycle, scheduler: Scheduler) {
  const { db, bus, clock, log } = ctx;
  /** The clock's instant each desktop was seen started (the base of its deadlines); else its startedAt. */
  const bases = new Map<string, number>();

  async function ownerOf(userId: string, dbOrTx: Db = db): Promise<PolicyOwner | null> {
    const [u] = await dbOrTx
      .select({ id: schema.users.id, roleId: schema.users.roleId, categoryId: schema.users.categoryId, groupId: schema.users.groupId })
      .from(schema.users)
      .where(eq(schema.users.id, userId));
    if (!u) return null;
    const secondary = await dbOrTx.select({ g: schema.userSecondaryGroups.groupId }).from(schema.userSecondaryGroups).where(eq(schema.userSecondaryGroups.userId, userId));
    return { id: u.id, roleId: u.roleId, categoryId: u.categoryId, groupIds: [u.groupId, ...secondary.map((s) => s.g)] };
  }

  const enabledPolicies = () => db.select().from(schema.shutdownPolicies).where(eq(schema.shutdownPolicies.enabled, true));

  async function ruleFor(userId: string): Promise<ShutdownRule | null> {
    const owner = await ownerOf(userId);
    return owner ? ruleOf(owner, await enabledPolicies()) : null;
  }

  const baseOf = (row: DomainRow) => bases.get(row.id) ?? row.startedAt?.getTime() ?? clock.now().getTime();

  function send(row: DomainRow, msg: TSocketMessage) {
    bus.toUser(row.userId, 'msg', msg);
    bus.toRoom(desktopRoom(row.id), 'msg', msg);
  }

  /** Writes the deadline the card shows (when it changed) and tells the owner's pages. */
  async function showDeadline(row: DomainRow, at: Date | null) {
    if ((row.scheduledShutdownAt?.getTime() ?? null) === (at?.getTime() ?? null)) return;
    const [fresh] = await db
      .update(schema.domains)
      .set({ scheduledShutdownAt: at })
      .where(and(eq(schema.domains.id, row.id), isNull(schema.domains.bookingId)))
      .returning();
    if (fresh) await lifecycle.publish(fresh);
  }

  const maxDeadline = (row: DomainRow, rule: ShutdownRule | null) => (rule?.maxTime ? new Date(baseOf(row) + rule.maxTime * MINUTE) : null);

  /** One planning at a time per desktop (a start and a policy write may ask at once), each from the row as it is then. */
  const queues = new Map<string, Promise<void>>();
  function plan(row: DomainRow): Promise<void> {
    const run = (queues.get(row.id) ?? Promise.resolve()).then(async () => {
      const [fresh] = await db.select().from(schema.domains).where(eq(schema.domains.id, row.id));
      if (fresh) await planNow(fresh);
    });
    const tail = run.catch(() => undefined);
    queues.set(row.id, tail);
    void tail.then(() => queues.get(row.id) === tail && queues.delete(row.id));
    return run;
  }

  /** (Re)plans a running desktop's jobs from its owner's policy now; none when it has no policy or a booking. */
  async function planNow(row: DomainRow) {
    await scheduler.cancel(maxKey(row.id));
    await scheduler.cancel(idleKey(row.id));
    if (row.kind !== 'desktop' || !isRunning(row) || row.bookingId) return;
    const rule = await ruleFor(row.userId);
    const deadline = maxDeadline(row, rule);
    if (rule && deadline) {
      const warnings = rule.warnings.filter((w) => w < rule.maxTime!).map((minutes, i, all) => ({ minutes, type: i === all.length - 1 ? 'danger' : 'warning' }));
      await scheduler.scheduleSpan(maxKey(row.id), { start: new Date(baseOf(row)), end: deadline }, AUTO_SHUTDOWN_JOBS, { desktopId: row.id }, warnings);
    }
    await showDeadline(row, deadline);
    if (rule?.idleTime) await scheduler.schedule(IDLE_CHECK_JOB, new Date(idleSince(row, (await viewerState(ctx, row.id)).lastClosed) + rule.idleTime * MINUTE - Math.max(0, ...rule.warnings.filter((w) => w < rule.idleTime!)) * MINUTE), { key: idleKey(row.id), desktopId: row.id });
  }

  /** Since when the desktop has had no viewer (only meaningful while none is open in any process). */
  const idleSince = (row: DomainRow, lastViewerClosed: number | undefined) => Math.max(baseOf(row), lastViewerClosed ?? 0);

  const running = async (id: unknown) => {
    if (typeof id !== 'string') return null;
    const [row] = await db.select().from(schema.domains).where(eq(schema.domains.id, id));
    return row && isRunning(row) && !row.bookingId ? row : null;
  };

  async function stopNow(row: DomainRow, reason: 'max_time' | 'idle', rule: ShutdownRule | null) {
    log.info({ desktop: row.id, reason }, 'desktop stopped by its auto-shutdown policy');
    await lifecycle.stop(row, { reason: 'auto_shutdown' }).catch((err) => log.warn({ err, desktop: row.id }, 'auto-shutdown stop failed'));
    await audit(db, { id: null, name: '', role: null, categoryId: row.categoryId, address: null }, {
      action: 'desktop.auto_shutdown', objectType: 'desktop', objectId: row.id, objectName: row.name, categoryId: row.categoryId,
      detail: { owner_id: row.userId, reason, policies: rule?.policyIds ?? [] },
    });
  }

  scheduler.register(AUTO_SHUTDOWN_JOBS.start, async () => undefined);
  scheduler.register(AUTO_SHUTDOWN_JOBS.warn, async (p) => {
    const row = await running(p.desktopId);
    if (!row || !row.scheduledShutdownAt) return;
    send(row, {
      type: p.type === 'danger' ? 'danger' : 'warning',
      msg_code: AUTO_SHUTDOWN_MSG_CODE,
      params: { date: formatBookingDate(row.scheduledShutdownAt), minutes: Number(p.minutes), name: row.name, desktop_id: row.id },
    });
  }, 3);
  scheduler.register(AUTO_SHUTDOWN_JOBS.end, async (p) => {
    const row = await running(p.desktopId);
    if (row) await stopNow(row, 'max_time', await ruleFor(row.userId));
  }, 1);

  /**
   * The idle check: stops a desktop idle for its policy's time, warns before (each of the
   * policy's warnings shorter than the idle time, once per deadline), and comes back when the
   * next thing is due — or after a whole idle time while a viewer is open.
   */
  scheduler.register(IDLE_CHECK_JOB, async (p) => {
    const row = await running(p.desktopId);
    if (!row) return;
    const rule = await ruleFor(row.userId);
    if (!rule?.idleTime) return void (await showDeadline(row, maxDeadline(row, rule)));
    const now = clock.now().getTime();
    const again = (at: number, extra: Record<string, unknown> = {}) =>
      scheduler.schedule(IDLE_CHECK_JOB, new Date(Math.max(at, now)), { key: idleKey(row.id), desktopId: row.id, ...extra });
    const viewers = await viewerState(ctx, row.id);
    if (viewers.open > 0) {
      await showDeadline(row, maxDeadline(row, rule));
      return void (await again(now + rule.idleTime * MINUTE));
    }
    const deadline = idleSince(row, viewers.lastClosed) + rule.idleTime * MINUTE;
    const warnings = rule.warnings.filter((w) => w < rule.idleTime!);
    const warned = p.deadline === deadline && Array.isArray(p.warned) ? (p.warned as number[]) : [];
    if (now >= deadline) {
      if (warnings.length && warned.length === 0) {
        // Never stopped unwarned: a check that comes late warns and gives the shortest warning's time.
        const last = Math.min(...warnings);
        send(row, { type: 'danger', msg_code: IDLE_SHUTDOWN_MSG_CODE, params: { date: formatBookingDate(new Date(now + last * MINUTE)), minutes: last, name: row.name, desktop_id: row.id } });
        await showDeadline(row, new Date(now + last * MINUTE));
        return void (await again(now + last * MINUTE, { deadline: now + last * MINUTE, warned: [last] }));
      }
      return stopNow(row, 'idle', rule);
    }
    const due = warnings.filter((w) => deadline - w * MINUTE <= now && !warned.includes(w));
    if (due.length) {
      const minutes = Math.min(...due);
      const shown = new Date(Math.min(deadline, maxDeadline(row, rule)?.getTime() ?? Infinity));
      send(row, { type: minutes === Math.min(...warnings) ? 'danger' : 'warning', msg_code: IDLE_SHUTDOWN_MSG_CODE, params: { date: formatBookingDate(new Date(deadline)), minutes, name: row.name, desktop_id: row.id } });
      await showDeadline(row, shown);
      warned.push(...due);
    }
    const next = [...warnings.filter((w) => !warned.includes(w)).map((w) => deadline - w * MINUTE), deadline].filter((t) => t > now);
    await again(Math.min(...next, deadline), { deadline, warned });
  }, 1);

  /** Desktops reaching Started are planned; stopped or deleted ones lose their jobs (and the shown deadline). */
  const planned = new Set<string>();
  const onChanged = (row: DomainRow) => {
    if (row.kind !== 'desktop') return;
    if (isRunning(row)) {
      if (planned.has(row.id)) return;
      planned.add(row.id);
      if (!bases.has(row.id)) bases.set(row.id, clock.now().getTime());
      void plan(row).catch((err) => log.error({ err, desktop: row.id }, 'auto-shutdown planning failed'));
    } else if (!statusIn(FORCE_STOPPABLE, row.status)) {
      void forget(row).catch((err) => log.error({ err, desktop: row.id }, 'auto-shutdown cleanup failed'));
    }
  };
  /** Left running (stopping, stopped, deleted): no more jobs; once stopped the card shows no deadline. */
  async function forget(row: DomainRow) {
    if (planned.delete(row.id)) {
      bases.delete(row.id);
      await scheduler.cancel(maxKey(row.id));
      await scheduler.cancel(idleKey(row.id));
    }
    if (!row.bookingId && row.scheduledShutdownAt && statusIn(AT_REST, row.status)) await showDeadline(row, null);
  }
  lifecycle.changes.on('changed', onChanged);
  lifecycle.changes.on('deleted', (row) => void forget(row).catch(() => undefined));

  /** Running desktops without a booking (of the owners `which` names), planned again: a policy changed, the server started. */
  async function replanAll(which?: SQL) {
    const rows = await db
      .select()
      .from(schema.domains)
      .where(and(eq(schema.domains.kind, 'desktop'), inArray(schema.domains.status, [...STOPPABLE]), isNull(schema.domains.bookingId), which));
    for (const row of rows) {
      planned.add(row.id);
      await plan(row);
    }
    return rows.length;
  }

  return { plan, replanAll, ruleFor, ownerOf };
}
export type AutoShutdown = ReturnType<typeof createAutoShutdown>;

declare module 'fastify' {
  interface FastifyInstance {
    autoShutdown: AutoShutdown;
  }
}
