import { randomUUID } from 'node:crypto';
import { and, eq, or } from 'drizzle-orm';
import type { z } from 'zod';
import { AT_REST, statusIn, type ZDuplicateTemplate, type ZTemplateUpdate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { conflict, forbidden, notFound } from '../../http/errors';
import { assertChoosable, canManage, chooserOf, isAllowed, NOT_SHARED } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { disksOf } from '../desktops/machine-spec';
import { findDomain, ownerOf, type DomainRow } from '../shared/domains';
import { desktopViews } from '../shared/desktop-view';
import { assertNameFree } from '../domains/names';
import { recycleDomains } from '../recycle-bin/recycle';
import { checkNewItemQuota } from '../storage/new-item-quota';
import { templateTree } from './tree';
import { publishTemplate } from './view';

/** A template the caller may manage (owner, admin, manager of its category). */
export async function manageableTemplate(ctx: AppContext, user: UserRow, id: string) {
  const row = await findDomain(ctx.db, id);
  if (!row || row.kind !== 'template') throw notFound('template_not_found', 'Template not found');
  if (!canManage(await actorOf(ctx.db, user), row)) throw forbidden('forbidden', 'Not enough rights on this template');
  return row;
}

const notReady = (row: DomainRow) => conflict('template_not_ready', 'The template is still being made', { status: row.status });

/** POST /template/duplicate/{id}: a new template record on the same disk (no copy). */
export async function duplicateTemplate(ctx: AppContext, user: UserRow, sourceId: string, body: z.infer<typeof ZDuplicateTemplate>) {
  const { db } = ctx;
  const source = await findDomain(db, sourceId);
  if (!source || source.kind !== 'template') throw notFound('template_not_found', 'Template not found');
  if (!isAllowed(await actorOf(db, user), source)) throw forbidden('template_not_allowed', 'This template is not available to you');
  if (source.status !== 'Stopped') throw notReady(source);
  await assertChoosable(db, [chooserOf(user)], body.allowed);
  await checkNewItemQuota(db, user, 'templates');
  await assertNameFree(db, user.id, 'template', body.name);
  const links = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, source.id));
  const id = randomUUID();
  const row = await db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(schema.domains)
      .values({
        id,
        kind: 'template',
        name: body.name,
        description: body.description,
        userId: user.id,
        categoryId: user.categoryId,
        groupId: user.groupId,
        status: 'Stopped',
        persistent: false,
        templateId: null,
        duplicateOfId: source.id,
        hardware: source.hardware,
        guestProperties: source.guestProperties,
        image: source.image,
        icon: source.icon,
        allowed: body.allowed,
        enabled: body.enabled,
      })
      .returning();
    for (const l of links) await tx.insert(schema.domainDisks).values({ domainId: id, storageId: l.storageId, position: l.position });
    return inserted!;
  });
  await publishTemplate(ctx, row, 'template_add');
  return { id };
}

/** PUT /template/update: enable or disable (disabling deletes its temporary desktops), share, rename. */
export async function updateTemplate(ctx: AppContext, lifecycle: DesktopLifecycle, user: UserRow, body: z.infer<typeof ZTemplateUpdate>) {
  const { db } = ctx;
  const row = await manageableTemplate(ctx, user, body.id);
  if (body.allowed) {
    // Whom both the owner and the caller may pick (a manager or an admin editing a teacher's template).
    const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, row.userId));
    await assertChoosable(db, [chooserOf(user), ...(owner ? [chooserOf(owner)] : [])], body.allowed);
  }
  if (body.name !== undefined && body.name !== row.name) await assertNameFree(db, row.userId, 'template', body.name, row.id);
  const [updated] = await db
    .update(schema.domains)
    .set({
      name: body.name ?? row.name,
      description: body.description ?? row.description,
      enabled: body.enabled ?? row.enabled,
      allowed: body.allowed ?? row.allowed,
    })
    .where(eq(schema.domains.id, row.id))
    .returning();
  if (row.enabled && body.enabled === false) {
    const temporary = await db
      .select()
      .from(schema.domains)
      .where(and(eq(schema.domains.templateId, row.id), eq(schema.domains.kind, 'desktop'), eq(schema.domains.persistent, false)));
    for (const d of temporary) await lifecycle.destroyDesktop(d);
  }
  await publishTemplate(ctx, updated!);
  return updated!;
}

/**
 * DELETE /template/{id}: the template and everything built on it go to the owner's recycle bin
 * (for good when retention is 0) — refused (403) while any of it belongs to someone the caller
 * may not act for, and (409) while a desktop of it runs.
 */
