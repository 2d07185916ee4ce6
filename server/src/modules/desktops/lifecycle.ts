import { EventEmitter } from 'node:events';
import { and, eq, inArray } from 'drizzle-orm';
import { AT_REST, FORCE_STOPPABLE, GOING_UP, LOCAL_HYPERVISOR, GUEST_UP, ON_HYPERVISOR, RETRYABLE, STARTABLE, statusIn, STOPPABLE, VIEWABLE, type TQueueEvent } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type LiveProcess } from '../../db';
import { EngineError, type MachineEvent, type MachineSpec } from '../../engine/driver';
import type { QueuedStart } from '../../engine/start-queue';
import { ApiError, conflict, precondition } from '../../http/errors';
import type { UserRow } from '../../auth/sessions';
import { checkStartQuota } from '../quotas/start-check';
import { checkBookingToStart } from '../bookings/start-check';
import { createPlacement } from '../placement';
import { createHostPools, diskFilePresent, removeDiskFile, startFailureCode } from '../pools';
import { CREATING_DESKTOP } from './create';
import { disksOf, machineSpecOf, privateMacOf } from './machine-spec';
import { findDomain, type DomainRow } from '../shared/domains';
import { desktopViews, shownToOwner } from '../shared/desktop-view';
import { createHostWatch } from './host-watch';
import { recordDesktopEvent, type EventCause } from './events';
import { openUsage } from '../usage/record';
import { sharedVncPassword, vncPasswordLaunched, vncPasswordOf } from '../viewers/service';

const notAvailable = (row: DomainRow, action: string) =>
  conflict('desktop_action_not_available', `Cannot ${action} a desktop that is ${row.status}`, { status: row.status, action });

/**
 * A desktop's life: the database holds its state, the engine runs it, and this module keeps
 * both in step — from the actions people ask for and from what the hypervisor reports.
 */
/** How often a host's watcher looks for timed work a dead process left undone, and how late it may be. */
export const TIMED_BACKSTOP_MS = 5_000;

