import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { requireAuth } from '../../http/guard';
import { badRequest, notFound } from '../../http/errors';
import { isSettingKey, SETTINGS } from '../../settings';

/**
 * The few administration calls the portal needs before the admin screens exist:
 * system settings (maintenance, disclaimer, status bar…), category maintenance, enabling users.
 */
export async function adminRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });

  r.get('/admin/settings/:key', { preHandler: adminOnly, schema: { params: z.object({ key: z.string().max(32) }) } }, async (request) => {
    const key = request.params.key;
    if (!isSettingKey(key)) throw notFound('not_found', 'No such setting');
    return ctx.settings.get(key);
  });

  r.put(
    '/admin/settings/:key',
    { preHandler: adminOnly, schema: { params: z.object({ key: z.string().max(32) }), body: z.record(z.string(), z.unknown()) } },
    async (request) => {
      const key = request.params.key;
      if (!isSettingKey(key)) throw notFound('not_found', 'No such setting');
      const merged = { ...(await ctx.settings.get(key)), ...request.body };
      const parsed = SETTINGS[key].safeParse(merged);
      if (!parsed.success) throw badRequest('validation_error', parsed.error.issues.map((i) => i.message).join('; '));
      await ctx.settings.set(key, parsed.data as never);
      return parsed.data;
    },
  );

  r.put(
    '/admin/category/:id/maintenance',
    { preHandler: adminOnly, schema: { params: z.object({ id: z.string().max(64) }), body: z.object({ enabled: z.boolean() }).strict() } },
    async (request) => {
      const updated = await ctx.db
        .update(schema.categories)
        .set({ maintenance: request.body.enabled })
        .where(eq(schema.categories.id, request.params.id))
        .returning({ id: schema.categories.id });
      if (updated.length === 0) throw notFound('category_not_found', 'Category not found');
      return { id: request.params.id, maintenance: request.body.enabled };
    },
  );

  r.put(
    '/admin/user/:id/active',
    { preHandler: adminOnly, schema: { params: z.object({ id: z.string().max(64) }), body: z.object({ active: z.boolean() }).strict() } },
    async (request) => {
      const updated = await ctx.db
        .update(schema.users)
        .set({ active: request.body.active })
        .where(eq(schema.users.id, request.params.id))
        .returning({ id: schema.users.id });
      if (updated.length === 0) throw notFound('user_not_found', 'User not found');
      // A disabled user is signed out everywhere at once.
      if (!request.body.active) await ctx.sessions.revokeAllOf(request.params.id);
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
