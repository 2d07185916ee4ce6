import { sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import { conflict } from '../../http/errors';

/**
 * The rule: a person's desktops (or templates) have different names, compared without case (the
 * index on the owner, kind and lower(name) answers it). As a boolean SQL expression, to stand alone
 * or as a column of another query: does the person of `userId` have a `kind` named `name`, other
 * than the domain `exceptId` (the one being renamed)?
 */
export const nameTakenSql = (userId: SQL | string, kind: SQL | 'desktop' | 'template', name: SQL | string, exceptId?: SQL) => {
  const n = alias(schema.domains, 'same_name');
  const kindSql = typeof kind === 'string' ? sql.raw(`'${kind}'`) : kind;
  const other = exceptId ? sql` and ${n.id} <> ${exceptId}` : sql``;
  return sql<boolean>`exists (select 1 from ${schema.domains} ${sql.identifier('same_name')} where ${n.userId} = ${userId} and ${n.kind} = ${kindSql} and lower(${n.name}) = lower(${name})${other})`;
};

/** `nameTakenSql` on its own, prepared ('' as `exceptId` is no domain's id: nothing left out). */
const sameName = preparedQuery((db, name) =>
  db
    .select({ taken: nameTakenSql(sql`${sql.placeholder('userId')}`, sql`${sql.placeholder('kind')}`, sql`${sql.placeholder('name')}`, sql`${sql.placeholder('exceptId')}`) })
    .from(sql`(select 1) as one`)
    .prepare(name),
);

export async function assertNameFree(db: Db, userId: string, kind: 'desktop' | 'template', name: string, exceptId?: string) {
  const [row] = await sameName(db).execute({ userId, kind, name, exceptId: exceptId ?? '' });
  if (row?.taken) throw nameTaken(kind, name);
}

/** The refusal when a person already has a desktop (or template) of that name. */
export const nameTaken = (kind: 'desktop' | 'template', name: string) =>
  kind === 'desktop'
    ? conflict('new_desktop_name_exists', `You already have a desktop named ${name}`, { name })
    : conflict('new_template_name_exists', `You already have a template named ${name}`, { name });
