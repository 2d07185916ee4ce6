// The migration that brings the peak of concurrent desktops to the minute (issue 29): a database with usage
// recorded by the version before it gets its past hours' peaks (the same sweep the roll-up runs), and a desktop
// with more than one open interval keeps one (the unique index that follows needs it). Embedded database, or
// PostgreSQL with TEST_DATABASE_URL.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { migrationsFolder, openDatabase, type Database } from '../../src/db';
import { createScratchDatabase } from '../helpers/db';
import { scaled } from '../helpers/slowdown';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
const raw = (database: Database, text: string) => (database.db as unknown as { $client: pg.Pool }).$client.query(text);

it('fills the peaks of the hours recorded before it, and leaves one open interval per desktop', async () => {
  const before = journal.entries.findIndex((e) => e.tag.endsWith('_usage_storage_peaks'));
  expect(before).toBeGreaterThan(0);
  const older = mkdtempSync(join(tmpdir(), 'vdi-older-migrations-'));
  cleanups.push(() => rmSync(older, { recursive: true, force: true }));
  cpSync(migrationsFolder, older, { recursive: true });
  writeFileSync(join(older, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, before) }));
  let place: { url?: string; dir?: string };
  if (process.env.TEST_DATABASE_URL) {
    const scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL, 'vdi_peaks');
    cleanups.push(() => scratch.drop());
    place = { url: scratch.url };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'vdi-peaks-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    place = { dir: join(dir, 'db') };
  }

  const old = await openDatabase({ ...place, migrations: older });
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
