import type { SQL } from 'drizzle-orm';
import type { Db } from '../../db';

/** The rows of a raw query (the pg driver's result). */
export async function rowsOf<T>(db: Pick<Db, 'execute'>, query: SQL): Promise<T[]> {
  return ((await db.execute(query)) as unknown as { rows: T[] }).rows;
}
