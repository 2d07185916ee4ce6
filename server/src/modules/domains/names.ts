import { and, eq, ne, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import { conflict } from '../../http/errors';

/** A person's desktops (or templates) have different names, compared without case. */
const sameName = preparedQuery((db, name) =>
  db
    .select({ id: schema.domains.id })
    .from(schema.domains)
    .where(
      and(
        eq(schema.domains.userId, sql.placeholder('userId')),
        eq(schema.domains.kind, sql.placeholder('kind')),
        sql`lower(${schema.domains.name}) = lower(${sql.placeholder('name')})`,
        // '' is no domain's id: nothing is left out.
        ne(schema.domains.id, sql.placeholder('exceptId')),
      ),
    )
    .limit(1)
    .prepare(name),
);

export async function assertNameFree(db: Db, userId: string, kind: 'desktop' | 'template', name: string, exceptId?: string) {
  const rows = await sameName(db).execute({ userId, kind, name, exceptId: exceptId ?? '' });
  if (rows.length > 0) throw nameTaken(kind, name);
}

/** The refusal when a person already has a desktop (or template) of that name. */
export const nameTaken = (kind: 'desktop' | 'template', name: string) =>
  kind === 'desktop'
    ? conflict('new_desktop_name_exists', `You already have a desktop named ${name}`, { name })
    : conflict('new_template_name_exists', `You already have a template named ${name}`, { name });

/** "Does the person of `userId` have a desktop (or template) of `name`?" as a boolean column of another query. */
export const nameTakenSql = (userId: SQL | string, kind: 'desktop' | 'template', name: SQL | string) => {
  const n = alias(schema.domains, 'same_name');
  return sql<boolean>`exists (select 1 from ${schema.domains} ${sql.identifier('same_name')} where ${n.userId} = ${userId} and ${n.kind} = ${sql.raw(`'${kind}'`)} and lower(${n.name}) = lower(${name}))`;
};
