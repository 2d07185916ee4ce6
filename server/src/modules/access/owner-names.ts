import { inArray } from 'drizzle-orm';
import { schema, type Db } from '../../db';

/** Display names of the owners (user, group, category) of listed items, by id. */
export type OwnerNames = { users: Map<string, string>; groups: Map<string, string>; cats: Map<string, string> };

type Owned = { userId: string; groupId: string; categoryId: string };

/** One query per kind for every desktop, template or medium of a list: their owners' names. */
export async function ownerNamesOf(db: Db, rows: readonly Owned[]): Promise<OwnerNames> {
  if (rows.length === 0) return { users: new Map(), groups: new Map(), cats: new Map() };
  const ids = (pick: (r: Owned) => string) => [...new Set(rows.map(pick))];
  const [users, groups, cats] = await Promise.all([
    db.select({ id: schema.users.id, name: schema.users.name }).from(schema.users).where(inArray(schema.users.id, ids((r) => r.userId))),
    db.select({ id: schema.groups.id, name: schema.groups.name }).from(schema.groups).where(inArray(schema.groups.id, ids((r) => r.groupId))),
    db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories).where(inArray(schema.categories.id, ids((r) => r.categoryId))),
  ]);
  const map = (list: { id: string; name: string }[]) => new Map(list.map((x) => [x.id, x.name]));
  return { users: map(users), groups: map(groups), cats: map(cats) };
}
