// Start queue: at most N desktop starts run at once on each host, the rest wait in FIFO order. Under
// TCG a boot burns a whole core for ~10 s, and even under KVM a storm of starts (a class of 30
// pressing "start" at 9:00) is smoother in a queue; the web shows each waiting desktop its position.
// Each host is a lane of its own (the original's engine: a worker per hypervisor): a start waits only
// for starts on the same host, which does the work; this server only asks.
//
// The queue is the table `start_queue`, shared by every server process of the installation: the limit
// holds across them, positions are the installation's order, and any process that reaches a host runs
// the next start of its lane (a start is data — the desktop and its host — that the runner rebuilds
// from the database). A process takes starts under a transaction-scoped advisory lock per lane, so two
// never count the same free slot (one call of the database's `start_queue_take`, migration 0039). An
// entry whose runner died (its live connection's backend gone from pg_stat_activity) is taken out and
// handed to `orphaned`. Processes wake each other through the peers' notifications when an entry
// arrives or a slot frees, and every POLL_MS besides (a notification lost, a runner dead). Embedded (PGlite, one process): the same table and code; a runner other than this
// process is one of an earlier run.
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { LOCK_CLASSES, type Db, type LiveProcess } from '../db';
import { startQueue as table } from '../db/schema';

export type QueuePositions = {
  /** waiting desktops in start order; position 1 starts next (on its host) */
  waiting: { desktopId: string; position: number }[];
  /** desktops whose start is in progress */
  running: string[];
};

/** A start as the queue holds it: which desktop, on which host. `fresh`: taken by the pass of its own enqueue in this
 *  process (it never waited: what its caller read at the claim is still so). */
export type QueuedStart = { desktopId: string; lane: string; fresh?: boolean };

/** How often every process looks at the queue without being told (lost notifications, dead runners). */
export const START_QUEUE_POLL_MS = 3_000;
/** The class of the per-lane advisory locks (two-key form: apart from the single-key locks of db/index.ts). */
const LANE_LOCK_CLASS = LOCK_CLASSES.startLane;

/** What the queue needs of the process around it (given by the desktops' lifecycle, `open`). */
export type StartQueueParts = {
  db: Db;
  log: Pick<Logger, 'warn' | 'error'>;
  /** other processes share the database (PostgreSQL): a runner's liveness is its backend in pg_stat_activity */
  shared: boolean;
  /** tells the other processes that `lane` changed, and hears them (ctx.peers) */
  publish: (payload: { lane: string; from: string }) => Promise<void>;
  subscribe: (handler: (payload: unknown) => void) => () => void;
  /** whether this process runs starts on host `lane` (only then does it take that lane's entries) */
  canRun: (lane: string) => boolean;
  /** runs one start taken by this process (errors are the runner's to record) */
  run: (start: QueuedStart) => Promise<void>;
  /** a start taken out of the queue because the process running it died (`since`: when that process took it) */
  orphaned: (start: QueuedStart, since: Date) => Promise<void>;
};

