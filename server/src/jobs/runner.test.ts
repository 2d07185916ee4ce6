import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { eq } from 'drizzle-orm';
import { openDatabase, schema, type Database } from '../db';
import { createJobRunner } from './runner';

let database: Database;
beforeAll(async () => {
  database = await openDatabase({});
});
afterAll(async () => database?.close());

describe('job runner', () => {
  it('runs a job to the end, storing progress and the outcome', async () => {
    const runner = createJobRunner(database.db, pino({ level: 'silent' }));
    const seen: number[] = [];
    const outcomes: string[] = [];
    runner.register({
      kind: 'count',
      resumable: false,
      async run(ctx) {
        for (const p of [10, 50, 100]) {
          await ctx.progress(p, { step: p });
          await new Promise((r) => setTimeout(r, 600));
        }
      },
      progressed: (job) => seen.push(job.progress),
      finished: async (_job, outcome) => void outcomes.push(outcome),
    });
    const { job, done } = await runner.enqueue('count', { userId: 'u', targetId: 't1' });
    expect(await runner.activeFor('t1')).toMatchObject({ id: job.id, status: 'running' });
    await done;
    const [row] = await database.db.select().from(schema.jobs).where(eq(schema.jobs.id, job.id));
    expect(row).toMatchObject({ status: 'done', progress: 100, params: { step: 100 } });
    expect(seen).toEqual([10, 50, 100]);
    expect(outcomes).toEqual(['done']);
    expect(await runner.activeFor('t1')).toBeUndefined();
  });

  it('aborts on request and fails on error', async () => {
    const runner = createJobRunner(database.db, pino({ level: 'silent' }));
    runner.register({
      kind: 'wait',
      resumable: false,
      run: (ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    runner.register({ kind: 'boom', resumable: false, run: async () => { throw new Error('no space left'); } });
    const a = await runner.enqueue('wait', { userId: 'u', targetId: 't2' });
    expect(runner.abort(a.job.id)).toBe(true);
    await a.done;
    const b = await runner.enqueue('boom', { userId: 'u', targetId: 't3' });
    await b.done;
    const rows = await database.db.select().from(schema.jobs);
    expect(rows.find((r) => r.id === a.job.id)?.status).toBe('aborted');
    expect(rows.find((r) => r.id === b.job.id)).toMatchObject({ status: 'failed', error: 'no space left' });
  });

  it('after a restart resumes resumable jobs and fails the others', async () => {
    for (const [id, kind] of [['j-r', 'again'], ['j-f', 'once']]) {
      await database.db.insert(schema.jobs).values({ id, kind, status: 'running', userId: 'u', targetId: id });
    }
    const runner = createJobRunner(database.db, pino({ level: 'silent' }));
    let resumed = 0;
    const failed: string[] = [];
    runner.register({ kind: 'again', resumable: true, run: async () => void resumed++ });
    runner.register({ kind: 'once', resumable: false, run: async () => undefined, finished: async (j, o) => void failed.push(`${j.id}:${o}`) });
    await runner.resumeAll();
    await new Promise((r) => setTimeout(r, 100));
    expect(resumed).toBe(1);
    expect(failed).toEqual(['j-f:failed']);
  });
});
