import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { expect } from 'vitest';
import { migrationsFolder, openDatabase, type Database } from '../../src/db';
import { createScratchDatabase } from './db';

const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };

/** A statement on a database as it is (no schema types: the tables of an older version). */
export const rawQuery = (database: Database, text: string) => (database.db as unknown as { $client: pg.Pool }).$client.query(text);

/**
 * A database at the version just before the migration whose tag ends with `tagSuffix` (embedded, or a scratch
 * PostgreSQL database with TEST_DATABASE_URL), and where it lives, to open it again with every migration. What it
 * made is undone by `cleanups` (run them in afterAll, last first).
 */
export async function databaseBefore(tagSuffix: string, name: string, cleanups: (() => Promise<unknown> | unknown)[]) {
  const before = journal.entries.findIndex((e) => e.tag.endsWith(tagSuffix));
  expect(before).toBeGreaterThan(0);
  const older = mkdtempSync(join(tmpdir(), 'vdi-older-migrations-'));
  cleanups.push(() => rmSync(older, { recursive: true, force: true }));
  cpSync(migrationsFolder, older, { recursive: true });
  writeFileSync(join(older, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, before) }));
  let place: { url?: string; dir?: string };
  if (process.env.TEST_DATABASE_URL) {
    const scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL, `vdi_${name}`);
    cleanups.push(() => scratch.drop());
    place = { url: scratch.url };
  } else {
    const dir = mkdtempSync(join(tmpdir(), `vdi-${name}-`));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    place = { dir: join(dir, 'db') };
  }
  return { old: await openDatabase({ ...place, migrations: older }), place };
}
