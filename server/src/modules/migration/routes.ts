import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ZMigrationEnabled, ZMigrationExport, ZMigrationImportBody, ZMigrationProviderParams } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { actorOf } from '../../audit/record';
import { migrationOf } from './settings';
import { exportUser, importUser } from './migrate';

/** User migration (spec 001 "Migration"): the profile shows export and import only when the provider allows them. */
export async function migrationRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const opts = { preHandler: requireAuth(ctx), schema: { params: ZMigrationProviderParams, response: { 200: ZMigrationEnabled } } };
  for (const way of ['export', 'import'] as const) {
    r.get(`/authentication/${way}/:provider`, opts, async (request) => ({ enabled: (await migrationOf(ctx, request.params.provider))[way] }));
  }
  r.post('/user_migration/export', { preHandler: requireAuth(ctx), schema: { response: { 200: ZMigrationExport } } }, async (request) =>
    exportUser(ctx, actorOf(request), authOf(request).user),
  );
  r.post('/user_migration/import', { preHandler: requireAuth(ctx), schema: { body: ZMigrationImportBody } }, async (request) =>
    importUser(ctx, actorOf(request), authOf(request).user, request.body.token),
  );
}
