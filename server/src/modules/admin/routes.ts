import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { requireAuth } from '../../http/guard';
import { badRequest, notFound } from '../../http/errors';
import { isSettingKey, SETTINGS } from '../../settings';
import { adminUserRoutes, setActiveById } from './users/routes';
import { adminGroupRoutes } from './groups/routes';
import { adminCategoryRoutes } from './categories/routes';
import { adminRegistrationCodeRoutes } from './registration-codes/routes';

/**
 * Administration calls: system settings (maintenance, disclaimer, status bar…), category
 * maintenance, enabling users, and the console's people modules (./users, ./groups, ./categories,
 * ./registration-codes).
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

  // Kept for scripts and the existing clients; the same rule as the console's enable/disable.
  r.put(
    '/admin/user/:id/active',
    { preHandler: adminOnly, schema: { params: z.object({ id: z.string().max(64) }), body: z.object({ active: z.boolean() }).strict() } },
    async (request) => {
      await setActiveById(ctx, request, request.params.id, request.body.active);
      return { id: request.params.id, active: request.body.active };
    },
  );

  // The console's people calls (users, groups, categories, registration codes), with the CSV body the import reads.
  await app.register(async (scope) => {
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: 5 * 1024 * 1024 }, (_req, body, done) => done(null, body));
    await adminUserRoutes(scope, ctx);
    await adminGroupRoutes(scope, ctx);
    await adminCategoryRoutes(scope, ctx);
    await adminRegistrationCodeRoutes(scope, ctx);
  });
}
