import { randomUUID } from 'node:crypto';
import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, notInArray, sql, type SQLWrapper } from 'drizzle-orm';
import { alias, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { CREATING, GUEST_UP, RETRYABLE, STARTABLE, statusIn, type TPoolCounts, type TPoolStalled } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { LOCK_CLASSES, lockKey, schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import type { UserRow } from '../../auth/sessions';
import { findDomain, type DomainRow } from '../shared/domains';
import { createDesktopFromTemplate, creating } from '../desktops/create';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { batchWithin } from '../shared/batch';
import { viewerName } from '../shared/desktop-view';
import { viewerState } from '../viewers/activity';
import { readyVncPasswords } from '../viewers/service';
import { activeBooking } from '../bookings/start-check';
import { dailyTimePassed, targetPrepared, waitSeconds } from './schedule';
import { createPoolEvents } from './live';

export type PoolRow = typeof schema.desktopPools.$inferSelect;
/** A take's outcome: the person's desktop (held, or given now), or their place in the pool's queue. */
export type Taken = { kind: 'desktop'; row: DomainRow; given: boolean } | { kind: 'queued'; place: number; wait_seconds: number };
const d = schema.domains;
const p = schema.desktopPools;
const w = schema.desktopPoolWaiters;

/** Every pool's pass runs this often (and whenever one of its desktops changes). */
export const POOL_PASS_MS = 10_000;
/**
 * A pass sets its prepared desktops' screen passwords again this long before a ticket would (three passes): a class
 * taking them a few minutes after they came up all at once (their passwords set together at their launch) gets its
 * tickets without a word to thirty machines.
 */
const PREPARED_PASSWORD_AHEAD_SECONDS = (3 * POOL_PASS_MS) / 1000;
/**
 * A pass also draws its prepared desktops' screens, each at most once in this long: the first viewer of a machine has
 * its whole screen drawn at its connection (QEMU's first refresh of the display), ~100 ms more than the next viewer when
 * a class connects at once on a busy host. Drawn again after a while: its guest may have drawn since (a boot ending).
 */
const PREPARED_SCREEN_DRAW_MS = 60_000;
/**
 * No prepared screen is drawn while a pool gives (its last giving in this process less than this long ago): each draw
 * reads a whole screen from its machine, work that competed with the screens of a class taking its desktops at once.
 */
export const GIVINGS_QUIET_MS = POOL_PASS_MS;
/** How long after a desktop is given its pool's pass runs (the givings meanwhile share it). */
export const GIVE_KICK_MS = 100;
/** However many givings keep coming, the pass runs this long after the first of them at the latest. */
export const GIVE_KICK_MAX_MS = 1000;

/** After a pool desktop's start was refused (no room on the hypervisors), the pool makes none for this long. */
export const REFUSED_RETRY_MS = 10_000;

/** The last preparations' durations kept per pool (the wait a person in the queue is told). */
const RECENT_PREPARATIONS = 20;
/** How long the preparation times of givings close together wait to be written as one. */
const NOTE_PREPARATIONS_MS = 250;
/** How long desktops given close together wait to be announced to their people's lists as one (the page that took one opens its viewer meanwhile). */
export const ANNOUNCE_GIVEN_MS = 250;

/**
 * Its guest has booted since its machine last started: marked so by a pass once POOL_BOOT_SECONDS (`bootSeconds`)
 * passed since the start; with 0, as soon as the machine runs.
 */
const booted = (row: Pick<DomainRow, 'startedAt' | 'poolReadyAt'>, bootSeconds: number) =>
  row.startedAt !== null && (bootSeconds === 0 || (row.poolReadyAt !== null && row.poolReadyAt >= row.startedAt));
/** `booted` as a condition on the desktops' rows. */
const bootedWhere = (bootSeconds: number) => (bootSeconds === 0 ? isNotNull(d.startedAt) : gte(d.poolReadyAt, d.startedAt));

/** Where a pool's desktop stands: waiting for somebody (prepared: up and booted; or on its way up), given, or broken. */
export function poolDesktopState(row: Pick<DomainRow, 'status' | 'poolAssignedAt' | 'startedAt' | 'poolReadyAt'>, bootSeconds: number): 'prepared' | 'preparing' | 'in_use' | 'kept' | 'broken' {
  if (row.poolAssignedAt !== null) return statusIn(STARTABLE, row.status) || statusIn(RETRYABLE, row.status) ? 'kept' : 'in_use';
  if (statusIn(GUEST_UP, row.status) && booted(row, bootSeconds)) return 'prepared';
  if (statusIn(RETRYABLE, row.status)) return 'broken';
  return 'preparing';
}

/** A desktop of `table` (the domains, or an alias) held by the person from the pool: given to them, not given back. */
const heldWhere = (table: { poolId: AnyPgColumn; userId: AnyPgColumn; poolAssignedAt: AnyPgColumn }, poolId: SQLWrapper | string, userId: SQLWrapper | string) =>
  and(eq(table.poolId, poolId), eq(table.userId, userId), isNotNull(table.poolAssignedAt));

/**
 * What a take reads, one prepared statement: the pool, what `poolStalled` asks of its template, and the id of the
 * desktop the person holds of it (read whole only then: a class taking at once holds none, and each of the ~45 columns
 * of two more desktop rows was described, parsed and mapped in every take).
 */
const heldOfPool = alias(d, 'held');
const takeContextQuery = preparedQuery((db, name) =>
  db
    .select({ pool: p, template: { kind: d.kind, enabled: d.enabled, hardware: d.hardware }, heldId: heldOfPool.id })
    .from(p)
    .leftJoin(d, eq(d.id, p.templateId))
    .leftJoin(heldOfPool, heldWhere(heldOfPool, p.id, sql.placeholder('userId')))
    .where(eq(p.id, sql.placeholder('poolId')))
    .limit(1)
    .prepare(name),
);
/** The template as a pool's checks read it (`poolStalled`). */
type PoolTemplate = Pick<DomainRow, 'kind' | 'enabled' | 'hardware'>;

/** A pool desktop's guest properties: its template's, with only the viewers the pool allows (its card offers those). */
export function poolGuestProperties(pool: Pick<PoolRow, 'permissions'>, template: Pick<DomainRow, 'guestProperties'>): DomainRow['guestProperties'] {
  const viewers = Object.fromEntries(Object.entries(template.guestProperties.viewers).filter(([key]) => pool.permissions.viewers.includes(viewerName(key))));
  return { ...template.guestProperties, viewers };
}

/** A take's reading: the pool (undefined when there is none), its template and the desktop the person holds of it. */
export async function takeContext(ctx: AppContext, poolId: string, userId: string): Promise<{ pool: PoolRow | undefined; template: PoolTemplate | null; held: DomainRow | undefined }> {
  const [row] = await takeContextQuery(ctx.db).execute({ poolId, userId });
  const held = row?.heldId ? await findDomain(ctx.db, row.heldId) : undefined;
  return { pool: row?.pool, template: row?.template ?? null, held };
}

/** The desktop `userId` holds from the pool (given to them and not given back), if any. */
export async function heldDesktop(ctx: AppContext, poolId: string, userId: string): Promise<DomainRow | undefined> {
  const [row] = await ctx.db.select().from(d).where(heldWhere(d, poolId, userId));
  return row;
}

/** Why a pool prepares nothing now, or null: a pool of a GPU template prepares only within its bookings. */
export async function poolStalled(ctx: AppContext, pool: PoolRow, known?: { template: PoolTemplate | null }): Promise<TPoolStalled | null> {
  if (!pool.enabled) return 'disabled';
  const template = known ? known.template : await findDomain(ctx.db, pool.templateId);
  if (!template || template.kind !== 'template') return 'template_missing';
  if (!template.enabled) return 'template_disabled';
  if ((template.hardware.reservables.vgpus ?? []).length > 0 && !(await activeBooking(ctx.db, 'pool', pool.id, ctx.clock.now()))) return 'not_booked';
  return null;
}

/** A pool's desktops now, and its waiting people. */
export async function poolCounts(ctx: AppContext, pool: PoolRow): Promise<TPoolCounts> {
  const rows = await ctx.db
    .select({ status: d.status, poolAssignedAt: d.poolAssignedAt, startedAt: d.startedAt, poolReadyAt: d.poolReadyAt, hypervisorId: d.hypervisorId })
    .from(d)
    .where(eq(d.poolId, pool.id));
  const hosts = await ctx.db.select({ id: schema.hypervisors.id, name: schema.hypervisors.name }).from(schema.hypervisors);
  const counts: TPoolCounts = { prepared: 0, preparing: 0, in_use: 0, kept: 0, waiting: 0, target: targetPrepared(pool, ctx.clock.now()), by_host: [] };
  const byHost = new Map<string, TPoolCounts['by_host'][number]>();
  for (const r of rows) {
    const state = poolDesktopState(r, ctx.config.poolBootSeconds);
    if (state === 'broken') continue;
    counts[state]++;
    if (!r.hypervisorId || state === 'kept') continue;
    const h = byHost.get(r.hypervisorId) ?? { hypervisor: r.hypervisorId, name: hosts.find((x) => x.id === r.hypervisorId)?.name ?? r.hypervisorId, prepared: 0, in_use: 0, preparing: 0 };
    h[state]++;
    byHost.set(r.hypervisorId, h);
  }
  counts.by_host = [...byHost.values()].sort((a, b) => a.name.localeCompare(b.name));
  counts.waiting = await ctx.db.$count(w, eq(w.poolId, pool.id));
  return counts;
}

/**
 * A giving, as one statement (so atomic, and one round trip; built once per database: a class's thirty takes do not
 * build it thirty times): the first prepared desktop of the pool that no other giving holds (SKIP LOCKED: two people
 * asking at once get one each) becomes the person's, and its disks with it; they leave the pool's queue if they waited.
 * `= (subquery)`, evaluated once: `IN (subquery)` may be run per row, each run locking and giving the next one.
 * `bootZero`: POOL_BOOT_SECONDS is 0 (prepared as soon as the machine runs).
 */
const givingQueries = [false, true].map((bootZero) =>
  preparedQuery((db, name) => {
    const dd = schema.domainDisks;
    const candidate = db
      .select({ id: d.id })
      .from(d)
      .where(
        and(
          eq(d.poolId, sql.placeholder('poolId')),
          isNull(d.poolAssignedAt),
          inArray(d.status, [...GUEST_UP]),
          bootedWhere(bootZero ? 0 : 1),
          // (the ones this process is destroying: given back, surplus)
          sql`${d.id} <> ALL(${sql.placeholder('leaving')}::text[])`,
        ),
      )
      .orderBy(asc(d.createdAt))
      .limit(1)
      .for('update', { skipLocked: true });
    const taken = db.$with('taken').as(
      db
        .update(d)
        // (each value through its column's mapping, as a value given here would be)
        .set({
          userId: sql.placeholder('userId') as never,
          categoryId: sql.placeholder('categoryId') as never,
          groupId: sql.placeholder('groupId') as never,
          poolAssignedAt: sql.placeholder('now') as never,
          accessedAt: sql.placeholder('now') as never,
        })
        .where(and(eq(d.id, sql`(${candidate})`), isNull(d.poolAssignedAt)))
        .returning(),
    );
    const theirs = db.$with('theirs').as(
      db
        .update(schema.storage)
        .set({ userId: sql.placeholder('userId') as never })
        .where(and(inArray(schema.storage.id, db.select({ id: dd.storageId }).from(dd).where(inArray(dd.domainId, db.select({ id: taken.id }).from(taken)))), inArray(schema.storage.kind, ['desktop', 'volatile'])))
        .returning({ id: schema.storage.id }),
    );
    const leftQueue = db.$with('left_queue').as(
      db
        .delete(w)
        .where(and(eq(w.poolId, sql.placeholder('poolId')), eq(w.userId, sql.placeholder('userId')), sql`exists (select 1 from ${taken})`))
        .returning({ userId: w.userId }),
    );
    return db.with(taken, theirs, leftQueue).select().from(taken).prepare(name);
  }),
);
const givingQuery = (bootZero: boolean) => givingQueries[bootZero ? 1 : 0]!;

/**
 * The pools' manager: keeps each pool's prepared desktops at its target (its timetable, its size), hands prepared
 * desktops to the people waiting, replaces broken ones, and takes back non-persistent desktops given back. One pass per
 * pool at a time in the whole installation (an advisory lock per pool); every pass reads the database afresh, so that a
 * restart or another process goes on from what is there.
 */
export function createDesktopPools(ctx: AppContext, lifecycle: DesktopLifecycle) {
  const log = ctx.log.child({ module: 'desktop-pools' });
  const pending = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const preparingSince = new Map<string, number>();
  /** pool id → until when it makes no desktop (its last start was refused) */
  const refusedUntil = new Map<string, number>();
  /** The people who may see a pool are told when its numbers change (desktop_pool_changed, coalesced). */
  const events = createPoolEvents(ctx);
  /** What the pools screen shows of a pool besides its desktops (its target now, why it stalls), as the last pass saw it. */
  const shown = new Map<string, string>();
  let closed = false;

  /** Runs a pass of `poolId` now, or once more after the one under way. */
  function kick(poolId: string): Promise<void> {
    if (closed) return Promise.resolve();
    const running = pending.get(poolId);
    if (running) {
      again.add(poolId);
      return running;
    }
    const run = (async () => {
      do {
        again.delete(poolId);
        await pass(poolId).catch((err) => log.error({ err, pool: poolId }, 'pool pass failed'));
      } while (again.has(poolId) && !closed);
    })().finally(() => pending.delete(poolId));
    pending.set(poolId, run);
    return run;
  }

  /**
   * A pass of `poolId` once the givings pause for GIVE_KICK_MS (GIVE_KICK_MAX_MS after the first at the latest), once for
   * all of them: a class taking thirty desktops at once leads to one pass or two, not one every 100 ms of the burst,
   * each reading the whole pool between their takes.
   */
  const soon = new Map<string, { timer: NodeJS.Timeout; first: number }>();
  /** When this process last gave a desktop of each pool (ms): its prepared screens are not drawn meanwhile. */
  const lastGiving = new Map<string, number>();
  function kickSoon(poolId: string) {
    if (closed) return;
    const now = Date.now();
    const before = soon.get(poolId);
    if (before) clearTimeout(before.timer);
    const first = before?.first ?? now;
    const timer = setTimeout(() => {
      soon.delete(poolId);
      void kick(poolId);
    }, Math.max(0, Math.min(now + GIVE_KICK_MS, first + GIVE_KICK_MAX_MS) - now));
    timer.unref();
    soon.set(poolId, { timer, first });
  }

  async function pass(poolId: string) {
    const key = lockKey(LOCK_CLASSES.desktopPool, poolId);
    const held = ctx.locks.everyGranted || (await ctx.locks.tryHold([key]).catch(() => [false]))[0] === true;
    if (!held) return; // another process runs this pool's pass now
    try {
      const [pool] = await ctx.db.select().from(p).where(eq(p.id, poolId));
      if (!pool) {
        lastGiving.delete(poolId);
        return void shown.delete(poolId);
      }
      await reconcile(pool);
    } finally {
      if (!ctx.locks.everyGranted) await ctx.locks.release(key).catch(() => undefined);
    }
  }

  async function reconcile(pool: PoolRow) {
    // (only those not given: a class's thirty given desktops are not read at every pass)
    const free = await ctx.db.select().from(d).where(and(eq(d.poolId, pool.id), isNull(d.poolAssignedAt))).orderBy(asc(d.createdAt));
    const stalled = await poolStalled(ctx, pool);
    // The timetable's target moved, or a booking, the template or the pool's switch changed whether it prepares.
    const seen = `${targetPrepared(pool, ctx.clock.now())}|${stalled}`;
    if (shown.has(pool.id) && shown.get(pool.id) !== seen) events.changed(pool.id);
    shown.set(pool.id, seen);
    // Never handed out, gone, and made afresh from the template below: broken ones (a start failed) and those at rest
    // (the machine died, was stopped by someone, or was found stopped after a restart) — its disk may not be the
    // template's state any more, and a fresh one costs the same as starting it again.
    const down = (x: DomainRow) => poolDesktopState(x, ctx.config.poolBootSeconds) === 'broken' || statusIn(STARTABLE, x.status);
    for (const row of free.filter(down)) await lifecycle.destroyDesktop(row);
    let live = free.filter((x) => !down(x));
    if (stalled) {
      // Nothing is prepared from a template that is gone or disabled, nor by a disabled pool; given desktops stay.
      for (const row of live) await lifecycle.destroyDesktop(row);
      return;
    }
    // Up and not yet known booted: booted once POOL_BOOT_SECONDS have passed since its start; looked at again soon.
    const now = ctx.clock.now();
    let booting = false;
    for (const row of live.filter((x) => statusIn(GUEST_UP, x.status) && !booted(x, ctx.config.poolBootSeconds) && x.startedAt)) {
      if (now.getTime() - row.startedAt!.getTime() >= ctx.config.poolBootSeconds * 1000) {
        await ctx.db.update(d).set({ poolReadyAt: now }).where(eq(d.id, row.id));
        events.changed(pool.id); // preparing → prepared
      } else booting = true;
    }
    if (booting) setTimeout(() => void kick(pool.id), 1000).unref();
    // The people waiting get prepared desktops, first come first served.
    const waiters = await ctx.db.select().from(w).where(eq(w.poolId, pool.id)).orderBy(asc(w.since));
    for (const waiter of waiters) {
      const [person] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, waiter.userId));
      const given = person ? await give(pool, person) : null;
      if (!given && person) break;
      await ctx.db.delete(w).where(and(eq(w.poolId, pool.id), eq(w.userId, waiter.userId)));
      events.changed(pool.id);
      if (given) ctx.bus.toUser(waiter.userId, 'desktop_pool_given', { pool_id: pool.id, desktop_id: given.id });
    }
    live = (await ctx.db.select().from(d).where(and(eq(d.poolId, pool.id), isNull(d.poolAssignedAt), notInArray(d.id, lifecycle.leavingIds())))).filter((x) => poolDesktopState(x, ctx.config.poolBootSeconds) !== 'broken');
    // The prepared ones' screens keep their password set (it lives VNC_PASSWORD_SECONDS) and are drawn: the next one
    // given is viewed without a word to its machine, as a second viewer is.
    const prepared = live.filter((x) => poolDesktopState(x, ctx.config.poolBootSeconds) === 'prepared');
    const quiet = () => Date.now() - (lastGiving.get(pool.id) ?? 0) >= GIVINGS_QUIET_MS;
    void readyVncPasswords(ctx, prepared, PREPARED_PASSWORD_AHEAD_SECONDS, { everyMs: PREPARED_SCREEN_DRAW_MS, quiet }).catch((err) => log.warn({ err, pool: pool.id }, 'prepared desktops\' screen passwords were not set again'));
    const stillWaiting = await ctx.db.$count(w, eq(w.poolId, pool.id));
    // One this process is destroying (given back, surplus, broken) no longer takes room: its replacement is made while
    // its machine and disk go.
    const total = await ctx.db.$count(d, and(eq(d.poolId, pool.id), notInArray(d.id, lifecycle.leavingIds())));
    const want = targetPrepared(pool, ctx.clock.now()) + stillWaiting;
    if (live.length < want) {
      const room = Math.max(0, pool.maxDesktops - total);
      // After a refused start (no room on the hypervisors), nothing is made again before REFUSED_RETRY_MS: a pool
      // larger than what runs now does not make and destroy desktops in a loop.
      if ((refusedUntil.get(pool.id) ?? 0) <= Date.now()) {
        refusedUntil.delete(pool.id);
        for (let i = 0; i < Math.min(want - live.length, room); i++) if (!(await prepareOne(pool))) break;
      }
    } else if (live.length > want) {
      // Surplus: the newest free ones go first, those still on their way up before prepared ones.
      const order = [...live].sort((a, b) => Number(statusIn(GUEST_UP, a.status)) - Number(statusIn(GUEST_UP, b.status)) || b.createdAt.getTime() - a.createdAt.getTime());
      for (const row of order.slice(0, live.length - want)) await lifecycle.destroyDesktop(row);
    }
  }

  async function ownerOf(pool: PoolRow) {
    const [owner] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, pool.userId));
    if (!owner) throw new Error(`pool ${pool.id}: its owner is gone`);
    return owner;
  }

  /** Started; or refused (no room on the hypervisors, a limit): the desktop goes, and the pool waits before it tries again. */
  async function startPoolDesktop(pool: PoolRow, row: DomainRow, owner: UserRow): Promise<boolean> {
    try {
      preparingSince.set(row.id, Date.now());
      await lifecycle.start(row, owner, undefined, { reason: 'pool_prepare' });
      return true;
    } catch (err) {
      log.warn({ err, pool: pool.id, desktop: row.id }, 'a pool desktop could not start; the pool tries again shortly');
      preparingSince.delete(row.id);
      refusedUntil.set(pool.id, Date.now() + REFUSED_RETRY_MS);
      await lifecycle.destroyDesktop(row);
      events.changed(pool.id);
      return false;
    }
  }

  /** Makes and starts one desktop of the pool; false when that was refused (nothing more is tried in this pass). */
  async function prepareOne(pool: PoolRow): Promise<boolean> {
    const template = await findDomain(ctx.db, pool.templateId);
    if (!template) return false;
    const owner = await ownerOf(pool);
    const id = randomUUID();
    let row: DomainRow;
    try {
      // Its viewers: the template's that the pool allows (a viewer asked is checked against the pool's permissions as they are then).
      const guestProperties = poolGuestProperties(pool, template);
      row = await creating(ctx.locks, id, () => createDesktopFromTemplate(ctx.db, ctx.engine, template, owner, { id, name: pool.name, persistent: pool.persistent, status: 'Stopped', poolId: pool.id, guestProperties }));
    } catch (err) {
      log.warn({ err, pool: pool.id }, 'a pool desktop could not be made');
      return false;
    }
    events.changed(pool.id); // one more preparing
    return startPoolDesktop(pool, row, owner);
  }

  /**
   * Gives `person` a prepared desktop of the pool, atomically (two people asking for the last one: one gets it):
   * the desktop becomes theirs (its disks too), and they leave the pool's queue. Null when none is prepared.
   */
  async function give(pool: PoolRow, person: UserRow): Promise<DomainRow | null> {
    const now = ctx.clock.now();
    const [given] = await givingQuery(ctx.config.poolBootSeconds === 0)(ctx.db).execute({
      poolId: pool.id,
      userId: person.id,
      categoryId: person.categoryId,
      groupId: person.groupId,
      now,
      leaving: lifecycle.leavingIds(),
    });
    if (!given) return null;
    lastGiving.set(pool.id, Date.now());
    events.changed(pool.id);
    const since = preparingSince.get(given.id);
    preparingSince.delete(given.id);
    if (since !== undefined) notePreparation(pool.id, (Date.now() - since) / 1000);
    // Its screen's password (kept set by the pool's passes while it waited; from another process's, unknown here) is set
    // again now if this process's setting nears its end, while the person's page asks for the viewer.
    void readyVncPasswords(ctx, [given]).catch(() => undefined);
    // The person's list hears of it soon (the page that took it asks for its viewer, not for the list), with the others
    // given meanwhile.
    announcements.add(given.id);
    log.info({ pool: pool.id, desktop: given.id, user: person.id }, 'pool desktop given');
    kickSoon(pool.id); // one less prepared: prepare the next
    return given;
  }

  /** Preparation times are written per pool, those of givings close together as one (30 writes of one row queued behind each other's lock). */
  const preparations = batchWithin<{ poolId: string; seconds: number }>(
    NOTE_PREPARATIONS_MS,
    async (all) => {
      for (const poolId of new Set(all.map((x) => x.poolId))) await writePreparations(poolId, all.filter((x) => x.poolId === poolId).map((x) => x.seconds));
    },
    (err) => log.warn({ err }, 'preparation times were not noted'),
  );
  const notePreparation = (poolId: string, seconds: number) => preparations.add({ poolId, seconds });
  /** Desktops given, announced together: one view query for a class's givings. Read again then: as they are now, if still given. */
  const announcements = batchWithin<string>(
    ANNOUNCE_GIVEN_MS,
    async (ids) => lifecycle.announce(...(await ctx.db.select().from(d).where(and(inArray(d.id, ids), isNotNull(d.poolAssignedAt))))),
    (err) => log.warn({ err }, 'given pool desktops were not announced'),
  );
  async function writePreparations(poolId: string, seconds: number[]) {
    const [row] = await ctx.db.select({ recent: p.prepareSeconds }).from(p).where(eq(p.id, poolId));
    if (!row) return;
    await ctx.db.update(p).set({ prepareSeconds: [...row.recent, ...seconds.map((s) => Math.round(s * 10) / 10)].slice(-RECENT_PREPARATIONS) }).where(eq(p.id, poolId));
  }

  /**
   * A person takes a desktop from the pool: the one they already hold (persistent pools; started if at rest), else a
   * prepared one at once, else a place in the queue (the pool prepares more, up to its size).
   */
  async function take(pool: PoolRow, person: UserRow, known?: { held: DomainRow | undefined }): Promise<Taken> {
    const mine = known ? known.held : await heldDesktop(ctx, pool.id, person.id);
    if (mine) {
      if (!statusIn(STARTABLE, mine.status)) return { kind: 'desktop', row: mine, given: false };
      await lifecycle.start(mine, person);
      return { kind: 'desktop', row: (await findDomain(ctx.db, mine.id)) ?? mine, given: false };
    }
    const given = await give(pool, person);
    // (given now: its last access written with it)
    if (given) return { kind: 'desktop', row: given, given: true };
    await ctx.db.insert(w).values({ poolId: pool.id, userId: person.id, since: ctx.clock.now() }).onConflictDoNothing();
    events.changed(pool.id);
    void kick(pool.id);
    return { kind: 'queued', ...(await placeOf(pool, person.id))! };
  }

  /** The person's place in the pool's queue and a realistic wait, or null when they do not wait. */
  async function placeOf(pool: PoolRow, userId: string): Promise<{ place: number; wait_seconds: number } | null> {
    const queue = await ctx.db.select({ userId: w.userId }).from(w).where(eq(w.poolId, pool.id)).orderBy(asc(w.since));
    const i = queue.findIndex((q) => q.userId === userId);
    if (i < 0) return null;
    return { place: i + 1, wait_seconds: waitSeconds(i + 1, pool.prepareSeconds) };
  }

  /** A non-persistent pool's desktop given back: gone with its disk; the pass prepares a fresh one from the template. */
  async function giveBack(row: DomainRow, reason: string) {
    if (row.poolId === null || row.persistent) return;
    log.info({ desktop: row.id, pool: row.poolId, reason }, 'pool desktop given back');
    await lifecycle.destroyDesktop(row);
    void kick(row.poolId);
  }

  /** Whether the person has a session still live (not signed out, not expired) now, in any server process. */
  async function signedIn(userId: string, now: Date) {
    const s = schema.sessions;
    return (await ctx.db.$count(s, and(eq(s.userId, userId), isNull(s.revokedAt), gt(s.expiresAt, now)))) > 0;
  }

  /**
   * Given desktops of non-persistent pools whose give-back time came: their person signed out (no live session left),
   * no viewer open for N minutes, or the pool's daily time.
   */
  async function sweepGiveBacks(since: Date, now: Date) {
    const pools = await ctx.db.select().from(p).where(eq(p.persistent, false));
    for (const pool of pools) {
      const daily = dailyTimePassed(pool.giveBack, since, now);
      const given = await ctx.db.select().from(d).where(and(eq(d.poolId, pool.id), isNotNull(d.poolAssignedAt)));
      for (const row of given) {
        if (daily) {
          await giveBack(row, 'daily');
          continue;
        }
        if (pool.giveBack.on_sign_out && !(await signedIn(row.userId, now))) {
          await giveBack(row, 'sign_out');
          continue;
        }
        const minutes = pool.giveBack.viewer_closed_minutes;
        if (minutes === null) continue;
        const viewers = await viewerState(ctx, row.id);
        if (viewers.open > 0) continue;
        const seen = Math.max(viewers.lastClosed ?? 0, row.poolAssignedAt?.getTime() ?? 0);
        if (now.getTime() - seen >= minutes * 60_000) await giveBack(row, 'viewer_closed');
      }
    }
  }

  /** Desktops not given of a pool that is gone (deleted while a pass in another process was making one): destroyed. */
  async function sweepOrphans() {
    const orphans = await ctx.db
      .select()
      .from(d)
      // One still being made is its maker's to finish (its next sweep takes it; one whose maker died is the start-up's).
      .where(and(isNotNull(d.poolId), isNull(d.poolAssignedAt), notInArray(d.status, [...CREATING]), sql`not exists (select 1 from ${p} where ${p.id} = ${d.poolId})`));
    for (const row of orphans) {
      log.info({ desktop: row.id, pool: row.poolId }, 'a desktop of a deleted pool removed');
      await lifecycle.destroyDesktop(row);
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let lastSweep = ctx.clock.now();
  /** Every pool's pass and the give-back sweep, every `intervalMs`; a pool's desktop that changes kicks its pool at once. */
  function start(intervalMs = POOL_PASS_MS) {
    const tick = async () => {
      const now = ctx.clock.now();
      await sweepGiveBacks(lastSweep, now).catch((err) => log.error({ err }, 'pool give-back sweep failed'));
      await sweepOrphans().catch((err) => log.error({ err }, 'pool orphan sweep failed'));
      lastSweep = now;
      const pools = await ctx.db.select({ id: p.id }).from(p);
      await Promise.all(pools.map((x) => kick(x.id)));
    };
    void tick();
    timer = setInterval(() => void tick().catch((err) => log.error({ err }, 'pool tick failed')), intervalMs);
    timer.unref();
    // Any of a pool's desktops that changes (one prepared came up, one given went away) kicks its pool at once, and
    // the pool's numbers change for those who see it.
    const onChange = (row: DomainRow) => {
      if (row.poolId === null) return;
      events.changed(row.poolId);
      void kick(row.poolId);
    };
    lifecycle.changes.on('changed', onChange);
    lifecycle.changes.on('leaving', onChange);
    lifecycle.changes.on('deleted', onChange);
    return () => {
      lifecycle.changes.off('changed', onChange);
      lifecycle.changes.off('leaving', onChange);
      lifecycle.changes.off('deleted', onChange);
    };
  }

  let stopEvents: (() => void) | undefined;
  return {
    kick,
    /** Tells the people who may see the pool that it changed (`before`: its row before an edit or deletion of the pool). */
    changed: events.changed,
    /** Waits for this process's pass of the pool under way, if any. */
    settle: (poolId: string) => pending.get(poolId) ?? Promise.resolve(),
    sweepOrphans,
    /** Its last start was refused for lack of room a moment ago (this process's passes): it tries again shortly. */
    shortOfRoom: (poolId: string) => (refusedUntil.get(poolId) ?? 0) > Date.now(),
    take,
    placeOf,
    giveBack,
    sweepGiveBacks,
    start(intervalMs?: number) {
      stopEvents = start(intervalMs);
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      for (const t of soon.values()) clearTimeout(t.timer);
      soon.clear();
      stopEvents?.();
      await Promise.all([...pending.values(), preparations.flushNow(), announcements.flushNow()]);
      await events.close();
    },
  };
}
export type DesktopPools = ReturnType<typeof createDesktopPools>;
