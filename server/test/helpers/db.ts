import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '../../src/db';

/**
 * A fresh database for one test file: in-memory PGlite by default, or a new database on the
 * PostgreSQL server named by TEST_DATABASE_URL (created here, dropped by close()).
 */
export async function openTestDatabase(): Promise<Database & { label: string }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return { ...(await openDatabase({})), label: 'pglite' };
  const pg = (await import('pg')).default;
  const name = `vdi_test_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  return {
    ...database,
    label: 'postgres',
    close: async () => {
      await database.close();
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
