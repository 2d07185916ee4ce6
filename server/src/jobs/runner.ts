import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../db';
import { schema } from '../db';

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

/**
 * Long work as persisted jobs (media downloads, template creation, disk growth, deployment
 * creation): each has a row with its status and progress, can be aborted, and survives restarts.
 */
export function createJobRunner(db: Db, log: Logger) {
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
    const rows = await db.select().from(schema.jobs).where(inArray(schema.jobs.status, ['queued', 'running']));
    for (const row of rows) {
      const handler = handlers.get(row.kind);
      if (handler?.resumable) continue;
      const [failed] = await db
        .update(schema.jobs)
        .set({ status: 'failed', error: 'interrupted by a server restart', updatedAt: new Date() })
        .where(eq(schema.jobs.id, row.id))
        .returning();
      if (handler && failed) await handler.finished?.(failed, 'failed', new Error('interrupted by a server restart'));
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
      const done = track(row!.id, execute(row!, opts.input));
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

    /** After a restart: resumable jobs run again, the others are marked failed. */
    async resumeAll() {
      await failInterrupted();
      const rows = await db.select().from(schema.jobs).where(inArray(schema.jobs.status, ['queued', 'running']));
      for (const row of rows) {
        if (running.has(row.id)) continue;
        void track(row.id, execute(row));
      }
    },

    /** Stops every running job (server shutting down); resumable ones continue after the restart. */
    stopAll() {
      stopping = true;
      for (const c of running.values()) c.abort();
    },
  };
}
export type JobRunner = ReturnType<typeof createJobRunner>;
