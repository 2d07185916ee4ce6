import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { requireAuth } from '../../http/guard';
import { notFound } from '../../http/errors';
import { actorOf, audit } from '../../audit/record';
import { notifyAdmins } from '../../socket/admins';
import { adminSettingsRoutes } from './settings/routes';
import { adminAuditRoutes } from './audit/routes';

/**
 * The few administration calls the portal needs before the admin screens exist:
 * system settings (maintenance, disclaimer, status bar…), category maintenance, enabling users.
 */
export async function adminRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });

  await adminSettingsRoutes(app, ctx);
  await adminAuditRoutes(app, ctx);

  r.put(
    '/admin/category/:id/maintenance',
    { preHandler: adminOnly, schema: { params: z.object({ id: z.string().max(64) }), body: z.object({ enabled: z.boolean() }).strict() } },
    async (request) => {
      const updated = await ctx.db.transaction(async (tx) => {
        const rows = await tx
          .update(schema.categories)
          .set({ maintenance: request.body.enabled })
          .where(eq(schema.categories.id, request.params.id))
          .returning({ id: schema.categories.id, name: schema.categories.name });
        if (rows[0]) {
          await audit(tx, actorOf(request), {
            action: request.body.enabled ? 'category.maintenance_on' : 'category.maintenance_off',
            objectType: 'category',
            objectId: rows[0].id,
            objectName: rows[0].name,
            categoryId: rows[0].id,
          });
        }
        return rows;
      });
      if (updated.length === 0) throw notFound('category_not_found', 'Category not found');
      notifyAdmins(ctx, request.params.id, 'category_update', { id: request.params.id });
      return { id: request.params.id, maintenance: request.body.enabled };
    },
  );

  r.put(
    '/admin/user/:id/active',
    { preHandler: adminOnly, schema: { params: z.object({ id: z.string().max(64) }), body: z.object({ active: z.boolean() }).strict() } },
    async (request) => {
      const actor = actorOf(request);
      const updated = await ctx.db.transaction(async (tx) => {
        const rows = await tx
          .update(schema.users)
          .set({ active: request.body.active })
          .where(eq(schema.users.id, request.params.id))
          .returning({ id: schema.users.id, username: schema.users.username, categoryId: schema.users.categoryId });
        const user = rows[0];
        if (user) {
          await audit(tx, actor, {
            action: request.body.active ? 'user.enable' : 'user.disable',
            objectType: 'user',
            objectId: user.id,
            objectName: user.username,
            categoryId: user.categoryId,
          });
        }
        return rows;
      });
      const user = updated[0];
      if (!user) throw notFound('user_not_found', 'User not found');
      // A disabled user is signed out everywhere at once.
      if (!request.body.active) {
        const ended = await ctx.sessions.revokeAllOf(user.id);
        if (ended.length > 0) {
          await audit(ctx.db, actor, {
            action: 'auth.session_revoked',
            objectType: 'user',
            objectId: user.id,
            objectName: user.username,
            categoryId: user.categoryId,
            detail: { sessions: ended.length, reason: 'user_disabled' },
          });
        }
      }
      notifyAdmins(ctx, user.categoryId, 'user_update', { id: user.id });
      return { id: request.params.id, active: request.body.active };
    },
  );

  r.get('/admin/registration_codes', { preHandler: requireAuth(ctx, { roles: ['admin', 'manager'] }) }, async (request) => {
    const me = request.auth!;
    const rows = await ctx.db.select().from(schema.registrationCodes);
    return rows
      .filter((c) => me.role === 'admin' || c.categoryId === me.user.categoryId)
      .map((c) => ({ code: c.code, category: c.categoryId, group: c.groupId, role: c.roleId, description: c.description }));
  });

  r.get('/admin/users', { preHandler: requireAuth(ctx, { roles: ['admin', 'manager'] }) }, async (request) => {
    const me = request.auth!;
    const rows = await ctx.db.select().from(schema.users);
    return rows
      .filter((u) => me.role === 'admin' || u.categoryId === me.user.categoryId)
      .map((u) => ({ id: u.id, username: u.username, name: u.name, role: u.roleId, category: u.categoryId, group: u.groupId, active: u.active }));
  });
}
