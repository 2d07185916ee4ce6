import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context';
import { authOf } from '../../http/guard';
import { forbidden, notFound } from '../../http/errors';
import { actorOf, canManage } from '../access/permissions';
import { managesDeploymentOf } from '../deployments/access';
import { findDomain } from './view';

/**
 * The desktop named in the request, when the caller may act on it: 404 when missing, 403 when not
 * theirs. A deployment's desktop is also its deployment's owners' and co-owners' (videowall, start, stop).
 */
export async function desktopFor(ctx: AppContext, request: FastifyRequest, id: string) {
  const { user } = authOf(request);
  const row = await findDomain(ctx.db, id);
  if (!row || row.kind !== 'desktop') throw notFound('desktop_not_found', 'Desktop not found');
  const actor = await actorOf(ctx.db, user);
  if (!canManage(actor, row) && !(await managesDeploymentOf(ctx.db, actor, row))) throw forbidden('forbidden', 'Not enough rights on this desktop');
  return row;
}
