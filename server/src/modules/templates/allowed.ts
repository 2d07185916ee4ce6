import { and, eq, inArray } from 'drizzle-orm';
import type { TAllowedTemplate } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { actorOf, isAllowed } from '../access/permissions';

/** Enabled templates the user may use: `all` includes their own, `shared` only other people's. */
export async function allowedTemplates(db: Db, user: UserRow, kind: 'all' | 'shared'): Promise<TAllowedTemplate[]> {
  const actor = await actorOf(db, user);
  const rows = await db
    .select()
    .from(schema.domains)
    .where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.enabled, true)));
  const visible = rows.filter((t) => isAllowed(actor, t) && (kind === 'all' || t.userId !== user.id));
  if (visible.length === 0) return [];
  const ids = (f: (r: (typeof rows)[number]) => string) => [...new Set(visible.map(f))];
  const [users, groups, cats] = await Promise.all([
    db.select({ id: schema.users.id, name: schema.users.name }).from(schema.users).where(inArray(schema.users.id, ids((r) => r.userId))),
    db.select({ id: schema.groups.id, name: schema.groups.name }).from(schema.groups).where(inArray(schema.groups.id, ids((r) => r.groupId))),
    db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories).where(inArray(schema.categories.id, ids((r) => r.categoryId))),
  ]);
  const name = (list: { id: string; name: string }[], id: string) => list.find((x) => x.id === id)?.name ?? id;
  return visible
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((t) => ({
      id: t.id,
      name: t.name,
      kind: 'template' as const,
      description: t.description,
      icon: t.icon,
      image: t.image,
      category: t.categoryId,
      category_name: name(cats, t.categoryId),
      group: t.groupId,
      group_name: name(groups, t.groupId),
      user: t.userId,
      user_name: name(users, t.userId),
      status: t.status,
    }));
}
