import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { openTestDatabase } from '../../../test/helpers/db';
import { scaled } from '../../../test/helpers/slowdown';
import { reportPieces, usageReport } from './report';
import { rollupUsage } from './rollup';
import { rowsOf } from './query';

// A year of usage for 5,000 people (generated: each ran a desktop two hours every other school day, about
// a million hourly rows) answers fast per organisation, user and template, for admins and one organisation:
// whole months come from usage_months, the days around them from usage_days, the series from usage_category_hours
// (all kept by the roll-up).

let db: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  db = await openTestDatabase();
  await db.db.execute(sql`INSERT INTO usage_hours (hour, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name, desktop_id, desktop_name, desktop_seconds, sign_ins)
    SELECT timestamptz '2025-01-06' + (d * interval '1 day') + ((8 + (u % 6)) * interval '1 hour') + (k * interval '1 hour'),
      'cat' || (u % 10), 'Cat ' || (u % 10), 'g' || (u % 100), 'Group ' || (u % 100), 'u' || u, 'user' || u, 't' || (u % 30), 'Template ' || (u % 30), 'd' || u, 'Desk ' || u, 3000, CASE WHEN k = 0 THEN 1 ELSE 0 END
    FROM generate_series(0, 4999) u, generate_series(0, 199) d, generate_series(0, 1) k
    WHERE (u + d) % 2 = 0`);
  // The peaks of concurrent desktops: an hour's row per organisation and for all, all year.
  await db.db.execute(sql`INSERT INTO usage_peak_hours (hour, category_id, desktops, at)
    SELECT timestamptz '2025-01-01' + (k * interval '1 hour'), c, (k % 500) + 1, timestamptz '2025-01-01' + (k * interval '1 hour') + ((k % 60) * interval '1 minute')
    FROM generate_series(0, 8759) k, unnest(ARRAY['*', 'cat0', 'cat1', 'cat2', 'cat3', 'cat4', 'cat5', 'cat6', 'cat7', 'cat8', 'cat9']) c`);
  await db.db.execute(sql`INSERT INTO usage_rollups (name, done_until) VALUES ('usage', '2025-01-01')`);
  await rollupUsage({ db: db.db, log: { warn: () => {}, error: () => {} } as never }, new Date('2025-12-31T00:00:00Z'));
  // (After the roll-up: its own reading of the storage would replace that day's.)
  // The storage used: a reading an hour per organisation all year, and the last month's days per person and template.
  await db.db.execute(sql`INSERT INTO usage_storage_hours (hour, category_id, bytes)
    SELECT timestamptz '2025-01-01' + (k * interval '1 hour'), 'cat' || c, (10 + c) * 1073741824::bigint + k * 1048576::bigint
    FROM generate_series(0, 8759) k, generate_series(0, 9) c`);
  await db.db.execute(sql`INSERT INTO usage_storage_hours (hour, category_id, bytes) SELECT hour, '*', sum(bytes) FROM usage_storage_hours GROUP BY hour`);
  await db.db.execute(sql`INSERT INTO usage_storage_days (day, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name, bytes)
    SELECT timestamptz '2025-12-01' + (d * interval '1 day'), 'cat' || (u % 10), 'Cat ' || (u % 10), 'g' || (u % 100), 'Group ' || (u % 100), 'u' || u, 'user' || u, 't' || (u % 30), 'Template ' || (u % 30), 2147483648::bigint + d * 1048576
    FROM generate_series(0, 4999) u, generate_series(0, 30) d`);
  await db.db.execute(sql`ANALYZE`);
}, scaled(600_000));
afterAll(async () => db?.close());

it('a year over 5,000 people answers in well under a second, the sums those of the hours', async () => {
  const [{ expected }] = await rowsOf<{ expected: string }>(db.db, sql`SELECT sum(desktop_seconds) / 3600.0 AS expected FROM usage_hours WHERE hour >= '2025-01-01' AND hour < '2026-01-01'`);
  for (const group_by of ['organisation', 'user', 'template'] as const) {
    for (const category of [null, 'cat3']) {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        const r = await usageReport(db.db, { from: '2025-01-01', to: '2025-12-31', group_by }, category);
        times.push(performance.now() - t);
        if (category === null) expect(r.totals.desktop_hours).toBeCloseTo(Number(expected), 0);
        if (category === null && group_by !== 'user') expect(r.rows.reduce((sum, row) => sum + row.desktop_hours, 0)).toBeCloseTo(Number(expected), 0);
        // The storage over the year a point a day, per group as last read (the 31st of December), the peak with its minute.
        expect(r.storage.points).toHaveLength(365);
        expect(r.storage.day).toBe('2025-12-31');
        expect(r.storage.bytes).toBe((category === null ? 5000 : 500) * (2147483648 + 30 * 1048576));
        expect(r.peak?.desktops).toBe(500);
      }
      const median = times.sort((a, b) => a - b)[1]!;
      console.log(`[usage report, a year, ${db.label}] ${group_by} ${category ?? 'all'}: ${Math.round(median)} ms`);
      expect(median, `${group_by} ${category ?? 'all'}`).toBeLessThan(scaled(500));
    }
  }
  // A period that starts and ends inside months (days from the hours, months between): the same sums as the hours.
  const r = await usageReport(db.db, { from: '2025-02-15', to: '2025-06-10', group_by: 'organisation' }, null);
  const [{ part }] = await rowsOf<{ part: string }>(db.db, sql`SELECT sum(desktop_seconds) / 3600.0 AS part FROM usage_hours WHERE hour >= '2025-02-15' AND hour < '2025-06-11'`);
  expect(r.rows.reduce((sum, row) => sum + row.desktop_hours, 0)).toBeCloseTo(Number(part), 0);
  expect(r.totals.desktop_hours).toBeCloseTo(Number(part), 0);
}, scaled(300_000));

