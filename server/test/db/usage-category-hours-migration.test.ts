// The migration that gives the reports' hourly sums a row for the whole installation ('*', issue 29): a database
// with sums per organisation from the version before it gets the '*' row of each hour (their sums), and the roll-up
// keeps it from then on. Embedded database, or PostgreSQL with TEST_DATABASE_URL.
import { afterAll, expect, it } from 'vitest';
import { openDatabase } from '../../src/db';
import { rollupUsage } from '../../src/modules/usage/rollup';
import { databaseBefore, rawQuery } from '../helpers/migration-before';
import { scaled } from '../helpers/slowdown';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
const raw = rawQuery;

it('sums the hours recorded before it for the whole installation, and the roll-up keeps that row', async () => {
  const { old, place } = await databaseBefore('_usage_category_hours_all', 'cat_hours', cleanups);
  try {
    await raw(old, `INSERT INTO usage_category_hours (hour, category_id, desktop_seconds, gpu_booked_seconds, gpu_used_seconds, sign_ins) VALUES
      ('2026-05-04T09:00:00Z', 'school', 3600, 0, 0, 2), ('2026-05-04T09:00:00Z', 'lab', 1200, 600, 300, 1), ('2026-05-04T10:00:00Z', 'lab', 900, 0, 0, 0)`);
  } finally {
    await old.close();
  }

  const upgraded = await openDatabase(place);
  try {
    const sums = async () =>
      (await raw(upgraded, `SELECT category_id, to_char(hour AT TIME ZONE 'UTC', 'HH24:MI') AS hour, desktop_seconds::int AS desktop, gpu_booked_seconds::int AS booked,
        gpu_used_seconds::int AS used, sign_ins FROM usage_category_hours WHERE category_id = '*' ORDER BY hour`)).rows;
    expect(await sums()).toEqual([
      { category_id: '*', hour: '09:00', desktop: 4800, booked: 600, used: 300, sign_ins: 3 },
      { category_id: '*', hour: '10:00', desktop: 900, booked: 0, used: 0, sign_ins: 0 },
    ]);
    // The roll-up sums the hours it touches again, the whole installation's row with them.
    await raw(upgraded, `INSERT INTO usage_hours (hour, category_id, category_name, group_id, group_name, user_id, username, desktop_id, desktop_seconds) VALUES
      ('2026-05-04T10:00:00Z', 'lab', 'Lab', 'g', 'G', 'u1', 'u1', 'd1', 900), ('2026-05-04T10:00:00Z', 'school', 'School', 'g', 'G', 'u2', 'u2', 'd2', 600)`);
    await raw(upgraded, `INSERT INTO usage_rollups (name, done_until) VALUES ('usage', '2026-05-04T10:00:00Z')`);
    await rollupUsage({ db: upgraded.db, log: { warn: () => {}, error: () => {} } as never }, new Date('2026-05-04T10:30:00Z'));
    expect((await sums())[1]).toEqual({ category_id: '*', hour: '10:00', desktop: 1500, booked: 0, used: 0, sign_ins: 0 });
  } finally {
    await upgraded.close();
  }
}, scaled(120_000));
