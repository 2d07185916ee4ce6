import { randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { schema, type Db } from '../db';
import { MAX_TIMER_MS, type Clock, type TimerHandle } from './clock';

export type ScheduledJobRow = typeof schema.scheduledJobs.$inferSelect;
export type ScheduledJobHandler = (params: Record<string, unknown>, job: ScheduledJobRow) => Promise<void>;

/**
 * Timed work kept in the database (scheduled_jobs): booking starts and ends, warnings before an
 * end, plan boundaries. One timer is armed for the earliest pending job; whatever is due runs in
 * order (for the same instant, lower `order` first). After a restart, jobs left running go back
 * to pending, overdue ones run at once and the rest are re-armed.
 */
export function createScheduler(db: Db, clock: Clock, log: Logger) {
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
    await arm();
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
    await db
      .update(schema.scheduledJobs)
      .set({ status: 'cancelled', doneAt: clock.now() })
      .where(and(eq(schema.scheduledJobs.status, 'pending'), sql`${schema.scheduledJobs.params}->>'key' = ${key}`));
    await arm();
  }

  async function pending(key?: string) {
    const where = key
      ? and(eq(schema.scheduledJobs.status, 'pending'), sql`${schema.scheduledJobs.params}->>'key' = ${key}`)
      : eq(schema.scheduledJobs.status, 'pending');
    return db.select().from(schema.scheduledJobs).where(where).orderBy(asc(schema.scheduledJobs.runAt));
  }

  /** Arms the one timer for the earliest pending job (re-armed when the earliest changes). */
  async function arm() {
    if (stopped) return;
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

  async function runOne(job: ScheduledJobRow) {
    const [claimed] = await db
      .update(schema.scheduledJobs)
      .set({ status: 'running' })
      .where(and(eq(schema.scheduledJobs.id, job.id), eq(schema.scheduledJobs.status, 'pending')))
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

  /** Runs every job that is due, one at a time and in order; calls queue up behind each other. */
  function runDue(): Promise<void> {
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
      await chain;
    },
  };
}
export type Scheduler = ReturnType<typeof createScheduler>;
