import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Db } from '../db';
import { schema } from '../db';
import { HEARTBEAT_SECONDS, QUEUE_POLL_MS, queueOf } from './queue';

export type JobRow = typeof schema.jobs.$inferSelect;
export type JobOutcome = 'done' | 'failed' | 'aborted';

export type JobContext = {
  job: JobRow;
  /** Aborted when someone cancels the job (or the server stops). */
  signal: AbortSignal;
  /** What the starter handed over in memory (`enqueue`'s `input`: e.g. an uploaded file); undefined after a restart. */
  input?: unknown;
  /** Reports progress (0–100) and any details; stored at most twice a second. */
  progress(percent: number, params?: Record<string, unknown>): Promise<void>;
};

export type JobHandler = {
  kind: string;
  run(ctx: JobContext): Promise<void>;
  /** After a restart, a job that was running is run again (true) or failed (false). */
  resumable: boolean;
  /** Told of the outcome, to publish it and put the target in its final state. */
  finished?(job: JobRow, outcome: JobOutcome, error?: unknown): Promise<void>;
  /** Told of each stored progress step, to publish it live. */
  progressed?(job: JobRow): void;
};

const PROGRESS_EVERY_MS = 500;

/** pg-boss's queue of the jobs (PostgreSQL): one pg-boss job per `jobs` row, with the same id. */
const JOBS_QUEUE = 'vdi-jobs';
/** A job queued here is fetched here at once; after this long any process may take it (this one died meanwhile). */
const OWN_START_SECONDS = 15;
/** Each job taken over counts as a retry in pg-boss: enough for any number of process deaths in practice. */
const TAKEOVERS = 1_000;
const INTERRUPTED = 'interrupted by a server restart';
/** How long a server's stop waits for its aborted jobs to end (each stops at its next step). */
const STOP_WAIT_MS = 30_000;

/**
 * Long work as persisted jobs (media downloads, template creation, disk growth, deployment
 * creation): each has a row with its status and progress, can be aborted, and survives restarts.
 *
 * On PostgreSQL (several server processes) pg-boss decides which live process runs each job, once
 * (server/src/jobs/queue.ts): a job queued here starts here at once; a job whose process died (its
 * heartbeat lapsed) is taken over by another, which runs it again when its kind is resumable and
 * marks it failed otherwise (its handler undoing what was begun). On the embedded database (one
 * process) the jobs run in this process and a restart resumes or fails them.
 */
