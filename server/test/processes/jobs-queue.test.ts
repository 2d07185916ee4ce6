// Jobs and timed actions on pg-boss with several processes on one PostgreSQL (server/src/jobs/queue.ts):
// a job's and a timed action's process killed with SIGKILL in the middle: another live process takes
// both over and finishes them once; a timed action due while two processes are up fires once.
import type { ChildProcess } from 'node:child_process';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { openDatabase, schema, type Database } from '../../src/db';
import { attachQueue } from '../../src/jobs/queue';
import { createJobRunner, type JobRunner } from '../../src/jobs/runner';
import { realClock } from '../../src/scheduler/clock';
import { createScheduler } from '../../src/scheduler/scheduler';
import { createScratchDatabase } from '../helpers/db';
import { ACTION_KIND, prepareAction, prepareSteps, startJobWorker, STEPS_KIND } from '../helpers/job-worker';
import { until } from '../helpers/wait';

const log = pino({ level: 'silent' });
type Query = { query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> };
const sqlOf = (database: Database) => (database.db as unknown as { $client: Query }).$client;

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
/** This test process as one of the server processes: its database, queue and runner. */
let here: Database;
let runner: JobRunner;
const children: ChildProcess[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL!, 'vdi_test_queue');
  here = await openDatabase({ url: scratch.url });
  attachQueue(here.db, log);
  runner = createJobRunner(here.db, log);
  runner.register(await prepareSteps(here.db));
  await runner.resumeAll();
  // (made before any worker makes it too)
  await prepareAction(here.db);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await runner?.stopAll();
  await here?.close();
  await scratch?.drop();
});

const startWorker = (env: Record<string, string>) => {
  const worker = startJobWorker(scratch.url, env);
  children.push(worker.child);
  return worker;
};

