import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { eq, sql } from 'drizzle-orm';
import type { TRole, TTokenClaims } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import { preparedQuery } from '../db/prepared';
import { liveSession, sessionIdOf, type SessionRow, type UserRow } from '../auth/sessions';
import { parseSetting, settingValueSql } from '../settings';
import { actorOf, actorWith } from '../auth/caller';
import { levelSql, parseLevel, quotaLevels } from '../auth/caller';
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

/** The maintenance rule: global maintenance or the user's category's holds everyone back but admins. */
const maintenanceApplies = (roleId: string, global: boolean, category: boolean | null | undefined) =>
  roleId !== 'admin' && (global || Boolean(category));

/** True when global maintenance, or the user's category's, applies (admins are never held back). One query. */
export async function inMaintenance(ctx: AppContext, user: { roleId: string; categoryId: string }): Promise<boolean> {
  if (user.roleId === 'admin') return false;
  const [row] = await ctx.db
    .select({
      maintenance: settingValueSql('maintenance'),
      category: sql<boolean | null>`(select ${schema.categories.maintenance} from ${schema.categories} where ${schema.categories.id} = ${user.categoryId})`,
    })
    .from(sql`(select 1) as one`);
  return maintenanceApplies(user.roleId, parseSetting('maintenance', row?.maintenance).enabled, row?.category);
}

/**
 * The session, its user, the user's category's maintenance flag and the maintenance setting: what
 * every call needs, read by ONE query on primary keys.
 *
 * Deliberately no cache. A disabled user, a revoked session, a role or category change and
 * maintenance switched on (globally or for a category) must be seen by the very next call, on every
 * server process: with PGlite one process owns a data directory, but with PostgreSQL several
 * processes may share the database and write behind each other's back. A cache would need a
 * version check per call (a `cache_version` row read in a query, or LISTEN/NOTIFY with its
 * reconnect gaps) — that is already one round trip, the same cost as reading the four rows
 * themselves through their primary keys. So the one query IS the version check: always current, nothing
 * to invalidate, no write path that could forget to bump a version.
 */
const callerQuery = preparedQuery((db, name) =>
  db
    .select({
      session: schema.sessions,
      user: schema.users,
      categoryMaintenance: schema.categories.maintenance,
      maintenance: settingValueSql('maintenance'),
      // What most calls' checks ask next, read here instead of in queries of their own (primed below).
      secondaryGroups: sql<string[]>`(select coalesce(json_agg(${schema.userSecondaryGroups.groupId}), '[]') from ${schema.userSecondaryGroups}
        where ${schema.userSecondaryGroups.userId} = ${schema.users.id})`,
      groupLevel: levelSql(schema.groups, sql`${schema.users.groupId}`),
      categoryLevel: sql`case when ${schema.categories.id} is null then null
        else json_build_object('name', ${schema.categories.name}, 'quota', ${schema.categories.quota}, 'limits', ${schema.categories.limits}) end`,
    })
    .from(schema.sessions)
    .leftJoin(schema.users, eq(schema.users.id, schema.sessions.userId))
    .leftJoin(schema.categories, eq(schema.categories.id, schema.users.categoryId))
    .where(eq(schema.sessions.id, sql.placeholder('sessionId')))
    .prepare(name),
);

async function loadCaller(ctx: AppContext, sessionId: string) {
  const [row] = await callerQuery(ctx.db).execute({ sessionId });
  return row;
}

/**
 * The one gate of the web API: a live session token, an active user, the route's roles,
 * and maintenance (503) for everyone but admins. Object-level checks come after, per module.
 */
export function requireAuth(ctx: AppContext, opts: { roles?: readonly TRole[]; duringMaintenance?: boolean } = {}) {
  const guard = async (request: FastifyRequest, _reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw unauthorized('missing_token', 'Missing session token');
    const claims = await ctx.tokens.verify(token);
    const row = await loadCaller(ctx, sessionIdOf(claims));
    const session = liveSession(row?.session);
    const user = row?.user;
    if (!user) throw unauthorized('user_not_found', 'User not found');
    if (!user.active) throw forbidden('user_disabled', 'disabled user');
    const role = user.roleId as TRole;
    if (!opts.duringMaintenance && maintenanceApplies(role, parseSetting('maintenance', row.maintenance).enabled, row.categoryMaintenance)) {
      throw maintenanceError();
    }
    if (opts.roles && !opts.roles.includes(role)) throw forbidden('forbidden', 'Not enough permissions');
    request.auth = { user, session, claims, role };
    const secondary = typeof row.secondaryGroups === 'string' ? (JSON.parse(row.secondaryGroups) as string[]) : row.secondaryGroups;
    actorOf.prime(ctx.db, user, actorWith(user, secondary ?? []));
    quotaLevels.prime(ctx.db, user, { group: parseLevel(row.groupLevel), category: parseLevel(row.categoryLevel) });
  };
  return Object.assign(guard, { [IS_GUARD]: true as const });
}

/**
 * The gate of the calls made with a one-time or step token instead of a session (a reset or verification
 * link, the sign-in steps): a bearer token with a valid signature, not expired. The handler checks its type.
 */
export function requireToken(ctx: AppContext, opts: { missing?: 'missing_token' | 'session_expired' } = {}) {
  const guard = async (request: FastifyRequest, _reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw unauthorized(opts.missing ?? 'missing_token', 'Missing token');
    await ctx.tokens.verify(token);
  };
  return Object.assign(guard, { [IS_GUARD]: true as const });
}

const IS_GUARD = Symbol('authentication guard');
type Hook = (...args: never[]) => unknown;
const isGuard = (hook: Hook) => (hook as Hook & { [IS_GUARD]?: true })[IS_GUARD] === true;

/**
 * `onRoute`, for every route: a `requireAuth` or `requireToken` guard given as the route's `preHandler` runs as its first
 * `onRequest` hook instead, before the body is read and before any check of the input (Fastify runs
 * preHandler after validation, so an anonymous call with a bad body would learn the route's schema
 * from a 400 instead of getting its 401). Answers whether the route has a guard.
 */
export function authenticateFirst(route: RouteOptions): boolean {
  const pre = [route.preHandler ?? []].flat() as Hook[];
  const guards = pre.filter(isGuard);
  if (guards.length === 0) return false;
  const rest = pre.filter((h) => !isGuard(h));
  route.onRequest = [...guards, ...([route.onRequest ?? []].flat() as Hook[])] as RouteOptions['onRequest'];
  route.preHandler = (rest.length ? rest : undefined) as RouteOptions['preHandler'];
  return true;
}

export function authOf(request: FastifyRequest): AuthInfo {
  if (!request.auth) throw unauthorized('missing_token', 'Missing session token');
  return request.auth;
}
