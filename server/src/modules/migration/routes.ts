import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ZMigrationEnabled, ZMigrationExport, ZMigrationImportBody, ZMigrationProviderParams, ZMigrationResult } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { auditActorOf } from '../../audit/record';
import { migrationOf } from './settings';
import { exportUser, importedInto, importUser } from './migrate';

/** User migration (spec 001 "Migration"): the profile shows export and import only when the provider allows them. */
export async function migrationRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const opts = { preHandler: requireAuth(ctx), schema: { params: ZMigrationProviderParams, response: { 200: ZMigrationEnabled } } };
  for (const way of ['export', 'import'] as const) {
    r.get(`/authentication/${way}/:provider`, opts, async (request) => ({ enabled: (await migrationOf(ctx, request.params.provider))[way] }));
  }
  r.post('/user_migration/export', { preHandler: requireAuth(ctx), schema: { response: { 200: ZMigrationExport } } }, async (request) =>
    exportUser(ctx, auditActorOf(request), authOf(request).user),
  );
  r.post('/user_migration/import', { preHandler: requireAuth(ctx), schema: { body: ZMigrationImportBody } }, async (request) =>
    importUser(ctx, auditActorOf(request), authOf(request).user, request.body.token),
  );
  // What the /migration page shows: the caller's own import, or nothing.
  r.get('/user_migration/result', { preHandler: requireAuth(ctx), schema: { response: { 200: ZMigrationResult } } }, async (request) => {
    const row = await importedInto(ctx.db, authOf(request).user.id);
    if (!row?.moved || !row.migratedAt) return { migration: null };
    const { originUsername, ...counts } = row.moved;
    return { migration: { origin_username: originUsername, migrated_at: Math.floor(row.migratedAt.getTime() / 1000), ...counts } };
  });
}
