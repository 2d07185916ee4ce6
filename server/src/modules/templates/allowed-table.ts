import { and, asc, eq, ilike, inArray, or, type SQL } from 'drizzle-orm';
import type { TAllowedTableItem } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { chooserOf, choosableWhere } from '../access/permissions';

const LIMIT = 30;
const likeTerm = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * POST /allowed/table/{groups|users}: whom the caller may share with — the groups or users of
 * their own category (any category for admins) — by a search of at least 2 letters, or by ids.
 */
export async function allowedTable(db: Db, user: UserRow, table: 'groups' | 'users', query: { term: string } | { ids: string[] }): Promise<TAllowedTableItem[]> {
  const admin = user.roleId === 'admin';
  const cats = await db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories);
  const catName = (id: string) => cats.find((c) => c.id === id)?.name ?? id;
  if (table === 'groups') {
    const t = schema.groups;
    const conds: (SQL | undefined)[] = [choosableWhere([chooserOf(user)], t.categoryId)];
    conds.push('term' in query ? ilike(t.name, likeTerm(query.term)) : inArray(t.id, query.ids.length ? query.ids : ['']));
    const rows = await db.select().from(t).where(and(...conds)).orderBy(asc(t.name)).limit('term' in query ? LIMIT : 1000);
    return rows.map((g) => ({ id: g.id, name: g.name, detail: admin ? catName(g.categoryId) : null }));
  }
  const t = schema.users;
  const conds: (SQL | undefined)[] = [choosableWhere([chooserOf(user)], t.categoryId)];
  conds.push(
    'term' in query
      ? and(eq(t.active, true), or(ilike(t.name, likeTerm(query.term)), ilike(t.username, likeTerm(query.term))))
      : inArray(t.id, query.ids.length ? query.ids : ['']),
  );
  const rows = await db.select().from(t).where(and(...conds)).orderBy(asc(t.name)).limit('term' in query ? LIMIT : 1000);
  return rows.map((u) => ({ id: u.id, name: u.name, detail: admin ? `${u.username} · ${catName(u.categoryId)}` : u.username }));
}