it('a period starting and ending inside months answers per key exactly the sums of the hours', async () => {
  const hours = (seconds: unknown) => Math.round((Number(seconds ?? 0) / 3600) * 1000) / 1000;
  const key = { organisation: ['category_id', 'category_name'], user: ['user_id', 'username'], template: ['template_id', 'template_name'] } as const;
  // Across months (days, whole months, days), inside one month (days only), from a month's last day to the next's first,
  // and a period whose first and last months are nearly whole (each its month less the days outside).
  for (const [from, to] of [['2025-02-15', '2025-06-10'], ['2025-03-03', '2025-03-20'], ['2025-01-31', '2025-03-01'], ['2025-04-09', '2025-04-09'], ['2025-02-03', '2025-06-27']] as const) {
    const start = `${from}T00:00:00Z`;
    const end = new Date(new Date(`${to}T00:00:00Z`).getTime() + 86_400_000).toISOString();
    for (const category of [null, 'cat3']) {
      const inCategory = category === null ? sql`` : sql` AND category_id = ${category}`;
      for (const group_by of ['organisation', 'user', 'template'] as const) {
        const r = await usageReport(db.db, { from, to, group_by }, category);
        const expected = await rowsOf<{ key: string; desktop: string; booked: string; used: string; sign_ins: string }>(
          db.db,
          sql`SELECT ${sql.raw(key[group_by][0])} AS key, sum(desktop_seconds) AS desktop, sum(gpu_booked_seconds) AS booked, sum(gpu_used_seconds) AS used, sum(sign_ins) AS sign_ins
              FROM usage_hours WHERE hour >= ${start}::timestamptz AND hour < ${end}::timestamptz${inCategory}
              GROUP BY 1 ORDER BY sum(desktop_seconds) DESC, max(${sql.raw(key[group_by][1])}) LIMIT 500`,
        );
        expect(r.rows.length, `${from}..${to} ${group_by} ${category ?? 'all'}`).toBe(expected.length);
        expect(r.rows).toEqual(
          expected.map((e, i) => ({ key: e.key, name: r.rows[i]!.name, desktop_hours: hours(e.desktop), gpu_booked_hours: hours(e.booked), gpu_used_hours: hours(e.used), sign_ins: Number(e.sign_ins) })),
        );
      }
      const templates = await rowsOf<{ key: string; desktop: string; desktops: string }>(
        db.db,
        sql`SELECT template_id AS key, sum(desktop_seconds) AS desktop, count(DISTINCT desktop_id) AS desktops FROM usage_hours
            WHERE hour >= ${start}::timestamptz AND hour < ${end}::timestamptz${inCategory} AND template_id <> '' AND desktop_seconds > 0
            GROUP BY 1 ORDER BY sum(desktop_seconds) DESC, max(template_name) LIMIT 10`,
      );
      const r = await usageReport(db.db, { from, to, group_by: 'organisation' }, category);
      expect(r.top_templates.map((t) => ({ key: t.key, desktop_hours: t.desktop_hours, desktops: t.desktops }))).toEqual(
        templates.map((t) => ({ key: t.key, desktop_hours: hours(t.desktop), desktops: Number(t.desktops) })),
      );
    }
  }
}, scaled(300_000));

it('cuts a period into whole months, whole days and the hours of partial days, a nearly whole month as its month less the days outside', () => {
  const d = (s: string) => new Date(s);
  const shape = (a: string, b: string) => reportPieces(d(a), d(b)).map((p) => `${p.column} ${p.from.toISOString().slice(0, 13)}..${p.to.toISOString().slice(0, 13)}${p.less ? ` less ${p.less.from.toISOString().slice(0, 13)}..${p.less.to.toISOString().slice(0, 13)}` : ''}`);
  expect(shape('2025-02-15T00:00:00Z', '2025-06-11T00:00:00Z')).toEqual(['day 2025-02-15T00..2025-03-01T00', 'month 2025-03-01T00..2025-06-01T00', 'day 2025-06-01T00..2025-06-11T00']);
  expect(shape('2025-03-01T00:00:00Z', '2026-03-01T00:00:00Z')).toEqual(['month 2025-03-01T00..2026-03-01T00']);
  expect(shape('2025-03-03T00:00:00Z', '2025-03-21T00:00:00Z')).toEqual(['day 2025-03-03T00..2025-03-21T00']);
  expect(shape('2025-03-31T05:00:00Z', '2025-05-02T07:00:00Z')).toEqual(['hour 2025-03-31T05..2025-04-01T00', 'month 2025-04-01T00..2025-05-01T00', 'day 2025-05-01T00..2025-05-02T00', 'hour 2025-05-02T00..2025-05-02T07']);
  expect(shape('2025-11-29T00:00:00Z', '2026-11-29T00:00:00Z')).toEqual(['day 2025-11-29T00..2025-12-01T00', 'month 2025-12-01T00..2026-11-01T00', 'month 2026-11-01T00..2026-12-01T00 less 2026-11-29T00..2026-12-01T00']);
  expect(shape('2025-03-03T05:00:00Z', '2025-03-03T09:00:00Z')).toEqual(['hour 2025-03-03T05..2025-03-03T09']);
});
