import { aliasedTable, and, asc, eq, ilike, or, type SQL } from 'drizzle-orm';
import type { TAllowedTermItem, TAllowedTermTable } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { chooserOf, choosableWhere } from '../access/permissions';

/** At most this many answers to one search: the picker asks again as more letters are typed. */
export const TERM_LIMIT = 30;
const likeTerm = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * POST /admin/allowed/term/{table}: what a permission picker offers for the typed letters, within
 * whom the caller may pick (`access/permissions.ts`): an admin anyone, others the groups and
 * users of their own category. Roles and categories reach beyond one category, so only admins
 * share by them; others get no match (the original offered them and refused nothing; here what
 * a picker shows is what saving accepts).
 */
export async function allowedTerm(db: Db, user: UserRow, table: TAllowedTermTable, query: { term: string; category?: string }): Promise<TAllowedTermItem[]> {
  const like = likeTerm(query.term);
  const admin = user.roleId === 'admin';
  const choosers = [chooserOf(user)];
  if (table === 'roles' || table === 'categories') {
    if (!admin) return [];
    const t = table === 'roles' ? schema.roles : schema.categories;
    const where = table === 'categories' && query.category ? and(ilike(t.name, like), eq(schema.categories.id, query.category)) : ilike(t.name, like);
    return db.select({ id: t.id, name: t.name }).from(t).where(where).orderBy(asc(t.name)).limit(TERM_LIMIT);
  }
  const c = schema.categories;
  if (table === 'groups') {
    const g = schema.groups;
    const where: (SQL | undefined)[] = [ilike(g.name, like), choosableWhere(choosers, g.categoryId)];
    if (query.category) where.push(eq(g.categoryId, query.category));
    return db
      .select({ id: g.id, name: g.name, parent_category: g.categoryId, category_name: c.name })
      .from(g)
      .innerJoin(c, eq(c.id, g.categoryId))
      .where(and(...where))
      .orderBy(asc(g.name))
      .limit(TERM_LIMIT);
  }
  const u = schema.users;
  const g = aliasedTable(schema.groups, 'primary_group');
  const where: (SQL | undefined)[] = [eq(u.active, true), or(ilike(u.name, like), ilike(u.username, like)), choosableWhere(choosers, u.categoryId)];
  if (query.category) where.push(eq(u.categoryId, query.category));
  return db
    .select({ id: u.id, name: u.name, uid: u.username, category: u.categoryId, category_name: c.name, group_name: g.name })
    .from(u)
    .innerJoin(c, eq(c.id, u.categoryId))
    .innerJoin(g, eq(g.id, u.groupId))
    .where(and(...where))
    .orderBy(asc(u.name))
    .limit(TERM_LIMIT);
}
