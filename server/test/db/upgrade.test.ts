// Upgrades (issue 29): a database an earlier version wrote — its schema as that version's migrations
// left it, with rows in it — is brought up to this version when this version opens it, its rows kept;
// one a newer version wrote is refused with a clear message and left as it was. On the embedded
// database (a data directory) and, with TEST_DATABASE_URL, on PostgreSQL.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationsFolder, newestKnownMigration, openDatabase, SchemaTooNewError, type Database } from '../../src/db';
import { createScratchDatabase } from '../helpers/db';
import { scaled } from '../helpers/slowdown';

const adminUrl = process.env.TEST_DATABASE_URL;
const mode = adminUrl ? 'postgres' : 'pglite';
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

type Journal = { entries: { idx: number; when: number; tag: string }[] };
const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as Journal;

/** The migrations folder as a version that carried only the first `n` migrations had it. */
function olderMigrations(n: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'vdi-older-migrations-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(migrationsFolder, dir, { recursive: true });
  writeFileSync(join(dir, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, n) }));
  return dir;
}

/** A fresh place for a database of the run's mode: a data directory, or a scratch PostgreSQL database. */
async function freshPlace(): Promise<{ url?: string; dir?: string }> {
  if (adminUrl) {
    const scratch = await createScratchDatabase(adminUrl, 'vdi_upgrade');
    cleanups.push(() => scratch.drop());
    return { url: scratch.url };
  }
  const dir = mkdtempSync(join(tmpdir(), 'vdi-upgrade-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return { dir: join(dir, 'db') };
}

/** Runs SQL on the database as it is (the pool under drizzle). */
const rawQuery = (database: Database, text: string, values: unknown[] = []) =>
  (database.db as unknown as { $client: pg.Pool }).$client.query(text, values);

/**
 * A row for `table` as the schema of the moment has it: every column that needs a value and has no
 * default gets a plain one of its type (the older schema's columns are not this version's).
 */
async function insertRow(database: Database, table: string, given: Record<string, unknown>) {
  const { rows } = await rawQuery(
    database,
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = $1 AND is_nullable = 'NO' AND column_default IS NULL`,
    [table],
  );
  const values: Record<string, unknown> = { ...given };
  for (const { name, type } of rows as { name: string; type: string }[]) {
    if (name in values) continue;
    values[name] = type === 'boolean' ? false : /int|numeric|double|real/.test(type) ? 0 : type.startsWith('timestamp') ? new Date() : type === 'jsonb' || type === 'json' ? '{}' : type === 'ARRAY' ? '{}' : `${table}-${name}`;
  }
  const names = Object.keys(values);
  await rawQuery(database, `INSERT INTO "${table}" (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(values));
}

const applied = async (database: Database) => Number((await rawQuery(database, 'SELECT count(*) AS n FROM drizzle.__drizzle_migrations')).rows[0].n);

describe(`upgrades (${mode})`, () => {
  // The first version's schema, and the one just before this version's newest migration.
  for (const n of [1, journal.entries.length - 1]) {
    it(`brings a database of the version with ${n} migration(s) (${journal.entries[n - 1]!.tag}) up to this one, keeping its rows`, async () => {
      const place = await freshPlace();
      const older = await openDatabase({ ...place, migrations: olderMigrations(n) });
      try {
        expect(await applied(older)).toBe(n);
        await insertRow(older, 'categories', { id: 'old-school', name: 'Old school' });
        await insertRow(older, 'groups', { id: 'old-school-class', name: 'Class of the old version', category_id: 'old-school' });
      } finally {
        await older.close();
      }
      const upgraded = await openDatabase(place);
      try {
        expect(await applied(upgraded)).toBe(journal.entries.length);
        const { rows } = await rawQuery(upgraded, `SELECT g.name, c.name AS category FROM groups g JOIN categories c ON c.id = g.category_id WHERE g.id = 'old-school-class'`);
        expect(rows).toEqual([{ name: 'Class of the old version', category: 'Old school' }]);
        // This version's newest table is there.
        const newest = (await rawQuery(upgraded, `SELECT to_regclass('public.two_factor_recovery_codes') IS NOT NULL AS there`)).rows[0];
        expect(newest).toEqual({ there: true });
      } finally {
        await upgraded.close();
      }
    }, scaled(120_000));
  }

  it('refuses a database a newer version wrote, with a clear message, and changes nothing', async () => {
    const place = await freshPlace();
    const current = await openDatabase(place);
    const future = newestKnownMigration() + 86_400_000;
    try {
      await rawQuery(current, 'INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', ['a-migration-of-a-newer-version', future]);
    } finally {
      await current.close();
    }
    const opened = openDatabase(place);
    await expect(opened).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(opened).rejects.toThrow(/written by a newer version of the portal.*Nothing was changed/);
    // Left as it was: the newer version (this one's migrations and its own) still opens it, nothing to apply.
    const newer = mkdtempSync(join(tmpdir(), 'vdi-newer-migrations-'));
    cleanups.push(() => rmSync(newer, { recursive: true, force: true }));
    cpSync(migrationsFolder, newer, { recursive: true });
    const tag = `${String(journal.entries.length).padStart(4, '0')}_newer`;
    writeFileSync(join(newer, `${tag}.sql`), 'SELECT 1;');
    writeFileSync(join(newer, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: [...journal.entries, { idx: journal.entries.length, version: '7', when: future, tag, breakpoints: true }] }));
    const reopened = await openDatabase({ ...place, migrations: newer });
    try {
      expect(await applied(reopened)).toBe(journal.entries.length + 1);
    } finally {
      await reopened.close();
    }
  }, scaled(120_000));
});
