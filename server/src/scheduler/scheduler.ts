import { randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { schema, type Db } from '../db';
import type { Job, PgBoss } from 'pg-boss';
import { HEARTBEAT_SECONDS, QUEUE_POLL_MS, queueOf } from '../jobs/queue';
import { MAX_TIMER_MS, type Clock, type TimerHandle } from './clock';

export type ScheduledJobRow = typeof schema.scheduledJobs.$inferSelect;
export type ScheduledJobHandler = (params: Record<string, unknown>, job: ScheduledJobRow) => Promise<void>;

/** pg-boss's queue of the timed actions (PostgreSQL): one pg-boss job per `scheduled_jobs` row, same id, due at its instant. */
const TIMED_QUEUE = 'vdi-timed';
/** Each takeover of an action whose process died counts as a retry in pg-boss. */
const TAKEOVERS = 1_000;

/**
 * Timed work kept in the database (scheduled_jobs): booking starts and ends, warnings before an
 * end, plan boundaries. Whatever is due runs in order (for the same instant, lower `order` first).
 *
 * On the embedded database (one process) one timer on `clock` is armed for the earliest pending job;
 * after a restart, jobs left running go back to pending, overdue ones run at once and the rest are
 * re-armed. On PostgreSQL (several processes, the real clock) each row is also a pg-boss job due at its instant
 * (server/src/jobs/queue.ts, real time): the live processes poll for due ones and pg-boss hands each
 * to one of them; one whose process died while it ran (its heartbeat lapsed) is run again by another.
 */
export function createScheduler(db: Db, clock: Clock, log: Logger) {
  // pg-boss keeps to the database's time: a scheduler on another clock (the tests' manual one) keeps its own timer.
  const queue = clock.real ? queueOf(db) : undefined;
  const handlers = new Map<string, { run: ScheduledJobHandler; order: number }>();
  let timer: TimerHandle | null = null;
  let armedAt: number | null = null;
  let chain: Promise<void> = Promise.resolve();
  let stopped = true;

  function register(kind: string, run: ScheduledJobHandler, order = 0) {
    handlers.set(kind, { run, order });
  }

  /** Jobs are grouped by a key (e.g. `booking:<id>`) so that moving or deleting the thing re-plans them. */
  async function schedule(kind: string, runAt: Date, params: Record<string, unknown> & { key: string }) {
    const [row] = await db.insert(schema.scheduledJobs).values({ id: randomUUID(), kind, runAt, params }).returning();
    if (queue) await (await bossReady()).send(TIMED_QUEUE, {}, { id: row!.id, startAfter: runAt });
    else await arm();
    return row!;
  }

  /**
   * The jobs of a span of time (a booking, a plan), re-planned under one key: at its start (when
   * still ahead), a warning `minutes` before its end for each of `warnings`, and at its end.
   */
  async function scheduleSpan(
    key: string,
    span: { start: Date; end: Date },
    kinds: { start: string; warn: string; end: string },
    params: Record<string, unknown>,
    warnings: readonly { minutes: number; type: string }[],
  ) {
    await cancel(key);
    const now = clock.now();
    if (span.start > now) await schedule(kinds.start, span.start, { ...params, key });
    for (const w of warnings) {
      const at = new Date(span.end.getTime() - w.minutes * 60_000);
      if (at > now && at >= span.start) await schedule(kinds.warn, at, { ...params, key, minutes: w.minutes, type: w.type });
    }
    await schedule(kinds.end, span.end, { ...params, key });
  }

  async function cancel(key: string) {
    const cancelled = await db
      .update(schema.scheduledJobs)
      .set({ status: 'cancelled', doneAt: clock.now() })
      .where(and(eq(schema.scheduledJobs.status, 'pending'), sql`${schema.scheduledJobs.params}->>'key' = ${key}`))
      .returning({ id: schema.scheduledJobs.id });
    // (A pg-boss job left behind would find its row cancelled and do nothing.)
    if (queue && cancelled.length > 0) await (await bossReady()).cancel(TIMED_QUEUE, cancelled.map((c) => c.id));
    else await arm();
  }

  async function pending(key?: string) {
    const where = key
      ? and(eq(schema.scheduledJobs.status, 'pending'), sql`${schema.scheduledJobs.params}->>'key' = ${key}`)
      : eq(schema.scheduledJobs.status, 'pending');
    return db.select().from(schema.scheduledJobs).where(where).orderBy(asc(schema.scheduledJobs.runAt));
  }

  /** Arms the one timer for the earliest pending job (re-armed when the earliest changes). */
  async function arm() {
    if (stopped || queue) return;
    const [first] = await db
      .select({ runAt: schema.scheduledJobs.runAt })
      .from(schema.scheduledJobs)
      .where(eq(schema.scheduledJobs.status, 'pending'))
      .orderBy(asc(schema.scheduledJobs.runAt))
      .limit(1);
    const at = first ? first.runAt.getTime() : null;
    if (at === armedAt && timer) return;
    clock.clearTimer(timer);
    timer = null;
    armedAt = at;
    if (at === null) return;
    const wait = at - clock.now().getTime();
    // Already due (scheduled in the past, or the clock moved on while this was being armed): run now. A
    // timer of 0 on a manual clock would wait for its next move (the idle auto-shutdown tests failed so).
    if (wait <= 0) {
      armedAt = null;
      void runDue();
      return;
    }
    timer = clock.setTimer(() => {
      timer = null;
      armedAt = null;
      void runDue();
    }, Math.min(Math.max(0, wait), MAX_TIMER_MS));
  }

  /** `takeover`: its process died while it ran (the row is still `running`): it runs again here. */
  async function runOne(job: ScheduledJobRow, takeover = false) {
    const [claimed] = await db
      .update(schema.scheduledJobs)
      .set({ status: 'running' })
      .where(and(eq(schema.scheduledJobs.id, job.id), inArray(schema.scheduledJobs.status, takeover ? ['pending', 'running'] : ['pending'])))
      .returning();
    if (!claimed) return;
    const handler = handlers.get(job.kind);
    try {
      if (!handler) throw new Error(`no handler for scheduled job ${job.kind}`);
      await handler.run(job.params, job);
      await db.update(schema.scheduledJobs).set({ status: 'done', doneAt: clock.now() }).where(eq(schema.scheduledJobs.id, job.id));
    } catch (err) {
      log.error({ err, job: job.id, kind: job.kind }, 'scheduled job failed');
      await db
        .update(schema.scheduledJobs)
        .set({ status: 'failed', error: err instanceof Error ? err.message : String(err), doneAt: clock.now() })
        .where(eq(schema.scheduledJobs.id, job.id));
    }
  }

  // ——— On PostgreSQL: pg-boss hands out the due actions ———
  let boss: Promise<PgBoss> | null = null;
  const bossReady = () =>
    (boss ??= queue!.open(TIMED_QUEUE, { heartbeatSeconds: HEARTBEAT_SECONDS, expireInSeconds: 3600, retryLimit: TAKEOVERS, retryDelay: 0, deleteAfterSeconds: 24 * 3600 }));
  let poller: ReturnType<typeof setInterval> | undefined;
  let lookQueued = false;

  /** Runs what pg-boss hands this process as due, in order, until nothing is left; each is completed in pg-boss after its row. */
  async function takeDue() {
    const b = await bossReady();
    for (;;) {
      if (stopped) return;
      const jobs: Job<{ resumed?: boolean }>[] = await b.fetch(TIMED_QUEUE, { batchSize: 50 });
      if (jobs.length === 0) return;
      const rows = await db.select().from(schema.scheduledJobs).where(inArray(schema.scheduledJobs.id, jobs.map((j) => j.id)));
      const byId = new Map(jobs.map((j) => [j.id, j]));
      const weight = (j: ScheduledJobRow) => handlers.get(j.kind)?.order ?? 0;
      rows.sort((a, c) => a.runAt.getTime() - c.runAt.getTime() || weight(a) - weight(c));
      // The heartbeat of the batch while it runs: a process that stops sending it has its actions taken over.
      const beat = setInterval(() => void b.touch(TIMED_QUEUE, jobs.map((j) => ({ id: j.id, retryCount: j.retryCount }))).catch(() => undefined), (HEARTBEAT_SECONDS * 1000) / 3);
      try {
        for (const row of rows) {
          const job = byId.get(row.id)!;
          await runOne(row, job.retryCount > 0 || Boolean(job.data?.resumed));
          await b.complete(TIMED_QUEUE, { id: job.id, retryCount: job.retryCount });
          byId.delete(row.id);
        }
        // Jobs without a row (deleted meanwhile): nothing to do.
        for (const job of byId.values()) if (!rows.some((r) => r.id === job.id)) await b.complete(TIMED_QUEUE, { id: job.id, retryCount: job.retryCount });
      } finally {
        clearInterval(beat);
      }
    }
  }

  /** Runs every job that is due, one at a time and in order; calls queue up behind each other. */
  function runDue(): Promise<void> {
    if (queue) {
      // One look at a time waiting behind the run under way (the poll asks every second).
      if (!lookQueued) {
        lookQueued = true;
        chain = chain
          .then(() => {
            lookQueued = false;
            return takeDue();
          })
          .catch((err) => log.error({ err }, 'scheduler run failed'));
      }
      return chain;
    }
    chain = chain.then(async () => {
      if (stopped) return;
      for (;;) {
        const due = await db
          .select()
          .from(schema.scheduledJobs)
          .where(and(eq(schema.scheduledJobs.status, 'pending'), lte(schema.scheduledJobs.runAt, clock.now())))
          .orderBy(asc(schema.scheduledJobs.runAt))
          .limit(100);
        if (due.length === 0) break;
        const weight = (j: ScheduledJobRow) => handlers.get(j.kind)?.order ?? 0;
        due.sort((a, b) => a.runAt.getTime() - b.runAt.getTime() || weight(a) - weight(b));
        for (const job of due) {
          if (stopped) return;
          await runOne(job);
        }
      }
      await arm();
    }).catch((err) => log.error({ err }, 'scheduler run failed'));
    return chain;
  }

  return {
    register,
    schedule,
    scheduleSpan,
    cancel,
    pending,
    runDue,
    /** Start-up: jobs cut short by a stop run again, overdue ones now, the rest when due. */
    async start() {
      stopped = false;
      if (queue) {
        // Rows pg-boss does not know yet (scheduled before it ran them) are handed to it; those it
        // has (pending, or running in a live process) keep theirs (the insert skips a known id).
        const b = await bossReady();
        const open = await db.select().from(schema.scheduledJobs).where(inArray(schema.scheduledJobs.status, ['pending', 'running']));
        if (open.length > 0) await b.insert(TIMED_QUEUE, open.map((r) => ({ id: r.id, startAfter: r.runAt, data: { resumed: r.status === 'running' } })));
        poller = setInterval(() => void runDue(), QUEUE_POLL_MS);
        poller.unref();
        await runDue();
        return;
      }
      await db.update(schema.scheduledJobs).set({ status: 'pending' }).where(inArray(schema.scheduledJobs.status, ['running']));
      await runDue();
    },
    /** Resolves when the work started so far (and what it queued) is finished. */
    async idle() {
      let seen: Promise<void>;
      do {
        seen = chain;
        await seen;
      } while (seen !== chain);
    },
    /** No more runs; resolves when the job under way (if any) is finished. */
    async stop() {
      stopped = true;
      clock.clearTimer(timer);
      timer = null;
      armedAt = null;
      clearInterval(poller);
      await chain;
      if (boss) {
        boss = null;
        await queue!.release();
      }
    },
  };
}
export type Scheduler = ReturnType<typeof createScheduler>;
