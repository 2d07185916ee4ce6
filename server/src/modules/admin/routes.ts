import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { requireAuth } from '../../http/guard';
import { notFound } from '../../http/errors';
import { auditActorOf, audit } from '../../audit/record';
import { notifyAdmins } from '../../socket/admins';
import { adminSettingsRoutes } from './settings/routes';
import { adminAuditRoutes } from './audit/routes';
import { adminUserRoutes, setActiveById } from './users/routes';
import { adminGroupRoutes } from './groups/routes';
import { adminCategoryRoutes } from './categories/routes';
import { adminRegistrationCodeRoutes } from './registration-codes/routes';
import { adminStorageRoutes } from './storage/routes';
import { adminJobRoutes } from './jobs/routes';
import { adminHypervisorRoutes } from './hypervisors/routes';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { adminDashboardRoutes } from './dashboard/routes';
import { adminBackupRoutes } from './backups/routes';

/**
 * Administration calls: system settings (maintenance, disclaimer, status bar…), category
 * maintenance, enabling users, and the console's people modules (./users, ./groups, ./categories,
 * ./registration-codes).
 */
export async function adminRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: Pick<DesktopLifecycle, 'releaseHost'>) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });

  await adminSettingsRoutes(app, ctx);
  await adminAuditRoutes(app, ctx);
  // The console's infrastructure: storage, jobs, hypervisors, dashboard.
  await adminStorageRoutes(app, ctx);
  await adminJobRoutes(app, ctx);
  await adminHypervisorRoutes(app, ctx, lifecycle);
  await adminDashboardRoutes(app, ctx);
  await adminBackupRoutes(app, ctx);

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
          await audit(tx, auditActorOf(request), {
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
