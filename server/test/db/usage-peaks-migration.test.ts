// The migration that brings the peak of concurrent desktops to the minute (issue 29): a database with usage
// recorded by the version before it gets its past hours' peaks (the same sweep the roll-up runs), and a desktop
// with more than one open interval keeps one (the unique index that follows needs it). Embedded database, or
// PostgreSQL with TEST_DATABASE_URL.
import { afterAll, expect, it } from 'vitest';
import { openDatabase } from '../../src/db';
import { databaseBefore, rawQuery } from '../helpers/migration-before';
import { scaled } from '../helpers/slowdown';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
const raw = rawQuery;

it('fills the peaks of the hours recorded before it, and leaves one open interval per desktop', async () => {
  const { old, place } = await databaseBefore('_usage_storage_peaks', 'peaks', cleanups);
  try {
    const row = (desktop: string, category: string, start: string, end: string | null) =>
      `('${desktop}', '${desktop}', 'u', 'u', 'g', 'g', '${category}', '${category}', '2026-05-04T${start}:00Z', ${end ? `'2026-05-04T${end}:00Z'` : 'NULL'})`;
    await raw(old, `INSERT INTO usage_intervals (desktop_id, desktop_name, user_id, username, group_id, group_name, category_id, category_name, started_at, ended_at) VALUES
      ${row('a', 'school', '09:00', '09:50')}, ${row('b', 'school', '09:40', '10:20')}, ${row('c', 'lab', '09:45', '09:55')},
      ${row('d', 'lab', '11:00', null)}, ${row('d', 'lab', '11:30', null)}`);
  } finally {
    await old.close();
  }

  const upgraded = await openDatabase(place);
  try {
    const peaks = (await raw(upgraded, `SELECT category_id, to_char(hour AT TIME ZONE 'UTC', 'HH24:MI') AS hour, desktops, to_char(at AT TIME ZONE 'UTC', 'HH24:MI') AS at
      FROM usage_peak_hours WHERE hour < '2026-05-04T12:00:00Z' ORDER BY category_id, hour`)).rows;
    expect(peaks).toEqual([
      { category_id: '*', hour: '09:00', desktops: 3, at: '09:45' },
      { category_id: '*', hour: '10:00', desktops: 1, at: '10:00' },
      { category_id: '*', hour: '11:00', desktops: 1, at: '11:00' },
      { category_id: 'lab', hour: '09:00', desktops: 1, at: '09:45' },
      { category_id: 'lab', hour: '11:00', desktops: 1, at: '11:00' },
      { category_id: 'school', hour: '09:00', desktops: 2, at: '09:40' },
      { category_id: 'school', hour: '10:00', desktops: 1, at: '10:00' },
    ]);
    // Desktop d had two open intervals: the earliest stays open, the other closed at its start.
    const d = (await raw(upgraded, `SELECT to_char(started_at AT TIME ZONE 'UTC', 'HH24:MI') AS s, ended_at IS NULL AS open FROM usage_intervals WHERE desktop_id = 'd' ORDER BY started_at`)).rows;
    expect(d).toEqual([{ s: '11:00', open: true }, { s: '11:30', open: false }]);
    await expect(raw(upgraded, `INSERT INTO usage_intervals (desktop_id, desktop_name, user_id, username, group_id, group_name, category_id, category_name, started_at) VALUES ('d', 'd', 'u', 'u', 'g', 'g', 'lab', 'lab', now())`)).rejects.toThrow(/unique|duplicate/i);
  } finally {
    await upgraded.close();
  }
}, scaled(120_000));
