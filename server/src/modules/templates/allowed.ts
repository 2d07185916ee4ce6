import { and, eq } from 'drizzle-orm';
import type { TAllowedTemplate } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { ownerNamesOf } from '../access/owner-names';
import { isAllowed } from '../access/permissions';
import { actorOf } from '../../auth/caller';

/** Enabled templates the user may use: `all` includes their own, `shared` only other people's. */
export async function allowedTemplates(db: Db, user: UserRow, kind: 'all' | 'shared'): Promise<TAllowedTemplate[]> {
  const actor = await actorOf(db, user);
  const rows = await db
    .select()
    .from(schema.domains)
    .where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.enabled, true)));
  const visible = rows.filter((t) => isAllowed(actor, t) && (kind === 'all' || t.userId !== user.id));
  if (visible.length === 0) return [];
  const names = await ownerNamesOf(db, visible);
  const name = (of: Map<string, string>, id: string) => of.get(id) ?? id;
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
      category_name: name(names.cats, t.categoryId),
      group: t.groupId,
      group_name: name(names.groups, t.groupId),
      user: t.userId,
      user_name: name(names.users, t.userId),
      status: t.status,
    }));
}
