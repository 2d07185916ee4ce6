// The server project's global set-up: the embedded database migrated once for the whole run and
// written out as an archive of its data directory; each test's fresh in-memory database starts
// from it (helpers/db.ts) instead of a new cluster and every migration — most of a test server's
// start (about 7 of 8 s of CPU). The same migrations as the product's start (drizzle's migrator on
// PGlite itself: the product's goes through the worker thread). Not with TEST_DATABASE_URL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import type { TestProject } from 'vitest/node';
import { migrationsFolder } from '../src/db';

// (`dbTemplate`'s type: helpers/db.ts, which reads it.)

export default async function setup(project: TestProject) {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('dbTemplate', '');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'vdi-db-template-'));
  const path = join(dir, 'migrated.tar');
  const pglite = await PGlite.create();
  try {
    await migrate(drizzle(pglite), { migrationsFolder });
    writeFileSync(path, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  } finally {
    await pglite.close();
  }
  project.provide('dbTemplate', path);
  return () => rmSync(dir, { recursive: true, force: true });
}
