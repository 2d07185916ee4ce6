import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import { conflict } from '../../http/errors';

/** A person's desktops (or templates) have different names, compared without case. */
export async function assertNameFree(db: Db, userId: string, kind: 'desktop' | 'template', name: string, exceptId?: string) {
  const rows = await db
    .select({ id: schema.domains.id })
    .from(schema.domains)
    .where(
      and(
        eq(schema.domains.userId, userId),
        eq(schema.domains.kind, kind),
        sql`lower(${schema.domains.name}) = lower(${name})`,
        exceptId ? ne(schema.domains.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  if (rows.length > 0) {
    throw kind === 'desktop'
      ? conflict('new_desktop_name_exists', `You already have a desktop named ${name}`, { name })
      : conflict('new_template_name_exists', `You already have a template named ${name}`, { name });
  }
}