export function createDesktopLifecycle(ctx: AppContext) {
  const { db, bus, log } = ctx;
  const { driver, queue } = ctx.engine;
  /** `leaving`: its destruction began (its machine and disks go); `deleted`: it is gone. */
  const changes = new EventEmitter<{ changed: [DomainRow]; leaving: [DomainRow]; deleted: [DomainRow] }>();
  const placement = createPlacement(ctx);
  const pools = createHostPools(ctx);
  const shutdownTimers = new Map<string, NodeJS.Timeout>();
  const deleting = new Set<string>();
  const ipWaits = new Map<string, AbortController>();
  const { network } = ctx.engine;
  /** Why a machine that crashed went (its 'stopped' event says so). */
  const crashed = new Set<string>();
  const record = (id: string, kind: Parameters<typeof recordDesktopEvent>[2], cause?: EventCause, detail?: Record<string, unknown>) => recordDesktopEvent(ctx, id, kind, cause, detail);
  /** The machine of `row` is gone: how long it ran, and why when no person asked. */
  const recordStopped = (row: DomainRow, reason?: string) =>
    record(row.id, 'stopped', reason ? { reason } : {}, { hypervisor: row.hypervisorId, ...(row.startedAt ? { seconds: Math.max(0, Math.round((Date.now() - row.startedAt.getTime()) / 1000)) } : {}) });

  const stopWaitingForIp = (id: string) => {
    ipWaits.get(id)?.abort();
    ipWaits.delete(id);
  };

  /**
   * A desktop on the guest network is `WaitingIP` until its DHCP lease (granted since `since`,
   * its start) gives its address; then `Started` with it. No address within the timeout: `Started`
   * without one, `current_action` saying why (its RDP viewers stay off). Addresses never go to the log.
   */
  /** The end of a guest's address wait: its address, or none within GUEST_IP_TIMEOUT_SECONDS (`null`). */
  async function addressWaited(id: string, ip: string | null) {
    if (ip) return void (await update(id, { status: 'Started', guestIp: ip, currentAction: null }, 'WaitingIP'));
    log.warn({ desktop: id, seconds: ctx.config.guestIpTimeoutSeconds }, 'desktop got no address on the guest network');
    await update(id, { status: 'Started', guestIp: null, currentAction: 'guest_ip_timeout' }, 'WaitingIP');
  }

  function waitForIp(id: string, mac: string, since: number) {
    stopWaitingForIp(id);
    const abort = new AbortController();
    ipWaits.set(id, abort);
    const timeoutMs = Math.max(0, since + ctx.config.guestIpTimeoutSeconds * 1000 - Date.now());
    void network
      .waitForAddress(mac, { since, timeoutMs, signal: abort.signal })
      .then(async (ip) => {
        if (abort.signal.aborted) return;
        ipWaits.delete(id);
        await addressWaited(id, ip);
      })
      .catch((err) => log.error({ err, desktop: id }, 'waiting for the guest address failed'));
  }

  /** Each desktop's publishing in the order its changes were written (a change published without waiting, the claim
   *  of a start, is never overtaken by the next). */
  const publishing = new Map<string, Promise<void>>();
  /** `after`: the change is told once that settles too (its place among the desktop's changes is taken now). */
  function publish(row: DomainRow, after?: Promise<unknown>): Promise<void> {
    const before = publishing.get(row.id);
    const now = (async () => {
      await before;
      await after;
      if (shownToOwner(row)) {
        const [view] = await desktopViews(ctx, [row]);
        bus.toUser(row.userId, 'desktop_update', view!);
      }
      changes.emit('changed', row);
    })();
    const settled = now.catch(() => undefined);
    publishing.set(row.id, settled);
    void settled.then(() => publishing.get(row.id) === settled && publishing.delete(row.id));
    return now;
  }

  /** New desktops: desktop_add to each one's owner (later changes are desktop_update); their views are one query. */
  async function announce(...rows: DomainRow[]) {
    const shown = rows.filter(shownToOwner);
    const views = await desktopViews(ctx, shown);
    shown.forEach((row, i) => bus.toUser(row.userId, 'desktop_add', views[i]!));
  }

  /** `onlyFrom`: the status, or statuses, the row must still have (a claim). `published`: given the publishing of the
   *  change, not awaited here (its caller goes on meanwhile and awaits it later), told once `after` settles. */
  async function update(id: string, set: Partial<DomainRow>, onlyFrom?: string | readonly string[], published?: { after: Promise<unknown>; then: (p: Promise<void>) => void }): Promise<DomainRow | undefined> {
    // The forced-stop moment belongs to the shutting-down state: any other state clears it.
    if (set.status !== undefined && set.status !== 'Shutting-down') set = { ...set, forceStopAt: null };
    // A desktop at rest runs nowhere.
    if (set.status !== undefined && statusIn(AT_REST, set.status)) set = { ...set, hypervisorId: null };
    const from = typeof onlyFrom === 'string' ? [onlyFrom] : onlyFrom && [...onlyFrom];
    const where = from ? and(eq(schema.domains.id, id), inArray(schema.domains.status, from)) : eq(schema.domains.id, id);
    const [row] = await db.update(schema.domains).set(set).where(where).returning();
    if (row && published) published.then(publish(row, published.after));
    else if (row) await publish(row);
    return row;
  }

  const clearShutdownTimer = (id: string) => {
    clearTimeout(shutdownTimers.get(id));
    shutdownTimers.delete(id);
  };

  /** The force stop at `at` (the stored `force_stop_at`, so a restart keeps the same moment). */
  const armShutdownTimer = (id: string, at: Date) => {
    clearShutdownTimer(id);
    shutdownTimers.set(
      id,
      // (A stop of the server may close the driver while this runs: logged, never an unhandled rejection.)
      setTimeout(() => shutdownTimedOut(id).catch((err) => log.warn({ err, desktop: id }, 'force stop after the shutdown timeout failed')), Math.max(0, at.getTime() - Date.now())).unref(),
    );
  };

  // Queue positions go to each waiting desktop's owner, from the process that changed the queue
  // (bus.toUser reaches the owner's sockets on every process); a desktop that leaves the wait gets position 0.
  async function sendPositions(lane: string, left: string[]) {
    const { waiting } = await queue.positions(lane);
    const ids = [...waiting.map((w) => w.desktopId), ...left];
    if (ids.length === 0) return;
    const rows = await db.select({ id: schema.domains.id, userId: schema.domains.userId }).from(schema.domains).where(inArray(schema.domains.id, ids));
    const owners = new Map(rows.map((r) => [r.id, r.userId]));
    const byOwner = new Map<string, TQueueEvent>();
    const add = (desktopId: string, position: number, event: string) => {
      const owner = owners.get(desktopId);
      if (!owner) return;
      const m = byOwner.get(owner) ?? {};
      m[desktopId] = { desktop_id: desktopId, event, position };
      byOwner.set(owner, m);
    };
    for (const w of waiting) add(w.desktopId, w.position, 'queued');
    for (const id of left) add(id, 0, 'dequeued');
    for (const [owner, event] of byOwner) bus.toUser(owner, 'desktops_queue', event);
  }
  queue.on('changed', (lane, left) => void sendPositions(lane, left).catch((err) => log.warn({ err, hypervisor: lane }, 'queue positions not sent')));

  /** The machine is up: `Started`, or `WaitingIP` until its guest network address comes (leases since `since`). */
  async function markStarted(row: DomainRow, since: Date) {
    const mac = privateMacOf(row);
    const started = await update(row.id, { status: mac ? 'WaitingIP' : 'Started', startedAt: since, accessedAt: new Date(), guestIp: null }, 'Starting');
    if (started) await record(row.id, 'started', {}, { hypervisor: started.hypervisorId });
    if (started && mac) waitForIp(row.id, mac, since.getTime());
  }

  /**
   * What a start's checks read (its disks, its machine), left for the queue's run of that claim when it comes to this
   * process (it mostly does, at once): not read again. Another process, or a later claim, reads them from the database.
   */
  const checked = new Map<string, { claim: number; row: DomainRow; disks: Awaited<ReturnType<typeof disksOf>>; spec: MachineSpec }>();
  const CHECKED_KEPT_MS = 10_000;

  /** A start the queue gave this process (whichever process it was asked on): rebuilt from the database, or from its checks. */
  async function runStart({ desktopId, lane, fresh }: QueuedStart) {
    const known = checked.get(desktopId);
    // Taken as it was queued here: the row is the claim's (nothing else had a turn); else read again.
    const row = fresh && known ? known.row : await findDomain(db, desktopId);
    checked.delete(desktopId);
    // Called off meanwhile (stopped, deleted, set right after a restart): nothing to start.
    if (!row || row.status !== 'Starting' || row.hypervisorId !== lane) return;
    const ours = known && known.claim === row.runClaimedAt?.getTime() && Date.now() - known.claim < CHECKED_KEPT_MS ? known : undefined;
    const began = performance.now();
    const took = () => (performance.now() - began) / 1000;
    try {
      // A host without the storage folder: the template's base copied there first (a job), the disk moved there.
      const disks = ours?.disks ?? (await disksOf(db, row.id));
      const moved = await pools.bringDisks(lane, row.userId, disks);
      // The run starts now: its VNC password (derived from its claim, viewers/service.ts) is given at the launch.
      const since = new Date();
      const run = { ...row, startedAt: since };
      const spec = { ...(ours && !moved ? ours.spec : await machineSpecOf(db, row, moved ? undefined : disks)), host: lane };
      if (spec.graphics.vnc) spec.vncPassword = vncPasswordOf(ctx, run);
      const runtime = await driver.start(spec);
      log.info({ desktop: row.id }, 'desktop started');
      ctx.metrics.start(lane, 'started', took());
      // The owner's first ticket, asked the moment the page hears `Started`, finds the run's VNC password set: since
      // the launch, or (a driver that does not take it at launch) set now while the state is written.
      const viewerReady = runtime.vnc ? (runtime.vncPasswordSet ? vncPasswordLaunched(ctx, run, runtime) : sharedVncPassword(ctx, run, runtime)).catch(() => undefined) : undefined;
      await markStarted(row, since);
      // Not awaited: the start's place in the queue is free now; a ticket asked meanwhile waits for the same setting
      // (the process's record of it is made before the hypervisor is asked).
      void viewerReady;
    } catch (err) {
      ctx.metrics.start(lane, 'failed', took());
      log.error({ err, desktop: row.id }, 'desktop start failed');
      // A hypervisor not prepared for the guest network: the catalogue's code, for the owner's card.
      const why = err instanceof EngineError && err.code === 'guest-network-missing' ? 'hypervisor_guest_network_missing' : (startFailureCode(err) ?? 'start-failed');
      await update(row.id, { status: 'Failed', currentAction: why });
      await record(row.id, 'start_failed', { reason: why }, { hypervisor: lane });
    }
  }

  /** A start whose server process died while running it: the machine it left running is adopted, else the start failed. */
  async function startLost({ desktopId, lane }: QueuedStart, since: Date) {
    const row = await findDomain(db, desktopId);
    if (!row || row.status !== 'Starting' || row.hypervisorId !== lane) return;
    const state = await driver.status(desktopId).catch(() => 'absent' as const);
    log.warn({ desktop: desktopId, hypervisor: lane, machine: state }, 'the server process starting this desktop died');
    if (state === 'running' || state === 'paused') await markStarted(row, since);
    else if (await update(row.id, { status: 'Failed', currentAction: 'start-failed' }, 'Starting')) await record(row.id, 'start_failed', { reason: 'start-failed' }, { hypervisor: lane });
  }
  queue.open({
    db,
    log,
    shared: ctx.peers.shared,
    publish: (payload) => ctx.peers.publish('start_queue', payload),
    subscribe: (handler) => ctx.peers.subscribe('start_queue', handler),
    // Every process holds the stored hosts (a host offline fails its start, as it always did); this machine's
    // QEMU only where LOCAL_HYPERVISOR is on.
    canRun: (lane) => lane !== LOCAL_HYPERVISOR || ctx.config.localHypervisor,
    run: runStart,
    orphaned: startLost,
  });

  async function assertDisksReady(disks: Awaited<ReturnType<typeof disksOf>>) {
    // A file lost while the server was down (the startup sweep marked it failed) says so.
    const present = await Promise.all(disks.map((d) => diskFilePresent(ctx, d)));
    if (disks.some((d, i) => d.status === 'failed' || (d.status === 'ready' && !present[i]))) {
      throw precondition('storage_file_missing', 'The file of the desktop disk is missing');
    }
    if (disks.length === 0 || disks.some((d, i) => d.status !== 'ready' || !present[i])) {
      throw precondition('desktop_storage_not_ready', 'The desktop disk is not ready');
    }
  }

  /**
   * `starter` is who pressed start (admins and managers need no booking); quotas are the owner's. `cause`: who the
   * history names (the starter; a direct link's visitor is nobody, with its reason).
   */
  async function start(row: DomainRow, owner: UserRow, starter: Pick<UserRow, 'roleId' | 'id' | 'username'> = owner, cause: EventCause = { by: starter }): Promise<{ status: string }> {
    if (!statusIn(STARTABLE, row.status)) throw notAvailable(row, 'start');
    const mac = privateMacOf(row);
    // The checks only read: they run side by side, and the answer is the first refusal in this order, as when
    // they ran one after the other (placement is not asked when the guest network is missing, as before).
    const disks = disksOf(db, row.id);
    // What the machine would be is checked now (the start itself uses it when it runs here, else rebuilds it).
    const machine = disks.then((d) => machineSpecOf(db, row, d));
    const noNetwork = mac !== null && !network.available;
    const placing = noNetwork ? undefined : placement.hostFor(row, { guestNetwork: mac !== null, disks });
    const checks = await Promise.allSettled([
      checkBookingToStart(db, ctx.clock.now(), row, starter.roleId),
      // (a desktop pool's desktop counts for its pool, not for the person's own quota)
      checkStartQuota(db, owner, { memoryGb: row.hardware.memoryMb / 1024, vcpus: row.hardware.vcpus }, { personal: row.poolId === null }),
      // No guest network on this server at all: said as such, before placement looks for a host it reaches.
      noNetwork ? Promise.reject(precondition('guest_network_unavailable', 'The private network (wireguard, RDP viewers) is not available on this server')) : undefined,
      placing,
      disks.then((d) => assertDisksReady(d)),
      // A host's own pool that cannot hold the template's base and the disk: refused now, nothing copied.
      Promise.all([placing, disks]).then(([hostId, d]) => (hostId === undefined ? undefined : pools.assertRoomOn(hostId, row.userId, d))),
      machine,
    ]);
    const placed = checks[3];
    const hypervisorId = placed.status === 'fulfilled' ? placed.value : undefined;
    const refused = checks.find((c) => c.status === 'rejected');
    if (refused || hypervisorId === undefined) {
      if (hypervisorId !== undefined) placement.forget(hypervisorId);
      throw refused?.reason;
    }
    // The owner hears `Starting` once the start is queued: the queue's admission (QEMU's launch follows it) does not wait
    // behind the owner's view on the embedded database's one session.
    let published: Promise<void> | undefined;
    let admitted!: () => void;
    const admission = new Promise<void>((resolve) => (admitted = resolve));
    try {
      // Claimed atomically: two clicks, or two tabs, start it once. The claim's moment names the run (its VNC password).
      const claim = new Date();
      const claimed = await update(row.id, { status: 'Starting', currentAction: null, hypervisorId, runClaimedAt: claim }, STARTABLE, {
        after: admission,
        then: (p) => (published = p.catch((err) => log.warn({ err, desktop: row.id }, 'the start was not published'))),
      });
      if (!claimed) throw notAvailable(row, 'start');
      for (const [id, c] of checked) if (Date.now() - c.claim >= CHECKED_KEPT_MS) checked.delete(id);
      checked.set(row.id, { claim: claim.getTime(), row: claimed, disks: await disks, spec: await machine });
    } catch (err) {
      admitted();
      placement.forget(hypervisorId);
      throw err;
    }
    try {
      await queue.enqueue(row.id, hypervisorId);
    } catch (err) {
      admitted();
      // Not queued (the database refused): the claim is given back.
      placement.forget(hypervisorId);
      await update(row.id, { status: row.status, currentAction: row.currentAction }, 'Starting');
      throw err;
    }
    admitted();
    await published;
    log.info({ desktop: row.id, hypervisor: hypervisorId }, 'desktop start queued');
    await record(row.id, 'start', cause, { hypervisor: hypervisorId });
    return { status: 'Starting' };
  }

  /** `cause`: who asked (a person), or the system's reason; none given: the system. */
  async function stop(row: DomainRow, cause: EventCause = {}): Promise<{ status: string }> {
    // A fresh-each-time pool's desktop is given back by its stop: destroyed at once, no guest shutdown to wait for (its
    // disk goes with it), and its pool prepares the next from the template.
    if (row.poolId !== null && !row.persistent && (statusIn(STOPPABLE, row.status) || statusIn(FORCE_STOPPABLE, row.status))) {
      await record(row.id, 'stop', cause);
      await destroyDesktop(row);
      return { status: 'Stopped' };
    }
    if (statusIn(STOPPABLE, row.status)) {
      const forceStopAt = new Date(Date.now() + ctx.config.shutdownTimeoutSeconds * 1000);
      await update(row.id, { status: 'Shutting-down', forceStopAt });
      await record(row.id, 'stop', cause);
      await driver.shutdown(row.id).catch((err) => log.warn({ err, desktop: row.id }, 'ACPI shutdown failed'));
      armShutdownTimer(row.id, forceStopAt);
      return { status: 'Shutting-down' };
    }
    // A second stop while shutting down is the force stop.
    if (statusIn(FORCE_STOPPABLE, row.status)) return forceStop(row.id, cause);
    // A start still in the queue is called off.
    if (row.status === 'Starting' && (await queue.cancel(row.id))) {
      await update(row.id, { status: 'Stopped' });
      await record(row.id, 'stop', cause);
      return { status: 'Stopped' };
    }
    throw notAvailable(row, 'stop');
  }

  /** The shutdown timeout: forced if the desktop still shuts down (its host's watcher, in another process, may have seen it stop). */
  async function shutdownTimedOut(id: string) {
    if ((await findDomain(db, id))?.status === 'Shutting-down') await forceStop(id, { reason: 'shutdown_timeout' });
    else clearShutdownTimer(id);
  }

  async function forceStop(id: string, cause: EventCause = {}): Promise<{ status: string }> {
    clearShutdownTimer(id);
    await update(id, { status: 'Stopping' });
    await record(id, 'force_stop', cause);
    await driver.destroy(id).catch((err) => log.warn({ err, desktop: id }, 'destroy failed'));
    // The driver's "stopped" event finishes the job; if the machine was already gone, do it here.
    if ((await driver.status(id)) === 'absent') await machineGone(id);
    return { status: 'Stopping' };
  }

  async function reset(row: DomainRow, cause: EventCause = {}) {
    if (!statusIn(GUEST_UP, row.status)) throw notAvailable(row, 'reset');
    await driver.reset(row.id);
    await record(row.id, 'reset', cause);
    return { status: row.status };
  }

  async function retry(row: DomainRow) {
    if (!statusIn(RETRYABLE, row.status)) throw notAvailable(row, 'retry');
    try {
      await assertDisksReady(await disksOf(db, row.id));
    } catch (err) {
      if (err instanceof ApiError) await update(row.id, { currentAction: err.code });
      throw err;
    }
    await update(row.id, { status: 'Stopped', currentAction: null });
    return { status: 'Stopped' };
  }

  /** Deletes a desktop for good: machine, its own disks (never a template's), the record. */
  async function destroyDesktop(row: DomainRow) {
    if (deleting.has(row.id)) return;
    deleting.add(row.id);
    changes.emit('leaving', row);
    try {
      clearShutdownTimer(row.id);
      stopWaitingForIp(row.id);
      await queue.cancel(row.id);
      if ((await driver.status(row.id)) !== 'absent') await driver.destroy(row.id).catch(() => undefined);
      const disks = (await disksOf(db, row.id)).filter((d) => d.kind !== 'template');
      await db.delete(schema.domains).where(eq(schema.domains.id, row.id));
      for (const d of disks) {
        const stillUsed = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.storageId, d.id));
        if (stillUsed.length > 0) continue;
        await db.delete(schema.storage).where(eq(schema.storage.id, d.id));
        await removeDiskFile(ctx, d).catch((err) => log.warn({ err, path: d.path }, 'could not remove disk file'));
      }
      bus.toUser(row.userId, 'desktop_delete', { id: row.id });
      changes.emit('deleted', row);
    } finally {
      deleting.delete(row.id);
    }
  }

  /** The machine is no longer running: a temporary desktop disappears, any other is stopped. */
  async function machineGone(id: string) {
    clearShutdownTimer(id);
    stopWaitingForIp(id);
    log.info({ desktop: id }, 'machine stopped');
    const row = await findDomain(db, id);
    if (!row || deleting.has(id)) return;
    const why = crashed.delete(id) ? 'crashed' : undefined;
    if (!row.persistent) return destroyDesktop(row);
    if (row.status === 'Stopped') return;
    const failed = row.status === 'Starting';
    // Conditional on the state read: the driver's event and a force stop's own check may both come here (one records it).
    if (!(await update(id, { status: failed ? 'Failed' : 'Stopped', startedAt: null, guestIp: null }, row.status))) return;
    if (failed) await record(id, 'start_failed', { reason: why ?? 'machine_gone' }, { hypervisor: row.hypervisorId });
    else await recordStopped(row, why ?? (statusIn(['Shutting-down', 'Stopping'], row.status) ? undefined : 'guest_shutdown'));
  }

  async function onMachineEvent(e: MachineEvent) {
    // Another live process watches that host: it writes what the event means (once).
    if (e.host && !watch.watches(e.host)) return;
    if (e.host && e.host !== LOCAL_HYPERVISOR) {
      // A machine on a host its desktop no longer runs on (the host was marked down while away; it is
      // destroyed when the host is reconciled): not the desktop's news.
      const row = await findDomain(db, e.id);
      if (row && row.hypervisorId !== e.host) return;
    }
    switch (e.type) {
      case 'stopped':
        return machineGone(e.id);
      case 'crashed':
        log.warn({ desktop: e.id, reason: e.reason }, 'machine crashed');
        crashed.add(e.id);
        return void (await driver.destroy(e.id, e.host).catch(() => undefined));
      case 'paused':
        return void (await update(e.id, { status: 'Paused' }, GUEST_UP));
      case 'resumed':
        return void (await update(e.id, { status: 'Started' }, 'Paused'));
      default:
        return;
    }
  }

  /**
   * After a restart: machines still running are adopted, states corrected, orphans stopped. Desktops
   * of a remote host that is not online (yet: the stored hosts connect in the background) are left
   * as they are; that host is reconciled when it comes online (`hostId`: only its desktops and machines,
   * by the process watching it). With other live processes, a desktop going up there that does not run
   * yet may be their start under way: left as it is.
   */
  async function reconcile(hostId?: string) {
    if (hostId) clearDownTimer(hostId);
    const machines = (await driver.list()).filter((m) => !hostId || m.host === hostId);
    const all = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'desktop'));
    const byId = new Map(all.map((r) => [r.id, r]));
    // A remote host's machine whose desktop does not run there by the database (the host was marked
    // down while away, the desktop stopped or started elsewhere): destroyed there, never adopted.
    const elsewhere = machines.filter((m) => m.host && m.host !== LOCAL_HYPERVISOR && byId.has(m.id) && byId.get(m.id)!.hypervisorId !== m.host);
    for (const m of elsewhere) {
      log.warn({ desktop: m.id, hypervisor: m.host }, 'destroying a machine its desktop no longer runs on that hypervisor');
      await driver.destroy(m.id, m.host).catch((err) => log.error({ err, desktop: m.id, hypervisor: m.host }, 'machine on a released hypervisor not destroyed'));
    }
    const running = new Set(machines.filter((m) => !elsewhere.includes(m)).map((m) => m.id));
    const online = new Map<string, boolean>();
    const unknownNow = async (host: string | null) => {
      // This machine's desktops are known here unless another process owns its QEMU (LOCAL_HYPERVISOR=off).
      if (!host || host === LOCAL_HYPERVISOR) return !ctx.config.localHypervisor;
      if (!online.has(host)) online.set(host, (await ctx.engine.hosts.status(host).catch(() => null))?.online ?? false);
      return !online.get(host);
    };
    const rows = hostId ? all.filter((r) => r.hypervisorId === hostId) : all;
    // Starts still queued (in any process) are the queue's: waiting ones run, those of a dead process are cleared there.
    const queued = await queue.desktops();
    for (const row of rows) {
      if (!running.has(row.id) && !statusIn(AT_REST, row.status) && (await unknownNow(row.hypervisorId))) continue;
      if (queued.has(row.id)) continue;

      if (running.has(row.id)) {
        const mac = privateMacOf(row);
        const settled = statusIn(VIEWABLE, row.status);
        if (!settled) await update(row.id, { status: mac && !row.guestIp ? 'WaitingIP' : 'Started' });
        // Its usage counts from now when no interval is open (a server older than the usage records, an
        // interval closed while nobody watched); an open one goes on (one open interval per desktop).
        await openUsage(ctx, row.id);
        if (row.status === 'Shutting-down') {
          await driver.shutdown(row.id).catch(() => undefined);
          // Its force stop keeps the moment stored before the restart (one from now if none was).
          let at = row.forceStopAt;
          if (!at) at = (await update(row.id, { forceStopAt: new Date(Date.now() + ctx.config.shutdownTimeoutSeconds * 1000) }, 'Shutting-down'))?.forceStopAt ?? null;
          if (at) armShutdownTimer(row.id, at);
        }
        // Still waiting for its address when the last run ended: wait on, within what is left of its time.
        if (mac && !row.guestIp && (row.status === 'WaitingIP' || !settled)) waitForIp(row.id, mac, row.startedAt?.getTime() ?? Date.now());
      } else if (row.persistent && row.status === CREATING_DESKTOP) {
        // Its creation was interrupted: the startup sweep finishes it (storage/sweep.ts).
        continue;
      } else if (!statusIn(AT_REST, row.status)) {
        if (!row.persistent) await destroyDesktop(row);
        else if ((await update(row.id, { status: 'Stopped', startedAt: null, guestIp: null })) && statusIn(ON_HYPERVISOR, row.status)) await recordStopped(row, 'server_restart');
      }
    }
    for (const id of running) {
      if (!byId.has(id)) {
        log.warn({ machine: id }, 'destroying a machine that no desktop owns');
        await driver.destroy(id).catch(() => undefined);
      }
    }
  }

  /*
   * A remote host that fails. Offline (its connection lost): what ran there is not known, so its
   * desktops show `Unknown` (nothing offered) until it is back or marked down. Marked down (by an
   * admin, or after HYPERVISOR_DOWN_AFTER_SECONDS): its desktops are stopped (temporary ones go), to
   * start on another host; what still runs there is destroyed when the host comes back (reconcile).
   */
  const downTimers = new Map<string, NodeJS.Timeout>();
  function clearDownTimer(hostId: string) {
    clearTimeout(downTimers.get(hostId));
    downTimers.delete(hostId);
  }
  /** The desktops that ran (or were being stopped) on a host: not at rest, not being created or started. */
  const desktopsLeftOn = async (hostId: string) =>
    (await db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'desktop'), eq(schema.domains.hypervisorId, hostId)))).filter(
      (r) => !statusIn(AT_REST, r.status) && !statusIn(GOING_UP, r.status) && r.status !== CREATING_DESKTOP,
    );

  async function hostLost(hostId: string) {
    if (hostId === LOCAL_HYPERVISOR) return;
    for (const row of await desktopsLeftOn(hostId)) {
      if (row.status === 'Unknown') continue;
      clearShutdownTimer(row.id);
      stopWaitingForIp(row.id);
      await update(row.id, { status: 'Unknown' }, row.status);
    }
    const after = ctx.config.hypervisorDownAfterSeconds;
    if (after > 0 && !downTimers.has(hostId)) {
      downTimers.set(
        hostId,
        setTimeout(() => {
          downTimers.delete(hostId);
          void (async () => {
            // Still offline? (Back in the meantime: reconciled, nothing to release.)
            if ((await ctx.engine.hosts.status(hostId))?.online !== false) return;
            const released = await releaseHost(hostId);
            log.warn({ hypervisor: hostId, desktops: released.length, seconds: after }, 'hypervisor offline too long: marked down');
          })().catch((err) => log.error({ err, hypervisor: hostId }, 'hypervisor not marked down'));
        }, after * 1000).unref(),
      );
    }
  }

  /** Marks a host down: its desktops stopped (temporary ones deleted); their ids. */
  async function releaseHost(hostId: string): Promise<string[]> {
    clearDownTimer(hostId);
    const released: string[] = [];
    for (const row of await desktopsLeftOn(hostId)) {
      clearShutdownTimer(row.id);
      stopWaitingForIp(row.id);
      if (!row.persistent) await destroyDesktop(row);
      else if (!(await update(row.id, { status: 'Stopped', startedAt: null, guestIp: null }, row.status))) continue;
      else await recordStopped(row, 'hypervisor_down');
      released.push(row.id);
    }
    return released;
  }

  /** Remote hosts whose connection from this process is lost (or never made: told offline). */
  const offlineHere = new Set<string>();
  const reconcileHost = (hostId: string) => reconcile(hostId).catch((err) => log.error({ err, hypervisor: hostId }, 'hypervisor not reconciled'));
  const loseHost = (hostId: string) => hostLost(hostId).catch((err) => log.error({ err, hypervisor: hostId }, 'desktops of a lost hypervisor not marked'));
  // One watcher per remote host (host-watch.ts): it alone acts on the host's events, connection and loss.
  const watch = createHostWatch({
    locks: ctx.locks,
    hosts: async () => (await db.select({ id: schema.hypervisors.id }).from(schema.hypervisors)).map((h) => h.id).filter((id) => id !== LOCAL_HYPERVISOR),
    // Taken (a dead watcher's, or nobody's yet): the host as this process sees it now. Still connecting: its outcome tells.
    taken: async (hostId) => {
      log.info({ hypervisor: hostId }, 'watching the hypervisor');
      if ((await ctx.engine.hosts.status(hostId))?.online) await reconcileHost(hostId);
      else if (offlineHere.has(hostId)) await loseHost(hostId);
    },
    dropped: (hostId) => {
      clearDownTimer(hostId);
      log.warn({ hypervisor: hostId }, 'no longer watching the hypervisor');
    },
    log,
  });

  /*
   * Timed work a process armed in its memory dies with it: a force stop at the stored `force_stop_at`,
   * a wait for a guest's address. The watcher of the desktop's host looks every TIMED_BACKSTOP_MS for
   * such work left undone (PostgreSQL; one process on PGlite arms them all itself) and does it: a
   * force stop TIMED_BACKSTOP_MS past its moment, a guest's address read from the leases (or its wait
   * timed out) — each write conditional on the state, so a live arming process doing it too changes nothing.
   */
  async function backstop() {
    const hosts = watch.held();
    if (hosts.length === 0) return;
    const d = schema.domains;
    const rows = await db.select().from(d).where(and(inArray(d.hypervisorId, hosts), inArray(d.status, ['Shutting-down', 'WaitingIP'])));
    const now = Date.now();
    for (const row of rows) {
      if (row.status === 'Shutting-down') {
        if (shutdownTimers.has(row.id) || !row.forceStopAt || row.forceStopAt.getTime() + TIMED_BACKSTOP_MS > now) continue;
        log.warn({ desktop: row.id }, 'force stop due and armed by no live process: done by the host\'s watcher');
        await forceStop(row.id, { reason: 'shutdown_timeout' });
        continue;
      }
      const mac = privateMacOf(row);
      if (!mac || ipWaits.has(row.id)) continue;
      const since = row.startedAt?.getTime() ?? now;
      const ip = network.addressOf(mac, since);
      if (ip || since + ctx.config.guestIpTimeoutSeconds * 1000 + TIMED_BACKSTOP_MS <= now) await addressWaited(row.id, ip);
    }
  }
  let backstopBusy = false;
  const backstopTimer = ctx.locks.everyGranted
    ? undefined
    : setInterval(() => {
        if (backstopBusy) return;
        backstopBusy = true;
        backstop()
          .catch((err) => log.warn({ err }, 'timed work left by other processes not looked at'))
          .finally(() => (backstopBusy = false));
      }, TIMED_BACKSTOP_MS);
  backstopTimer?.unref();

  const unsubscribe = driver.onEvent((e) => void onMachineEvent(e).catch((err) => log.error({ err }, 'machine event failed')));
  // A remote host (re)connected: its watcher adopts its domains or corrects its desktops, as after a
  // restart; a process that does not watch it tries to (nobody may: its watcher gone meanwhile).
  const offOnline = ctx.engine.hosts.onOnline?.((hostId) => {
    offlineHere.delete(hostId);
    if (watch.watches(hostId)) void reconcileHost(hostId);
    else void watch.tryTake([hostId]).catch((err) => log.warn({ err, hypervisor: hostId }, 'hypervisor watch not tried'));
  });
  // Lost by its watcher: it keeps the watch (a process that still reaches the host is not known here).
  const offOffline = ctx.engine.hosts.onOffline?.((hostId) => {
    offlineHere.add(hostId);
    if (watch.watches(hostId)) void loseHost(hostId);
  });

  return {
    start,
    stop,
    forceStop,
    reset,
    retry,
    destroyDesktop,
    reconcile,
    releaseHost,
    publish,
    announce,
    changes,
    /** The desktops this process is destroying now (between `leaving` and `deleted`). */
    leavingIds: () => [...deleting],
    /** Whether this process watches host `hostId` (acts on its events, connection and loss). */
    watches: watch.watches,
    /** Takes starts from the installation's queue as the live process `self` (Database.join's), once the start-up's repairs are done. */
    runQueue(self: LiveProcess | null) {
      queue.start(self);
    },
    close() {
      clearInterval(backstopTimer);
      watch.close();
      void queue.close();
      unsubscribe();
      offOnline?.();
      offOffline?.();
      for (const t of shutdownTimers.values()) clearTimeout(t);
      for (const host of [...downTimers.keys()]) clearDownTimer(host);
      for (const id of [...ipWaits.keys()]) stopWaitingForIp(id);
    },
  };
}
export type DesktopLifecycle = ReturnType<typeof createDesktopLifecycle>;
