import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { TRole, TTokenClaims } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import { preparedQuery } from '../db/prepared';
import { liveSession, sessionIdOf, type SessionRow, type UserRow } from '../auth/sessions';
import { parseSetting, settingValueSql } from '../settings';
import { actorOf, actorWith } from '../auth/caller';
import { levelSql, parseLevel, quotaLevels } from '../auth/caller';
import { bearerToken } from '../auth/tokens';
import { assertTokenMayCall, isApiToken, LAST_USED_EVERY_MS, lastUseDue, parseApiToken, usableToken, type ApiTokenRow } from '../auth/api-tokens';
import { ApiError, forbidden, unauthorized } from './errors';

/**
 * The caller: a signed-in session (`session`, `claims`), or a personal API token (`apiToken`; no session).
 */
export type AuthInfo = { user: UserRow; session: SessionRow | null; claims: TTokenClaims | null; role: TRole; apiToken: ApiTokenRow | null };

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
const callerColumns = () => ({
  user: schema.users,
  categoryMaintenance: schema.categories.maintenance,
  maintenance: settingValueSql('maintenance'),
  // What most calls' checks ask next, read here instead of in queries of their own (primed below).
  secondaryGroups: sql<string[]>`(select coalesce(json_agg(${schema.userSecondaryGroups.groupId}), '[]') from ${schema.userSecondaryGroups}
    where ${schema.userSecondaryGroups.userId} = ${schema.users.id})`,
  groupLevel: levelSql(schema.groups, sql`${schema.users.groupId}`),
  categoryLevel: sql`case when ${schema.categories.id} is null then null
    else json_build_object('name', ${schema.categories.name}, 'quota', ${schema.categories.quota}, 'limits', ${schema.categories.limits}) end`,
});

const callerQuery = preparedQuery((db, name) =>
  db
    .select({ session: schema.sessions, ...callerColumns() })
    .from(schema.sessions)
    .leftJoin(schema.users, eq(schema.users.id, schema.sessions.userId))
    .leftJoin(schema.categories, eq(schema.categories.id, schema.users.categoryId))
    .where(eq(schema.sessions.id, sql.placeholder('sessionId')))
    .prepare(name),
);

/** The same, for a call made with a personal API token: the token's row instead of the session's. */
const tokenCallerQuery = preparedQuery((db, name) =>
  db
    .select({ apiToken: schema.apiTokens, ...callerColumns() })
    .from(schema.apiTokens)
    .leftJoin(schema.users, eq(schema.users.id, schema.apiTokens.userId))
    .leftJoin(schema.categories, eq(schema.categories.id, schema.users.categoryId))
    .where(eq(schema.apiTokens.id, sql.placeholder('tokenId')))
    .prepare(name),
);

type CallerRow = Awaited<ReturnType<ReturnType<typeof callerQuery>['execute']>>[number];

/** Who calls with this bearer text: a session's login token, or a personal API token (checked for this method). */
async function loadCaller(ctx: AppContext, bearer: string, method: string) {
  if (!isApiToken(bearer)) {
    const claims = await ctx.tokens.verify(bearer);
    const [row] = await callerQuery(ctx.db).execute({ sessionId: sessionIdOf(claims) });
    return { row, session: liveSession(row?.session), claims, apiToken: null };
  }
  const parsed = parseApiToken(bearer);
  if (!parsed) throw unauthorized('invalid_token', 'Invalid token');
  const [row] = await tokenCallerQuery(ctx.db).execute({ tokenId: parsed.id });
  const apiToken = usableToken(row?.apiToken, parsed.secret);
  assertTokenMayCall(apiToken, method);
  if (lastUseDue(apiToken)) await recordTokenUse(ctx, apiToken.id);
  return { row: row as unknown as CallerRow | undefined, session: null, claims: null, apiToken };
}

/**
 * The one gate of the web API: a live session token (or a personal API token: its owner's rights, at
 * most; see auth/api-tokens.ts), an active user, the route's roles, and maintenance (503) for everyone
 * but admins. Object-level checks come after, per module. `sessionOnly`: refused to API tokens (403).
 */
export function requireAuth(ctx: AppContext, opts: { roles?: readonly TRole[]; duringMaintenance?: boolean; sessionOnly?: boolean } = {}) {
  const guard = async (request: FastifyRequest, _reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw unauthorized('missing_token', 'Missing session token');
    const { row, session, claims, apiToken } = await loadCaller(ctx, token, request.method);
    const user = row?.user;
    if (!user) throw unauthorized('user_not_found', 'User not found');
    if (!user.active) throw forbidden('user_disabled', 'disabled user');
    if (apiToken && opts.sessionOnly) throw forbidden('api_token_session_only', 'This call needs a signed-in session, not an API token');
    const role = user.roleId as TRole;
    if (!opts.duringMaintenance && maintenanceApplies(role, parseSetting('maintenance', row.maintenance).enabled, row.categoryMaintenance)) {
      throw maintenanceError();
    }
    if (opts.roles && !opts.roles.includes(role)) throw forbidden('forbidden', 'Not enough permissions');
    request.auth = { user, session, claims, role, apiToken };
    const secondary = typeof row.secondaryGroups === 'string' ? (JSON.parse(row.secondaryGroups) as string[]) : row.secondaryGroups;
    actorOf.prime(ctx.db, user, actorWith(user, secondary ?? []));
    quotaLevels.prime(ctx.db, user, { group: parseLevel(row.groupLevel), category: parseLevel(row.categoryLevel) });
  };
  return Object.assign(guard, { [IS_GUARD]: true as const });
}

/** The token's last use, written at most once a minute per token (by whichever process sees the call first). */
async function recordTokenUse(ctx: AppContext, id: string) {
  const now = new Date();
  await ctx.db
    .update(schema.apiTokens)
    .set({ lastUsedAt: now })
    .where(and(eq(schema.apiTokens.id, id), or(isNull(schema.apiTokens.lastUsedAt), lt(schema.apiTokens.lastUsedAt, new Date(now.getTime() - LAST_USED_EVERY_MS)))));
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

/** The caller's session, on a route guarded `sessionOnly` (an API token never gets this far). */
export function sessionOf(request: FastifyRequest): SessionRow {
  const { session } = authOf(request);
  if (!session) throw forbidden('api_token_session_only', 'This call needs a signed-in session, not an API token');
  return session;
}
