import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context';
import { authOf } from '../../http/guard';
import { forbidden, notFound } from '../../http/errors';
import { canManage, isAllowed } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { assertVisibleToItsUser } from '../deployments/access';
import { findDomain } from '../shared/domains';

/** A desktop or template the caller may change (owner, admin, manager of its category): 404 / 403 otherwise. */
export async function domainFor(ctx: AppContext, request: FastifyRequest, id: string) {
  const { user } = authOf(request);
  const row = await findDomain(ctx.db, id);
  if (!row) throw notFound('desktop_not_found', 'Desktop not found');
  const actor = await actorOf(ctx.db, user);
  if (!canManage(actor, row)) throw forbidden('forbidden', 'Not enough rights on this desktop');
  await assertVisibleToItsUser(ctx.db, actor, row);
  return row;
}

/** Read access for GET /domain/info: what the caller may change, or a template they may create desktops from. */
export async function readableDomain(ctx: AppContext, request: FastifyRequest, id: string) {
  const { user } = authOf(request);
  const row = await findDomain(ctx.db, id);
  if (!row) throw notFound('desktop_not_found', 'Desktop not found');
  const actor = await actorOf(ctx.db, user);
  if (canManage(actor, row)) {
    await assertVisibleToItsUser(ctx.db, actor, row);
    return row;
  }
  if (row.kind === 'template' && row.enabled && isAllowed(actor, row)) return row;
  throw forbidden('forbidden', 'Not enough rights on this desktop');
}
