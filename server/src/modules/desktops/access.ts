import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context';
import { authOf } from '../../http/guard';
import { forbidden, notFound } from '../../http/errors';
import { canManage } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { assertVisibleToItsUser, managesDeploymentOf } from '../deployments/access';
import { findDomain } from '../shared/domains';

/**
 * The desktop named in the request, when the caller may act on it: 404 when missing, 403 when not
 * theirs. A deployment's desktop is also its deployment's owners' and co-owners' (videowall, start, stop).
 * A student's desktop of a hidden deployment: 403 `desktop_not_visible`, except to stop it (hiding may
 * leave started desktops running until they are stopped).
 */
export async function desktopFor(ctx: AppContext, request: FastifyRequest, id: string, opts: { evenHidden?: boolean } = {}) {
  const { user } = authOf(request);
  const row = await findDomain(ctx.db, id);
  if (!row || row.kind !== 'desktop') throw notFound('desktop_not_found', 'Desktop not found');
  const actor = await actorOf(ctx.db, user);
  if (!canManage(actor, row) && !(await managesDeploymentOf(ctx.db, actor, row))) throw forbidden('forbidden', 'Not enough rights on this desktop');
  if (!opts.evenHidden) await assertVisibleToItsUser(ctx.db, actor, row);
  return row;
}
