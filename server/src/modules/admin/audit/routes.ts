import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { desc } from 'drizzle-orm';
import { AUDIT_EXPORT_MAX, ZAuditExportQuery, ZAuditList, ZAuditQuery } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { authOf, requireAuth } from '../../../http/guard';
import { auditCsv, auditView, auditWhere, listAudit } from './list';

/**
 * The audit log, read-only (append-only for everyone: no call edits or deletes an entry; only the
 * retention sweep removes old ones). Admins see every entry, managers their category's.
 */
export async function adminAuditRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx, { roles: ['admin', 'manager'] });

  r.get('/admin/audit', { preHandler: auth, schema: { querystring: ZAuditQuery, response: { 200: ZAuditList } } }, async (request) =>
    listAudit(ctx.db, authOf(request), request.query),
  );

  r.get('/admin/audit/export', { preHandler: auth, schema: { querystring: ZAuditExportQuery } }, async (request, reply) => {
    const t = schema.auditLog;
    const rows = await ctx.db
      .select()
      .from(t)
      .where(auditWhere(authOf(request), request.query))
      .orderBy(...(request.query.sort === 'at' ? [t.at, t.id] : [desc(t.at), desc(t.id)]))
      .limit(AUDIT_EXPORT_MAX);
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${day}.csv"`)
      .send(auditCsv(rows.map(auditView)));
  });
}