export async function deleteTemplate(ctx: AppContext, lifecycle: DesktopLifecycle, user: UserRow, id: string) {
  const { db, bus } = ctx;
  const row = await manageableTemplate(ctx, user, id);
  if (await ctx.jobs.activeFor(row.id)) throw conflict('template_busy', 'The template is still being made');
  const tree = await templateTree(db, row, await actorOf(db, user));
  if (tree.pending.length > 0) {
    throw forbidden('template_delete_not_owner', 'Some desktops or templates built on it belong to others', {
      pending: tree.pending.length,
      names: tree.pending.map((p) => p.name).slice(0, 10).join(', '),
    });
  }
  const temporary = tree.rows.filter((r) => r.kind === 'desktop' && !r.persistent);
  const running = tree.rows.filter((r) => r.kind === 'desktop' && r.persistent && !statusIn(AT_REST, r.status));
  if (running.length > 0) {
    throw conflict('desktops_not_stopped', 'Stop the desktops built on it first', { names: running.map((r) => r.name).slice(0, 10).join(', ') });
  }
  for (const d of temporary) await lifecycle.destroyDesktop(d);
  const desktops = tree.rows.filter((r) => r.kind === 'desktop' && r.persistent);
  const templates = [row, ...tree.rows.filter((r) => r.kind === 'template')];
  await recycleDomains(ctx, {
    agent: user,
    owner: await ownerOf(db, row),
    itemType: 'template',
    itemName: row.name,
    desktops,
    templates,
  });
  for (const d of desktops) lifecycle.changes.emit('deleted', d);
  for (const t of templates) bus.toUser(t.userId, 'template_delete', { id: t.id });
  return { id: row.id };
}

/** POST /template/to/desktop: a template nothing depends on, and that shares no disk, becomes a desktop again. */
export async function templateToDesktop(ctx: AppContext, user: UserRow, templateId: string, name: string) {
  const { db, bus } = ctx;
  const store = ctx.engine.disks;
  const row = await manageableTemplate(ctx, user, templateId);
  if (row.status !== 'Stopped') throw notReady(row);
  const dependants = await db
    .select({ id: schema.domains.id, duplicateOfId: schema.domains.duplicateOfId })
    .from(schema.domains)
    .where(or(eq(schema.domains.templateId, row.id), eq(schema.domains.duplicateOfId, row.id)));
  if (row.duplicateOfId !== null || dependants.some((d) => d.duplicateOfId === row.id)) {
    throw conflict('template_is_duplicated', 'The template shares its disk with a duplicate');
  }
  if (dependants.length > 0) throw conflict('template_has_derivatives', 'Desktops or templates are built on this template', { derivatives: dependants.length });
  const owner = await ownerOf(db, row);
  await checkNewItemQuota(db, owner, 'desktops');
  await assertNameFree(db, owner.id, 'desktop', name);

  const disks = await disksOf(db, row.id);
  const moved: { id: string; from: string; to: string }[] = [];
  try {
    for (const d of disks) {
      const to = store.pathFor('desktop', d.id);
      if (d.path !== to && (await store.exists(d.path)) && !(await store.exists(to))) {
        await store.move(d.path, to);
        moved.push({ id: d.id, from: d.path, to });
      }
      await store.setReadOnly((await store.exists(to)) ? to : d.path, false); // the desktop writes to it again
    }
    const [desktop] = await db.transaction(async (tx) => {
      for (const m of moved) await tx.update(schema.storage).set({ path: m.to }).where(eq(schema.storage.id, m.id));
      for (const d of disks) await tx.update(schema.storage).set({ kind: 'desktop' }).where(eq(schema.storage.id, d.id));
      return tx
        .update(schema.domains)
        .set({ kind: 'desktop', name, persistent: true, status: 'Stopped', enabled: true, allowed: NOT_SHARED, duplicateOfId: null })
        .where(eq(schema.domains.id, row.id))
        .returning();
    });
    bus.toUser(row.userId, 'template_delete', { id: row.id });
    const [view] = await desktopViews(ctx, [desktop!]);
    bus.toUser(row.userId, 'desktop_add', view!);
    return { id: row.id };
  } catch (err) {
    for (const m of moved.reverse()) await store.move(m.to, m.from).catch(() => undefined);
    for (const d of disks) await store.setReadOnly(d.path, true).catch(() => undefined);
    throw err;
  }
}
