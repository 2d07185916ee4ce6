import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ZMigrationEnabled, ZMigrationProviderParams } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { requireAuth } from '../../http/guard';
import { migrationOf } from './settings';

/** User migration (spec 001 "Migration"): the profile shows export and import only when the provider allows them. */
export async function migrationRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const opts = { preHandler: requireAuth(ctx), schema: { params: ZMigrationProviderParams, response: { 200: ZMigrationEnabled } } };
  for (const way of ['export', 'import'] as const) {
    r.get(`/authentication/${way}/:provider`, opts, async (request) => ({ enabled: (await migrationOf(ctx, request.params.provider))[way] }));
  }
}