describe('jobs on pg-boss, several processes', () => {
  it('a job and a timed action whose process is killed (SIGKILL) in the middle are finished by another: each step once, progress 100 %', async () => {
    const steps = 12;
    const stepMs = 300;
    const worker = startWorker({ QUEUE_JOB_STEPS: String(steps), QUEUE_JOB_STEP_MS: String(stepMs), QUEUE_ACTION_MS: '60000' });
    const printed = (what: RegExp) => async () => what.exec(worker.output())?.[1] ?? (worker.child.exitCode !== null && Promise.reject(new Error(worker.output())));
    const jobId = await until('the worker to queue its job', printed(/queued (\S+)/), 120_000);
    const actionId = await until('the worker to schedule its action', printed(/scheduled (\S+)/), 60_000);
    const sql = sqlOf(here);
    const stepsOf = async () => (await sql.query('SELECT step, pid, at FROM test_steps WHERE job = $1 ORDER BY step, at', [jobId])).rows as { step: number; pid: number; at: Date }[];
    const notes = async () => (await sql.query('SELECT what, pid FROM test_actions WHERE id = $1', [actionId])).rows as { what: string; pid: number }[];
    // Both started at once in the worker (its job in its own lane; the action before this process takes any).
    await until('three steps done by the worker', async () => (await stepsOf()).length >= 3, 60_000);
    await until('the worker to begin the action', async () => (await notes()).some((n) => n.what === 'began'), 60_000);
    // This process takes timed actions from now on; the worker dies in the middle of both.
    const scheduler = createScheduler(here.db, realClock(), log);
    const action = await prepareAction(here.db);
    scheduler.register(ACTION_KIND, (params, job) => action({ ...params, ms: 100 }, job));
    await scheduler.start();
    try {
      worker.child.kill('SIGKILL');
      const killedAt = Date.now();
      await worker.exited;

      const row = await until('the job to finish here', async () => {
        const [r] = await here.db.select().from(schema.jobs).where(eq(schema.jobs.id, jobId));
        return r?.status === 'done' && r;
      }, 90_000);
      expect(row).toMatchObject({ status: 'done', progress: 100, error: null });
      const done = await stepsOf();
      // Every step exactly once: some by the worker before it died, the rest here.
      expect(done.map((s) => s.step)).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
      const byWorker = done.filter((s) => s.pid === worker.child.pid);
      const byHere = done.filter((s) => s.pid === process.pid);
      expect(byWorker.length).toBeGreaterThanOrEqual(3);
      expect(byHere.length).toBeGreaterThanOrEqual(1);
      expect(byWorker.length + byHere.length).toBe(steps);
      // Takeover: from the kill to the first step done here (less the step's own time).
      const takeoverMs = new Date(byHere[0]!.at).getTime() - killedAt - stepMs;
      console.log(`[jobs-queue] job taken over after SIGKILL in ${(takeoverMs / 1000).toFixed(1)} s (heartbeat 10 s, monitor every 2 s, poll every 1 s)`);
      expect(takeoverMs).toBeLessThan(30_000);

      // The action: begun again here (a crash in the middle of an action runs it again), ended once.
      await until('the action to be done here', async () => {
        const [r] = await here.db.select().from(schema.scheduledJobs).where(eq(schema.scheduledJobs.id, actionId));
        return r?.status === 'done';
      }, 60_000);
      const seen = await notes();
      expect(seen.filter((n) => n.what === 'began').map((n) => n.pid).sort()).toEqual([worker.child.pid, process.pid].sort());
      expect(seen.filter((n) => n.what === 'ended').map((n) => n.pid)).toEqual([process.pid]);
    } finally {
      await scheduler.stop();
    }
  });

  it('a job queued by a process starts in that process at once', async () => {
    // Start latency: enqueue → the handler's first line, with the queue and (for comparison) in-process.
    const direct = await openDatabase({ url: scratch.url });
    try {
      const inProcess = createJobRunner(direct.db, log); // no queue attached: runs where queued
      const measure = async (r: JobRunner) => {
        const times: number[] = [];
        let started = 0;
        r.register({ kind: 'test-latency', resumable: true, run: async () => void (started = performance.now()) });
        for (let i = 0; i < 10; i++) {
          const t0 = performance.now();
          const { done } = await r.enqueue('test-latency', { userId: 'u', targetId: `lat-${i}` });
          await done;
          times.push(started - t0);
        }
        times.sort((a, b) => a - b);
        return times[5]!;
      };
      const queued = await measure(runner);
      const local = await measure(inProcess);
      console.log(`[jobs-queue] job start latency (median of 10): pg-boss ${queued.toFixed(1)} ms, in-process ${local.toFixed(1)} ms`);
      // Not a poll's wait (1 s): fetched by this process right after it was sent.
      expect(queued).toBeLessThan(500);
    } finally {
      await direct.close();
    }
  });
});

describe('timed actions on pg-boss, several processes', () => {
  it('an action due while two processes are up fires once', async () => {
    const other = await openDatabase({ url: scratch.url });
    attachQueue(other.db, log);
    const sql = sqlOf(here);
    await sql.query('CREATE TABLE IF NOT EXISTS test_fired (id text NOT NULL, by text NOT NULL)');
    const schedulers = [
      { name: 'a', s: createScheduler(here.db, realClock(), log) },
      { name: 'b', s: createScheduler(other.db, realClock(), log) },
    ];
    try {
      for (const { name, s } of schedulers) {
        s.register('test-fire', async (_params, job) => void (await sql.query('INSERT INTO test_fired (id, by) VALUES ($1, $2)', [job.id, name])));
        await s.start();
      }
      const at = new Date(Date.now() + 1_500);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await schedulers[i % 2]!.s.schedule('test-fire', at, { key: `fire:${i}` })).id);
      // One cancelled before it is due: it never fires.
      const cancelled = (await schedulers[0]!.s.schedule('test-fire', at, { key: 'fire:cancelled' })).id;
      await schedulers[1]!.s.cancel('fire:cancelled');
      await until('the actions to be done', async () => {
        const rows = await here.db.select().from(schema.scheduledJobs);
        return ids.every((id) => rows.find((r) => r.id === id)?.status === 'done');
      }, 60_000);
      const fired = (await sql.query('SELECT id, by FROM test_fired')).rows as { id: string; by: string }[];
      expect(fired.map((f) => f.id).sort()).toEqual([...ids].sort());
      expect(fired.some((f) => f.id === cancelled)).toBe(false);
    } finally {
      for (const { s } of schedulers) await s.stop();
      await other.close();
    }
  });
});
