// A server process reduced to its job runner and scheduler, for server/test/processes/jobs-queue.test.ts:
// it opens the PostgreSQL database of DATABASE_URL with its work queue (pg-boss), runs a runner with the
// slow test job kind and a scheduler with the slow test action, and takes work like a server does. With
// QUEUE_JOB_STEPS set it queues one such job itself (which starts here, as a request's would) and prints
// `queued <id>`; with QUEUE_ACTION_MS, it schedules one slow action due at once and prints
// `scheduled <id>`. Then it waits to be killed.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pino from 'pino';
import { openDatabase, type Db } from '../../src/db';
import { attachQueue } from '../../src/jobs/queue';
import { createJobRunner, type JobHandler } from '../../src/jobs/runner';
import { realClock } from '../../src/scheduler/clock';
import { createScheduler, type ScheduledJobHandler } from '../../src/scheduler/scheduler';

/** The test's slow job: `steps` steps of `stepMs`, each recorded once in `test_steps` (skipped when
 *  already done: a takeover goes on from the middle) with the process that did it; resumable. */
export const STEPS_KIND = 'test-steps';

export async function prepareSteps(db: Db) {
  const pool = (db as unknown as { $client: { query(text: string, values?: unknown[]): Promise<{ rows: { n: number }[] }> } }).$client;
  await pool.query('CREATE TABLE IF NOT EXISTS test_steps (job text NOT NULL, step int NOT NULL, pid int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())');
  const handler: JobHandler = {
    kind: STEPS_KIND,
    resumable: true,
    async run(ctx) {
      const { steps, stepMs } = ctx.job.params as { steps: number; stepMs: number };
      for (let step = 1; step <= steps; step++) {
        if (ctx.signal.aborted) throw new Error('aborted');
        // Done already (by the process that died): not again.
        const { rows } = await pool.query('SELECT count(*)::int AS n FROM test_steps WHERE job = $1 AND step = $2', [ctx.job.id, step]);
        if (rows[0]!.n > 0) continue;
        await new Promise((r) => setTimeout(r, stepMs));
        await pool.query('INSERT INTO test_steps (job, step, pid) VALUES ($1, $2, $3)', [ctx.job.id, step, process.pid]);
        await ctx.progress((step * 100) / steps);
      }
    },
  };
  return handler;
}

/** The test's slow timed action: notes in `test_actions` that it began and, `ms` later, that it ended, with the process. */
export const ACTION_KIND = 'test-slow-action';

export async function prepareAction(db: Db): Promise<ScheduledJobHandler> {
  const pool = (db as unknown as { $client: { query(text: string, values?: unknown[]): Promise<unknown> } }).$client;
  await pool.query('CREATE TABLE IF NOT EXISTS test_actions (id text NOT NULL, what text NOT NULL, pid int NOT NULL)');
  return async (params, job) => {
    await pool.query('INSERT INTO test_actions (id, what, pid) VALUES ($1, $2, $3)', [job.id, 'began', process.pid]);
    await new Promise((r) => setTimeout(r, Number(params.ms)));
    await pool.query('INSERT INTO test_actions (id, what, pid) VALUES ($1, $2, $3)', [job.id, 'ended', process.pid]);
  };
}

/** This script as a process of its own on the database of `url`; answers it, what it printed, and its end. */
export function startJobWorker(url: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename], {
    cwd: join(import.meta.dirname, '..', '..', '..'),
    env: { ...process.env, DATABASE_URL: url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, output: () => out, exited };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const log = pino({ level: 'warn' });
  const database = await openDatabase({ url: process.env.DATABASE_URL! });
  attachQueue(database.db, log);
  const runner = createJobRunner(database.db, log);
  runner.register(await prepareSteps(database.db));
  await runner.resumeAll();
  const scheduler = createScheduler(database.db, realClock(), log);
  scheduler.register(ACTION_KIND, await prepareAction(database.db));
  await scheduler.start();
  const actionMs = Number(process.env.QUEUE_ACTION_MS ?? 0);
  if (actionMs > 0) {
    const row = await scheduler.schedule(ACTION_KIND, new Date(), { key: 'test-action', ms: actionMs });
    process.stdout.write(`scheduled ${row.id}\n`);
  }
  const steps = Number(process.env.QUEUE_JOB_STEPS ?? 0);
  if (steps > 0) {
    const { job } = await runner.enqueue(STEPS_KIND, { userId: 'u', targetId: 't', params: { steps, stepMs: Number(process.env.QUEUE_JOB_STEP_MS ?? 200) } });
    process.stdout.write(`queued ${job.id}\n`);
  }
  process.stdout.write('ready\n');
  // Until killed.
  setInterval(() => undefined, 60_000);
}
