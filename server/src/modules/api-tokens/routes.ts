import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, desc, eq, gt, isNotNull, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import {
  API_TOKEN_MAX_PER_USER,
  ZAdminApiTokenList,
  ZAdminApiTokensQuery,
  ZApiTokenCreate,
  ZApiTokenCreated,
  ZApiTokenList,
  type TAdminApiToken,
  type TRole,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import { audit, auditActorOf } from '../../audit/record';
import { conflict, notFound } from '../../http/errors';
import { authOf, requireAuth } from '../../http/guard';
import { apiTokenPrefix, apiTokenView, checkedExpiry, newApiToken, type ApiTokenRow } from '../../auth/api-tokens';
import { assertReach, boundCategory, likeTerm, orderOf, peopleGuards } from '../admin/people/scope';

const t = schema.apiTokens;
const u = schema.users;
const c = schema.categories;
const idParams = z.object({ id: z.string().min(1).max(64) });
const missing = () => notFound('api_token_not_found', 'API token not found');
const live = (now: Date) => and(isNull(t.revokedAt), or(isNull(t.expiresAt), gt(t.expiresAt, now)));

/** Revokes a token (once), with an entry in the audit log under its owner. */
async function revoke(db: Db, request: FastifyRequest, row: ApiTokenRow, owner: { id: string; username: string; categoryId: string }) {
  await db.transaction(async (tx) => {
    const done = await tx.update(t).set({ revokedAt: new Date() }).where(and(eq(t.id, row.id), isNull(t.revokedAt))).returning({ id: t.id });
    if (done.length === 0) return;
    await audit(tx, auditActorOf(request), {
      action: 'api_token.revoke', objectType: 'user', objectId: owner.id, objectName: owner.username, categoryId: owner.categoryId,
      detail: { token: apiTokenPrefix(row.id), name: row.name },
    });
  });
}

/**
 * Personal API tokens: a person's own (/user/api-tokens: list, create, revoke — with a signed-in session only,
 * so that a token never mints or ends tokens) and the console's list of everyone's (/admin/api-tokens: admins
 * all, managers their category's, as the console's people lists).
 */
export async function apiTokenRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const db = ctx.db;
  const sessionOnly = requireAuth(ctx, { sessionOnly: true });
  const { staff } = peopleGuards(ctx);

  r.get('/user/api-tokens', { preHandler: sessionOnly, schema: { response: { 200: ZApiTokenList } } }, async (request) => {
    const rows = await db.select().from(t).where(and(eq(t.userId, authOf(request).user.id), isNull(t.revokedAt))).orderBy(desc(t.createdAt), t.id);
    return rows.map(apiTokenView);
  });

  r.post('/user/api-tokens', { preHandler: sessionOnly, schema: { body: ZApiTokenCreate, response: { 200: ZApiTokenCreated } } }, async (request) => {
    const { user } = authOf(request);
    const expiresAt = checkedExpiry(request.body.expires);
    const made = newApiToken();
    const row = await db.transaction(async (tx) => {
      // Counted and inserted under the owner's row lock: two creations at once cannot both pass the limit.
      await tx.select({ id: u.id }).from(u).where(eq(u.id, user.id)).for('update');
      const [held] = await tx.select({ n: count() }).from(t).where(and(eq(t.userId, user.id), live(new Date())));
      if ((held?.n ?? 0) >= API_TOKEN_MAX_PER_USER) throw conflict('api_token_limit', `At most ${API_TOKEN_MAX_PER_USER} live API tokens per person`);
      const [inserted] = await tx
        .insert(t)
        .values({ id: made.id, userId: user.id, name: request.body.name, secretHash: made.secretHash, readOnly: request.body.scope === 'read', expiresAt })
        .returning();
      await audit(tx, auditActorOf(request), {
        action: 'api_token.create', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId,
        detail: { token: apiTokenPrefix(made.id), name: request.body.name, scope: request.body.scope, expires: expiresAt?.toISOString() ?? null },
      });
      return inserted!;
    });
    return { ...apiTokenView(row), token: made.token };
  });

  r.delete('/user/api-tokens/:id', { preHandler: sessionOnly, schema: { params: idParams } }, async (request) => {
    const { user } = authOf(request);
    const [row] = await db.select().from(t).where(and(eq(t.id, request.params.id), eq(t.userId, user.id), isNull(t.revokedAt)));
    if (!row) throw missing();
    await revoke(db, request, row, user);
    return { revoked: true };
  });

  const SORTS = { name: t.name, user: u.username, created: t.createdAt, expires: t.expiresAt, last_used: t.lastUsedAt };
  r.get('/admin/api-tokens', { preHandler: staff, schema: { querystring: ZAdminApiTokensQuery, response: { 200: ZAdminApiTokenList } } }, async (request) => {
    const q = request.query;
    const now = new Date();
    const bound = boundCategory(request);
    const parts: SQL[] = [];
    if (bound !== null) parts.push(eq(u.categoryId, bound));
    else if (q.category) parts.push(eq(u.categoryId, q.category));
    if (q.scope) parts.push(eq(t.readOnly, q.scope === 'read'));
    if (q.state === 'active') parts.push(live(now)!);
    if (q.state === 'revoked') parts.push(isNotNull(t.revokedAt));
    if (q.state === 'expired') parts.push(and(isNull(t.revokedAt), lte(t.expiresAt, now))!);
    if (q.search) parts.push(or(sql`${t.name} ilike ${likeTerm(q.search)}`, sql`${u.username} ilike ${likeTerm(q.search)}`, sql`${u.name} ilike ${likeTerm(q.search)}`)!);
    const where = parts.length ? and(...parts) : undefined;
    const [rows, [total]] = await Promise.all([
      db
        .select({ token: t, username: u.username, userName: u.name, role: u.roleId, category: u.categoryId, categoryName: c.name })
        .from(t)
        .innerJoin(u, eq(u.id, t.userId))
        .leftJoin(c, eq(c.id, u.categoryId))
        .where(where)
        .orderBy(...orderOf(SORTS, q.sort, 'created', q.sort ? q.order : 'desc', t.id))
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      db.select({ n: count() }).from(t).innerJoin(u, eq(u.id, t.userId)).where(where),
    ]);
    const items: TAdminApiToken[] = rows.map((row) => ({
      ...apiTokenView(row.token),
      user_id: row.token.userId,
      username: row.username,
      user_name: row.userName,
      role: row.role as TRole,
      category: row.category,
      category_name: row.categoryName ?? row.category,
    }));
    return { items, total: total?.n ?? 0 };
  });

  r.delete('/admin/api-tokens/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const [row] = await db.select({ token: t, owner: { id: u.id, username: u.username, categoryId: u.categoryId } }).from(t).innerJoin(u, eq(u.id, t.userId)).where(eq(t.id, request.params.id));
    if (!row) throw missing();
    assertReach(request, row.owner.categoryId, missing);
    await revoke(db, request, row.token, row.owner);
    return { revoked: true };
  });
}