export class StartQueue extends EventEmitter<{ changed: [lane: string, left: string[]] }> {
  #concurrency: number;
  #parts: StartQueueParts | undefined;
  #self: LiveProcess | undefined;
  readonly #id = randomUUID();
  /** starts this process runs now (settled promises are removed) */
  readonly #running = new Map<string, Promise<void>>();
  /** desktops whose enqueue() in this process is under way: taken at once, they never "left" a wait */
  readonly #fresh = new Set<string>();
  /** per lane: the pass under way, and the one asked for after it */
  readonly #current = new Map<string, Promise<void>>();
  readonly #next = new Map<string, Promise<void>>();
  #poll: ReturnType<typeof setInterval> | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(opts: { concurrency?: number } = {}) {
    super();
    this.#concurrency = validConcurrency(opts.concurrency ?? availableParallelism());
  }

  get concurrency(): number {
    return this.#concurrency;
  }

  /** Raising the limit takes waiting entries at once; lowering it lets running ones finish. */
  setConcurrency(n: number): void {
    this.#concurrency = validConcurrency(n);
    void this.#pumpAll();
  }

  /** Connects the queue to its table and its runner; nothing is taken before `start`. */
  open(parts: StartQueueParts): void {
    this.#parts = parts;
    this.#unsubscribe = parts.subscribe((payload) => {
      const p = payload as { lane?: unknown; from?: unknown } | undefined;
      if (p?.from === this.#id) return;
      // No payload: the notifications had a gap, look at every lane.
      void (typeof p?.lane === 'string' ? this.pump(p.lane) : this.#pumpAll());
    });
  }

  /**
   * Starts taking entries as the live process `self` (Database.join's; none on PGlite: this run of the
   * process). Entries of dead runners are cleared at once, the waiting ones taken as slots allow.
   */
  start(self: LiveProcess | null): void {
    this.#self = self ?? { pid: process.pid, since: new Date().toISOString() };
    this.#poll = setInterval(() => void this.#pumpAll(), START_QUEUE_POLL_MS);
    this.#poll.unref();
    void this.#pumpAll();
  }

  /** Stops taking entries (the process's stop); starts under way finish, entries stay for the others.
   *  Resolves once no pass over the table is under way. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    this.#unsubscribe?.();
    await Promise.all([...this.#current.values(), ...this.#next.values()]);
  }

  get #db(): Db {
    if (!this.#parts) throw new Error('the start queue is not open');
    return this.#parts.db;
  }

  /**
   * Queues the start of `desktopId` on host `lane` (a hypervisor id; this machine's by default). A desktop
   * already queued stays where it is (a double click must not start a machine twice). Resolves once
   * this process took what it could and the others were told.
   */
  async enqueue(desktopId: string, lane: string = LOCAL_HYPERVISOR): Promise<void> {
    this.#fresh.add(desktopId);
    try {
      await this.#db.insert(table).values({ desktopId, lane }).onConflictDoNothing();
      await this.pump(lane);
    } finally {
      this.#fresh.delete(desktopId);
    }
    // Taken here at once: nobody's place changed, and no other process has anything to take.
    if (this.#running.has(desktopId)) return;
    this.emit('changed', lane, []);
    await this.#tell(lane);
  }

  /** Removes a waiting entry, whichever process queued it. A start already in progress cannot be
   *  cancelled here: stop the machine instead. */
  async cancel(desktopId: string): Promise<boolean> {
    const [gone] = await this.#db
      .delete(table)
      .where(and(eq(table.desktopId, desktopId), isNull(table.startedAt)))
      .returning({ lane: table.lane });
    if (!gone) return false;
    this.emit('changed', gone.lane, [desktopId]);
    return true;
  }

  /** 1-based place among the waiting of its host, 0 while starting, null when not in the queue. */
  async position(desktopId: string): Promise<number | null> {
    const [entry] = await this.#db.select({ lane: table.lane }).from(table).where(eq(table.desktopId, desktopId));
    if (!entry) return null;
    const p = await this.positions(entry.lane);
    if (p.running.includes(desktopId)) return 0;
    return p.waiting.find((w) => w.desktopId === desktopId)?.position ?? null;
  }

  /** Every lane's (or only `lane`'s) waiting and running starts; positions count within a lane. */
  async positions(lane?: string): Promise<QueuePositions> {
    const rows = await this.#db
      .select({ desktopId: table.desktopId, lane: table.lane, startedAt: table.startedAt })
      .from(table)
      .where(lane === undefined ? undefined : eq(table.lane, lane))
      .orderBy(asc(table.id));
    const ahead = new Map<string, number>();
    const waiting: QueuePositions['waiting'] = [];
    const running: string[] = [];
    for (const r of rows) {
      if (r.startedAt) {
        running.push(r.desktopId);
        continue;
      }
      const position = (ahead.get(r.lane) ?? 0) + 1;
      ahead.set(r.lane, position);
      waiting.push({ desktopId: r.desktopId, position });
    }
    return { waiting, running };
  }

  /** Starts waiting or under way on host `lane`, in every process (placement, the hosts' view). 0 before `open`. */
  async inFlight(lane: string): Promise<number> {
    if (!this.#parts) return 0;
    const [r] = await this.#db.select({ n: count() }).from(table).where(eq(table.lane, lane));
    return r?.n ?? 0;
  }

  /** The desktops the queue holds (waiting or starting, in any process). */
  async desktops(): Promise<Set<string>> {
    const rows = await this.#db.select({ desktopId: table.desktopId }).from(table);
    return new Set(rows.map((r) => r.desktopId));
  }

  /** Resolves when no start taken by this process is running (for tests). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running.values());
  }

  /** Takes what this process may of `lane`. One pass at a time per lane; a pass asked for while one
   *  runs comes after it (and serves every caller who asked meanwhile). */
  pump(lane: string): Promise<void> {
    const queued = this.#next.get(lane);
    if (queued) return queued;
    const pass = (this.#current.get(lane) ?? Promise.resolve()).then(async () => {
      this.#next.delete(lane);
      const now = this.#take(lane).catch((err) => this.#parts?.log.warn({ err, lane }, 'the start queue was not read'));
      this.#current.set(lane, now);
      await now;
      if (this.#current.get(lane) === now) this.#current.delete(lane);
    });
    this.#next.set(lane, pass);
    return pass;
  }

  async #pumpAll(): Promise<void> {
    if (!this.#parts || !this.#self || this.#closed) return;
    try {
      const lanes = await this.#db.selectDistinct({ lane: table.lane }).from(table);
      await Promise.all(lanes.map((l) => this.pump(l.lane)));
    } catch (err) {
      this.#parts.log.warn({ err }, 'the start queue was not read');
    }
  }

  /** One pass on `lane`: clears entries of dead runners, then takes waiting ones while slots are free. */
  async #take(lane: string): Promise<void> {
    const parts = this.#parts;
    const self = this.#self;
    if (!parts || !self || this.#closed || !parts.canRun(lane)) return;
    // One call (a start waits for it): the lane's lock, then the queue as it stands once the lock is held (migration 0039).
    const result = await parts.db.execute(
      sql`select o_kind as kind, o_id as id, o_desktop_id as desktop_id, o_started_at as started_at
          from start_queue_take(${lane}, ${this.#concurrency}, ${self.pid}, ${self.since}::timestamptz, ${parts.shared}, ${LANE_LOCK_CLASS})`,
    );
    const rows = (result as unknown as { rows: { kind: 'orphan' | 'taken'; id: string | null; desktop_id: string; started_at: Date | string | null }[] }).rows;
    const orphans = rows.filter((r) => r.kind === 'orphan').map((r) => ({ desktopId: r.desktop_id, startedAt: r.started_at === null ? null : new Date(r.started_at) }));
    const taken = rows
      .filter((r) => r.kind === 'taken')
      .map((r) => ({ id: Number(r.id), desktopId: r.desktop_id }))
      .sort((a, b) => a.id - b.id);
    for (const o of orphans) {
      await parts.orphaned({ desktopId: o.desktopId, lane }, o.startedAt ?? new Date()).catch((err) => parts.log.error({ err, desktop: o.desktopId }, 'the start of a dead server process was not cleared'));
    }
    if (taken.length === 0) return;
    for (const t of taken) this.#running.set(t.desktopId, this.#run(parts, self, { desktopId: t.desktopId, lane, fresh: this.#fresh.has(t.desktopId) }));
    // Those that waited left the wait (and the places behind them moved); only fresh ones taken: no place changed.
    const left = taken.map((t) => t.desktopId).filter((id) => !this.#fresh.has(id));
    if (left.length === 0) return;
    this.emit('changed', lane, left);
    await this.#tell(lane);
  }

  async #run(parts: StartQueueParts, self: LiveProcess, start: QueuedStart): Promise<void> {
    try {
      await parts.run(start);
    } catch (err) {
      parts.log.error({ err, desktop: start.desktopId }, 'desktop start failed');
    }
    try {
      // Still this process's (a runner taken for dead meanwhile has lost it).
      await parts.db
        .delete(table)
        .where(and(eq(table.desktopId, start.desktopId), eq(table.runnerPid, self.pid), sql`${table.runnerSince} = ${self.since}::timestamptz`));
    } catch (err) {
      parts.log.warn({ err, desktop: start.desktopId }, 'a finished start stayed in the queue');
    } finally {
      this.#running.delete(start.desktopId);
    }
    // The slot is free: here first, then the others.
    if (this.#closed) return;
    await this.pump(start.lane);
    await this.#tell(start.lane);
  }

  /** Tells the other processes that `lane` changed (they take what they may of it). */
  async #tell(lane: string): Promise<void> {
    await this.#parts?.publish({ lane, from: this.#id }).catch((err) => this.#parts?.log.warn({ err, lane }, 'the other server processes were not told of the start queue'));
  }
}

function validConcurrency(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`start concurrency must be a positive integer, got ${n}`);
  return n;
}
