import { asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';

/** A desktop's or a template's row: what every area that acts on domains reads. */
export type DomainRow = typeof schema.domains.$inferSelect;

export async function findDomains(db: Db, where: SQL | undefined) {
  return db.select().from(schema.domains).where(where).orderBy(asc(schema.domains.name));
}

const domainById = preparedQuery((db, name) => db.select().from(schema.domains).where(eq(schema.domains.id, sql.placeholder('id'))).prepare(name));

export async function findDomain(db: Db, id: string) {
  return (await domainById(db).execute({ id }))[0];
}

/** The owner of a desktop (quotas and limits are theirs, whoever presses start). */
export async function ownerOf(db: Db, row: DomainRow) {
  const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, row.userId));
  if (!owner) throw new Error(`desktop ${row.id} has no owner`);
  return owner;
}
