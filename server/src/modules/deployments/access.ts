import { eq } from 'drizzle-orm';
import type { AppContext } from '../../context';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { forbidden, notFound } from '../../http/errors';
import { canManage, mayChoose } from '../access/permissions';
import { actorOf, type Actor } from '../../auth/caller';

export type DeploymentRow = typeof schema.deployments.$inferSelect;

/** What the caller may do with a deployment (spec core §6: co-owners as the owner, except owners and deleting). */
export type DeploymentRights = { owner: boolean; coOwner: boolean; read: boolean; edit: boolean; delete: boolean; changeOwners: boolean };

export function rightsOn(actor: Actor, d: Pick<DeploymentRow, 'userId' | 'categoryId' | 'coOwners'>): DeploymentRights {
  // The owner, an admin, or a manager of the owner's category.
  const full = canManage(actor, d);
  const coOwner = d.coOwners.includes(actor.id);
  return { owner: d.userId === actor.id, coOwner, read: full || coOwner, edit: full || coOwner, delete: full, changeOwners: full };
}

export type Need = 'read' | 'edit' | 'delete' | 'changeOwners';

export async function findDeployment(db: Db, id: string) {
  return (await db.select().from(schema.deployments).where(eq(schema.deployments.id, id)))[0];
}

/** The deployment named in the request, when the caller has the right: 404 when missing (or in the bin), 403 otherwise. */
export async function deploymentFor(ctx: AppContext, user: UserRow, id: string, need: Need) {
  const row = await findDeployment(ctx.db, id);
  if (!row || row.status !== 'ready') throw notFound('deployment_not_found', 'Deployment not found');
  const actor = await actorOf(ctx.db, user);
  const rights = rightsOn(actor, row);
  if (!rights.read) throw forbidden('forbidden', 'Not enough rights on this deployment');
  if (!rights[need]) {
    throw forbidden('deployment_owner_only', need === 'delete' ? 'Only the owner may delete the deployment' : 'Only the owner may change the owners');
  }
  return { row, actor, rights };
}

/**
 * May the actor act on this desktop of the deployment (start, stop, viewers, direct link)? The
 * owner and admins on all of them; co-owners and managers only on the desktops of users they
 * could have picked themselves (their own category), whoever else the owner chose.
 */
export function reachesDesktop(actor: Actor, d: Pick<DeploymentRow, 'userId' | 'categoryId' | 'coOwners'>, desktop: { categoryId: string }) {
  if (!rightsOn(actor, d).edit) return false;
  return d.userId === actor.id || mayChoose(actor, desktop);
}

/** Does the actor manage the deployment a desktop belongs to (owner, co-owner, admin, manager), within their reach? */
export async function managesDeploymentOf(db: Db, actor: Actor, desktop: { tag: string | null; categoryId: string }) {
  if (!desktop.tag) return false;
  const d = await findDeployment(db, desktop.tag);
  return Boolean(d && d.status === 'ready' && reachesDesktop(actor, d, desktop));
}

/**
 * A student's desktop of a hidden deployment (its `tag_visible` off) is out of the student's reach
 * until shown again: acting on it is refused (403 `desktop_not_visible`). Admins and those who
 * manage the deployment (its owners, co-owners, managers of the category) still reach it.
 */
export async function assertVisibleToItsUser(db: Db, actor: Actor, desktop: { kind?: string; tag: string | null; tagVisible: boolean; userId: string; categoryId: string }) {
  if (desktop.kind === 'template' || !desktop.tag || desktop.tagVisible || desktop.userId !== actor.id || actor.role === 'admin') return;
  if (await managesDeploymentOf(db, actor, desktop)) return;
  throw forbidden('desktop_not_visible', 'This desktop is hidden by its deployment');
}

/**
 * What a student may do with their desktop of a deployment: `recreate` when the deployment gives
 * them that right; `edit` never (the deployment decides what its desktops are made of). Its
 * owners, co-owners, admins and managers always may.
 */
export async function assertStudentMay(db: Db, actor: Actor, desktop: { tag: string | null; userId: string }, right: 'recreate' | 'edit') {
  if (!desktop.tag || desktop.userId !== actor.id) return;
  const d = await findDeployment(db, desktop.tag);
  if (!d || rightsOn(actor, d).edit || d.userPermissions.includes(right)) return;
  throw forbidden('forbidden', `The deployment does not let its users ${right} their desktop`);
}
