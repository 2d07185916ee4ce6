import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import { conflict } from '../../http/errors';

/** A person's desktops (or templates) have different names, compared without case. */
const sameName = preparedQuery((db) =>
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
    .prepare(''),
);

export async function assertNameFree(db: Db, userId: string, kind: 'desktop' | 'template', name: string, exceptId?: string) {
  const rows = await sameName(db).execute({ userId, kind, name, exceptId: exceptId ?? '' });
  if (rows.length > 0) {
    throw kind === 'desktop'
      ? conflict('new_desktop_name_exists', `You already have a desktop named ${name}`, { name })
      : conflict('new_template_name_exists', `You already have a template named ${name}`, { name });
  }
}
