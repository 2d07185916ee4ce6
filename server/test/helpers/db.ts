import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '../../src/db';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated embedded database's archive (test/global-db.ts; '' with PostgreSQL). */
    dbTemplate: string;
  }
}

/** The run's migrated embedded database (test/global-db.ts), when there is one. */
async function template(): Promise<string | undefined> {
  if (!process.env.VITEST) return undefined; // (the bench's scripts)
  const { inject } = await import('vitest');
  return inject('dbTemplate') || undefined;
}

/**
 * A fresh database for one test file: in-memory PGlite by default, or a new database on the
 * PostgreSQL server named by TEST_DATABASE_URL (created here, dropped by close()).
 */
export async function openTestDatabase(): Promise<Database & { label: string; url?: string }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return { ...(await openDatabase({ template: await template() })), label: 'pglite' };
  const scratch = await createScratchDatabase(admin, 'vdi_test');
  const database = await openDatabase({ url: scratch.url });
  return {
    ...database,
    label: 'postgres',
    url: scratch.url,
    close: async () => {
      await database.close();
      await scratch.drop();
    },
  };
}

/** A new, empty database on the PostgreSQL server of `adminUrl` (tests, bench), and how to drop it. */
export async function createScratchDatabase(adminUrl: string, prefix: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.href, drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
