import { and, asc, eq, inArray, or } from 'drizzle-orm';
import type { TTemplate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { Db } from '../../db';
import { schema } from '../../db';
import { ownerNamesOf } from '../access/owner-names';
import { canManage } from '../access/permissions';
import { type Actor } from '../../auth/caller';
import type { DomainRow } from '../shared/domains';

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : 0);

/** Templates as GET /user/templates and the template_* events carry them (spec 001 §3). */
export async function templateViews(db: Db, rows: DomainRow[], actor?: Actor): Promise<TTemplate[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [names, disks, derived, jobs] = await Promise.all([
    ownerNamesOf(db, rows),
    db
      .select({ domainId: schema.domainDisks.domainId, actual: schema.storage.actualSize })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(inArray(schema.domainDisks.domainId, ids)),
    db
      .select({ templateId: schema.domains.templateId, duplicateOfId: schema.domains.duplicateOfId })
      .from(schema.domains)
      .where(or(inArray(schema.domains.templateId, ids), inArray(schema.domains.duplicateOfId, ids))),
    db
      .select({ targetId: schema.jobs.targetId, progress: schema.jobs.progress })
      .from(schema.jobs)
      .where(and(inArray(schema.jobs.targetId, ids), inArray(schema.jobs.status, ['queued', 'running']))),
  ]);
  const name = (names: Map<string, string>, id: string) => names.get(id) ?? null;
  // Per template: its disks' size, its running job's progress, how many domains derive from it.
  const sizes = new Map<string, number>();
  for (const d of disks) sizes.set(d.domainId, (sizes.get(d.domainId) ?? 0) + d.actual);
  const progress = new Map<string, number>();
  for (const j of jobs) if (j.targetId && !progress.has(j.targetId)) progress.set(j.targetId, j.progress);
  const derivatives = new Map<string, number>();
  const count = (id: string | null) => id && derivatives.set(id, (derivatives.get(id) ?? 0) + 1);
  for (const d of derived) {
    count(d.templateId);
    if (d.duplicateOfId !== d.templateId) count(d.duplicateOfId);
  }
  return rows.map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    icon: t.icon,
    image: t.image,
    category: t.categoryId,
    category_name: name(names.cats, t.categoryId),
    group: t.groupId,
    group_name: name(names.groups, t.groupId),
    user: t.userId,
    user_name: name(names.users, t.userId),
    size: sizes.get(t.id) ?? 0,
    editable: actor ? canManage(actor, t) : true,
    allowed: t.allowed,
    enabled: t.enabled,
    status: t.status,
    progress: t.status === 'Creating' ? (progress.get(t.id) ?? 0) : null,
    derivatives: derivatives.get(t.id) ?? 0,
    duplicate_of: t.duplicateOfId,
    vcpus: t.hardware.vcpus,
    memory: t.hardware.memoryMb / 1024,
    created: epoch(t.createdAt),
  }));
}

/** The user's own templates, by name. */
export async function ownTemplates(db: Db, actor: Actor) {
  const rows = await db
    .select()
    .from(schema.domains)
    .where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.userId, actor.id)))
    .orderBy(asc(schema.domains.name));
  return templateViews(db, rows, actor);
}

/** Tells the owner (template_update, or template_add for a new one). */
export async function publishTemplate(ctx: Pick<AppContext, 'db' | 'bus'>, row: DomainRow, event: 'template_add' | 'template_update' = 'template_update', progress?: number) {
  const [view] = await templateViews(ctx.db, [row]);
  if (!view) return;
  ctx.bus.toUser(row.userId, event, progress === undefined ? view : { ...view, progress });
}
