import { inArray, or } from 'drizzle-orm';
import type { TTemplateTree, TTemplateTreeNode } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { canManage } from '../access/permissions';
import { type Actor } from '../../auth/caller';
import type { DomainRow } from '../shared/domains';

/**
 * What depends on a template, recursively: desktops and templates made from it (templateId),
 * and its duplicates (duplicateOfId, they share its disk) with what depends on them.
 */
export async function dependantsOf(db: Db, root: DomainRow): Promise<{ rows: DomainRow[]; parentOf: Map<string, string> }> {
  const rows: DomainRow[] = [];
  const parentOf = new Map<string, string>();
  const seen = new Set([root.id]);
  let frontier = [root.id];
  while (frontier.length > 0) {
    const found = await db
      .select()
      .from(schema.domains)
      .where(or(inArray(schema.domains.templateId, frontier), inArray(schema.domains.duplicateOfId, frontier)));
    const next: string[] = [];
    for (const r of found) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      rows.push(r);
      const parent = r.duplicateOfId && frontier.includes(r.duplicateOfId) ? r.duplicateOfId : r.templateId!;
      parentOf.set(r.id, parent);
      if (r.kind === 'template') next.push(r.id);
    }
    frontier = next;
  }
  return { rows, parentOf };
}

/** GET /template/tree/{id}: the tree with owner names; `pending` = what the caller may not delete. */
export async function templateTree(db: Db, root: DomainRow, actor: Actor): Promise<TTemplateTree & { rows: DomainRow[] }> {
  const { rows, parentOf } = await dependantsOf(db, root);
  const userIds = [...new Set([root.userId, ...rows.map((r) => r.userId)])];
  const users = await db.select({ id: schema.users.id, name: schema.users.name }).from(schema.users).where(inArray(schema.users.id, userIds));
  const userName = (id: string) => users.find((u) => u.id === id)?.name ?? null;
  const node = (r: DomainRow, parent: string | null): TTemplateTreeNode => ({
    id: r.id,
    name: r.name,
    kind: r.kind,
    status: r.status,
    user: r.userId,
    user_name: userName(r.userId),
    duplicate: r.duplicateOfId !== null && r.duplicateOfId === parent,
    pending: parent !== null && !canManage(actor, r),
    children: rows
      .filter((c) => parentOf.get(c.id) === r.id)
      .sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'template' ? -1 : 1))
      .map((c) => node(c, r.id)),
  });
  const pending = rows.filter((r) => !canManage(actor, r));
  return {
    id: root.id,
    name: root.name,
    is_duplicated: root.duplicateOfId !== null || rows.some((r) => r.duplicateOfId === root.id),
    tree: node(root, null),
    pending: pending.map((r) => ({ id: r.id, name: r.name, kind: r.kind, user_name: userName(r.userId) })),
    desktops: rows.filter((r) => r.kind === 'desktop').length,
    templates: rows.filter((r) => r.kind === 'template').length,
    rows,
  };
}
