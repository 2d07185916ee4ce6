import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { batchingNotifies } from './peers';

/** A pool that records its statements; `ended` after `end()`, as pg's refuses then. */
function recordingPool() {
  const sent: unknown[][] = [];
  let ended = false;
  const pool = {
    query: async (_text: string, values: unknown[]) => {
      if (ended) throw new Error('Cannot use a pool after calling end on the pool');
      await new Promise((r) => setTimeout(r, 5));
      sent.push(values);
    },
    end: async () => {
      ended = true;
    },
  } as unknown as pg.Pool;
  return { pool, sent };
}

describe("the socket.io adapter's batched notifications", () => {
  it('emits of one turn leave as one statement, in order', async () => {
    const { pool, sent } = recordingPool();
    const notifies = batchingNotifies(pool);
    await Promise.all(['a', 'b', 'c'].map((x) => notifies.query('SELECT pg_notify($1, $2)', ['ch', `{"x":"${x}"}`])));
    expect(sent).toHaveLength(1);
    expect((sent[0]![1] as string[]).map((p) => JSON.parse(p).x)).toEqual(['a', 'b', 'c']);
  });

  it('on stopping, what was asked is sent before the pool ends, and what is asked after is left unsent without an error', async () => {
    const { pool, sent } = recordingPool();
    const notifies = batchingNotifies(pool);
    const before = notifies.query('SELECT pg_notify($1, $2)', ['ch', '{"x":"before"}']);
    await notifies.settle();
    await pool.end();
    await expect(before).resolves.toBeUndefined();
    await expect(notifies.query('SELECT pg_notify($1, $2)', ['ch', '{"x":"after"}'])).resolves.toBeUndefined();
    expect(sent.flatMap((v) => (v[1] as string[]).map((p) => JSON.parse(p).x))).toEqual(['before']);
  });
});
