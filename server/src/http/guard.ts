import type { FastifyReply, FastifyRequest } from 'fastify';
import { eq } from 'drizzle-orm';
import type { TRole, TTokenClaims } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import type { SessionRow, UserRow } from '../auth/sessions';
import { bearerToken } from '../auth/tokens';
import { ApiError, forbidden, unauthorized } from './errors';

export type AuthInfo = { user: UserRow; session: SessionRow; claims: TTokenClaims; role: TRole };

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthInfo;
  }
}

export const maintenanceError = () =>
  new ApiError('service_unavailable', 'maintenance', 'The service is under maintenance');

/** True when global maintenance, or the user's category's, applies (admins are never held back). */
export async function inMaintenance(ctx: AppContext, user: { roleId: string; categoryId: string }): Promise<boolean> {
  if (user.roleId === 'admin') return false;
  if ((await ctx.settings.get('maintenance')).enabled) return true;
  const [cat] = await ctx.db
    .select({ maintenance: schema.categories.maintenance })
    .from(schema.categories)
    .where(eq(schema.categories.id, user.categoryId));
  return Boolean(cat?.maintenance);
}

/**
 * The one gate of the web API: a live session token, an active user, the route's roles,
 * and maintenance (503) for everyone but admins. Object-level checks come after, per module.
 */
export function requireAuth(ctx: AppContext, opts: { roles?: readonly TRole[]; duringMaintenance?: boolean } = {}) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw unauthorized('missing_token', 'Missing session token');
    const claims = await ctx.tokens.verify(token);
    const session = await ctx.sessions.require(claims);
    const [user] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, session.userId));
    if (!user) throw unauthorized('user_not_found', 'User not found');
    if (!user.active) throw forbidden('user_disabled', 'disabled user');
    const role = user.roleId as TRole;
    if (!opts.duringMaintenance && (await inMaintenance(ctx, user))) throw maintenanceError();
    if (opts.roles && !opts.roles.includes(role)) throw forbidden('forbidden', 'Not enough permissions');
    request.auth = { user, session, claims, role };
  };
}

export function authOf(request: FastifyRequest): AuthInfo {
  if (!request.auth) throw unauthorized('missing_token', 'Missing session token');
  return request.auth;
}