export function createJobRunner(db: Db, log: Logger) {
  const queue = queueOf(db);
  const handlers = new Map<string, JobHandler>();
  const running = new Map<string, AbortController>();
  /** The end of each job running here (its outcome written, its handler told). */
  const settling = new Map<string, Promise<JobOutcome | undefined>>();
  let stopping = false;

  async function execute(row: JobRow, input?: unknown) {
    const handler = handlers.get(row.kind);
    if (!handler) throw new Error(`no handler for job kind ${row.kind}`);
    const controller = new AbortController();
    running.set(row.id, controller);
    let last = 0;
    let job = row;
    const ctx: JobContext = {
      job,
      signal: controller.signal,
      input,
      async progress(percent, params) {
        const now = Date.now();
        if (now - last < PROGRESS_EVERY_MS && percent < 100) return;
        last = now;
        const [updated] = await db
          .update(schema.jobs)
          .set({ progress: Math.max(0, Math.min(100, Math.round(percent))), params: { ...job.params, ...params }, updatedAt: new Date() })
          .where(and(eq(schema.jobs.id, job.id), inArray(schema.jobs.status, ['queued', 'running'])))
          .returning();
        if (updated) {
          job = updated;
          ctx.job = updated;
          handler.progressed?.(updated);
        } else {
          // Cancelled by another server process (`cancel` marked the row): stop here too.
          controller.abort();
        }
      },
    };
    let outcome: JobOutcome = 'done';
    let error: unknown;
    try {
      await handler.run(ctx);
    } catch (err) {
      error = err;
      outcome = controller.signal.aborted ? 'aborted' : 'failed';
      if (outcome === 'failed') log.warn({ err, job: row.id, kind: row.kind }, 'job failed');
    } finally {
      running.delete(row.id);
    }
    // Stopped by a server shutdown: left "running" in the database, so the next start resumes it.
    if (stopping && outcome === 'aborted' && handler.resumable) return outcome;
    const [final] = await db
      .update(schema.jobs)
      .set({
        status: outcome,
        progress: outcome === 'done' ? 100 : job.progress,
        error: error instanceof Error ? error.message : error ? String(error) : null,
        updatedAt: new Date(),
      })
      .where(eq(schema.jobs.id, row.id))
      .returning();
    await handler.finished?.(final ?? job, outcome, error);
    return outcome;
  }

  /**
   * After a restart, step one: jobs that cannot resume are marked failed, and their handlers
   * undo what they had begun (e.g. put a desktop disk back), before anything looks at the files.
   */
  async function failInterrupted() {
    // With the queue, another process may be running them: they are failed when taken over.
    if (queue) return;
    const rows = await db.select().from(schema.jobs).where(inArray(schema.jobs.status, ['queued', 'running']));
    for (const row of rows) {
      const handler = handlers.get(row.kind);
      if (handler?.resumable) continue;
      const [failed] = await db
        .update(schema.jobs)
        .set({ status: 'failed', error: INTERRUPTED, updatedAt: new Date() })
        .where(eq(schema.jobs.id, row.id))
        .returning();
      if (handler && failed) await handler.finished?.(failed, 'failed', new Error(INTERRUPTED));
    }
  }

  function track(id: string, run: Promise<JobOutcome | undefined>) {
    const done = run.catch((err) => {
      log.error({ err, job: id }, 'job crashed');
      return undefined;
    });
    settling.set(id, done);
    void done.finally(() => settling.get(id) === done && settling.delete(id));
    return done;
  }

  /**
   * Cancels a job for good: one running here is aborted and waited for (its handler undoes what it
   * had made: a partial download, a half-made template, the desktops of the chunk under way…); one
   * running in another server process is marked `aborted`, which that process notices at its next
   * progress report and stops the same way. Answers false when the job is not queued or running.
   */
  async function cancel(jobId: string, waitMs = 30_000): Promise<boolean> {
    const c = running.get(jobId);
    if (c) {
      c.abort();
      const done = settling.get(jobId);
      if (done) await Promise.race([done, new Promise((r) => setTimeout(r, waitMs).unref())]);
      return true;
    }
    const [marked] = await db
      .update(schema.jobs)
      .set({ status: 'aborted', error: 'cancelled', updatedAt: new Date() })
      .where(and(eq(schema.jobs.id, jobId), inArray(schema.jobs.status, ['queued', 'running'])))
      .returning({ id: schema.jobs.id });
    return Boolean(marked);
  }

  // ——— On PostgreSQL: pg-boss takes the jobs ———
  let boss: Promise<PgBoss> | null = null;
  // A heartbeat lapses after HEARTBEAT_SECONDS; a job may run a day (pg-boss's longest).
  const bossReady = () =>
    (boss ??= queue!.open(JOBS_QUEUE, { heartbeatSeconds: HEARTBEAT_SECONDS, expireInSeconds: 24 * 3600, retryLimit: TAKEOVERS, retryDelay: 0, deleteAfterSeconds: 24 * 3600 }));
  /** What the starter handed over in memory, until the job is taken here. */
  const inputs = new Map<string, unknown>();
  /** The end of a job queued here, for `enqueue`'s `done`. */
  const waiters = new Map<string, (done: Promise<JobOutcome | undefined>) => void>();
  /** The pg-boss attempt of each job running here (its heartbeats and its completion name it). */
  const attempts = new Map<string, number>();
  let poller: ReturnType<typeof setInterval> | undefined;
  let beater: ReturnType<typeof setInterval> | undefined;
  let polling: Promise<void> | null = null;
  /** The jobs being taken here, up to their pg-boss completion. */
  const taking = new Set<Promise<void>>();

  /** Runs a job pg-boss handed to this process: a new one, or one taken over from a process that died. */
  async function take(b: PgBoss, job: Job<{ resumed?: boolean }>) {
    const attempt = { id: job.id, retryCount: job.retryCount };
    const settle = async (done: Promise<JobOutcome | undefined> = Promise.resolve(undefined)) => {
      waiters.get(job.id)?.(done);
      waiters.delete(job.id);
      inputs.delete(job.id);
      return done;
    };
    const [row] = await db.select().from(schema.jobs).where(eq(schema.jobs.id, job.id));
    const handler = row && handlers.get(row.kind);
    if (row && !handler) {
      // A kind not registered here (yet): left to lapse, for a process that has it.
      log.error({ job: row.id, kind: row.kind }, 'no handler for this job kind');
      return;
    }
    if (!row || !handler || !['queued', 'running'].includes(row.status)) {
      // Cancelled or finished meanwhile.
      await settle();
      await b.complete(JOBS_QUEUE, attempt);
      return;
    }
    if ((job.retryCount > 0 || job.data?.resumed) && !handler.resumable) {
      // Its process died while it ran: it cannot go on from the middle, so it fails and its handler undoes it.
      const [failed] = await db
        .update(schema.jobs)
        .set({ status: 'failed', error: INTERRUPTED, updatedAt: new Date() })
        .where(and(eq(schema.jobs.id, row.id), inArray(schema.jobs.status, ['queued', 'running'])))
        .returning();
      if (failed) await handler.finished?.(failed, 'failed', new Error(INTERRUPTED));
      await settle();
      await b.complete(JOBS_QUEUE, attempt);
      return;
    }
    attempts.set(job.id, job.retryCount);
    const outcome = await settle(track(row.id, execute(row, inputs.get(job.id))));
    attempts.delete(job.id);
    // Stopped by this process's shutdown: handed back at once, another live process goes on with it.
    if (stopping && outcome === 'aborted' && handler.resumable) await b.fail(JOBS_QUEUE, attempt);
    else await b.complete(JOBS_QUEUE, attempt);
  }

  /** Fetches what this process may run now: its own new jobs (`own`), or any job due (taken over, or left by a process before it took it). */
  async function pull(own: boolean) {
    if (stopping) return;
    const b = await bossReady();
    const jobs = await b.fetch<{ resumed?: boolean }>(
      JOBS_QUEUE,
      own ? { batchSize: 20, minPriority: queue!.lane, maxPriority: queue!.lane, ignoreStartAfter: true } : { batchSize: 5 },
    );
    for (const job of jobs) {
      const taken = take(b, job).catch((err) => log.error({ err, job: job.id }, 'job not taken'));
      taking.add(taken);
      void taken.finally(() => taking.delete(taken));
    }
  }

  /** Looks for jobs to take every QUEUE_POLL_MS (once every kind is registered: `resumeAll`). */
  function startTaking() {
    if (poller) return;
    poller = setInterval(() => {
      polling ??= pull(false)
        .catch((err) => log.warn({ err }, 'jobs not fetched'))
        .finally(() => (polling = null));
    }, QUEUE_POLL_MS);
    poller.unref();
  }

  /** The heartbeats of the jobs running here: a process that stops sending them has its jobs taken over. */
  function startHeartbeats() {
    if (beater) return;
    beater = setInterval(() => {
      if (attempts.size === 0) return;
      void bossReady()
        .then((b) => b.touch(JOBS_QUEUE, [...attempts].map(([id, retryCount]) => ({ id, retryCount }))))
        .catch((err) => log.warn({ err }, 'job heartbeat not sent'));
    }, (HEARTBEAT_SECONDS * 1000) / 3);
    beater.unref();
  }

  async function enqueueOnQueue(row: JobRow, input: unknown) {
    const b = await bossReady();
    startHeartbeats();
    if (input !== undefined) inputs.set(row.id, input);
    const done = new Promise<JobOutcome | undefined>((resolve) => waiters.set(row.id, (d) => resolve(d)));
    // This process's lane, a start a little ahead: fetched here at once, by another only if this process died first.
    await b.send(JOBS_QUEUE, {}, { id: row.id, priority: queue!.lane, startAfter: OWN_START_SECONDS });
    await pull(true);
    return { done };
  }

  /** Start-up with the queue: this process takes jobs; rows that pg-boss does not know yet (queued before it ran them) are handed to it. */
  async function takeJobs() {
    const b = await bossReady();
    startHeartbeats();
    startTaking();
    const rows = await db.select({ id: schema.jobs.id }).from(schema.jobs).where(inArray(schema.jobs.status, ['queued', 'running']));
    // A job pg-boss already has (running in a live process, or waiting for its takeover) keeps it: send answers null.
    for (const row of rows) await b.send(JOBS_QUEUE, { resumed: true }, { id: row.id });
    await pull(false);
  }

  return {
    cancel,

    register(handler: JobHandler) {
      handlers.set(handler.kind, handler);
    },

    /**
     * Starts a job now; answers its row (the work goes on in the background). `input` reaches the
     * handler in memory only (not stored: a job that needs it should not be resumable).
     */
    async enqueue(kind: string, opts: { userId: string; targetId: string; params?: Record<string, unknown>; input?: unknown }) {
      const [row] = await db
        .insert(schema.jobs)
        .values({ id: randomUUID(), kind, status: 'running', userId: opts.userId, targetId: opts.targetId, params: opts.params ?? {} })
        .returning();
      const { done } = queue ? await enqueueOnQueue(row!, opts.input) : { done: track(row!.id, execute(row!, opts.input)) };
      return { job: row!, done };
    },

    /** The job of this kind still running for a target (one at a time per target). */
    async activeFor(targetId: string, kind?: string) {
      const rows = await db
        .select()
        .from(schema.jobs)
        .where(and(eq(schema.jobs.targetId, targetId), inArray(schema.jobs.status, ['queued', 'running'])));
      return rows.find((r) => !kind || r.kind === kind);
    },

    /** Asks a running job to stop; answers false when it was not running here. */
    abort(jobId: string): boolean {
      const c = running.get(jobId);
      if (!c) return false;
      c.abort();
      return true;
    },

    failInterrupted,

    /** After a restart: resumable jobs run again, the others are marked failed (with the queue: this process starts taking jobs). */
    async resumeAll() {
      if (queue) return takeJobs();
      await failInterrupted();
      const rows = await db.select().from(schema.jobs).where(inArray(schema.jobs.status, ['queued', 'running']));
      for (const row of rows) {
        if (running.has(row.id)) continue;
        void track(row.id, execute(row));
      }
    },

    /**
     * Stops every running job (server shutting down); resumable ones continue after the restart (with
     * the queue: at once in another live process). Resolves when they have settled and the queue is left.
     */
    async stopAll() {
      stopping = true;
      for (const c of running.values()) c.abort();
      // Each aborted job's end: its handler undoes what it had begun (a disk being made is not left
      // half-written under a stopped server, nor written after it).
      const ended = Promise.all([...settling.values()]);
      if (queue) {
        clearInterval(poller);
        clearInterval(beater);
        await polling;
        // Up to the pg-boss completion (or hand-back) of each job taken here.
        await Promise.all(taking);
      }
      await Promise.race([ended, new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
      if (queue && boss) await queue.release();
      boss = null;
    },
  };
}
export type JobRunner = ReturnType<typeof createJobRunner>;
