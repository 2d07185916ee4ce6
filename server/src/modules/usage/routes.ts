import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ZDashboardHistory, ZDashboardHistoryQuery, ZUsageReport, ZUsageReportCsvQuery, ZUsageReportQuery, type TUsageReportQuery } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { forbidden } from '../../http/errors';
import { boundCategory, peopleGuards } from '../admin/people/scope';
import { reportCsv, reportPeriod, usageReport } from './report';
import { rollupUsage } from './rollup';
import { dashboardHistory } from './sampler';

/**
 * The console's usage reports (issue 29): admins every organisation (or the one named), managers
 * their own only. The hour under way is rolled up first, so a desktop running now counts.
 */
export async function reportRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);

  const prepare = async (request: FastifyRequest, q: TUsageReportQuery) => {
    const bound = boundCategory(request);
    if (bound !== null && q.category !== undefined && q.category !== bound) throw forbidden('forbidden', 'Managers see their organisation only');
    reportPeriod(q);
    await rollupUsage(ctx, ctx.clock.now()).catch((err: unknown) => ctx.log.warn({ err }, 'usage roll-up failed'));
    return bound ?? q.category ?? null;
  };

  r.get('/admin/reports/usage', { preHandler: staff, schema: { querystring: ZUsageReportQuery, response: { 200: ZUsageReport } } }, async (request) =>
    usageReport(ctx.db, request.query, await prepare(request, request.query)),
  );

  r.get('/admin/reports/usage/csv', { preHandler: staff, schema: { querystring: ZUsageReportCsvQuery } }, async (request, reply) => {
    const { part, ...q } = request.query;
    const report = await usageReport(ctx.db, q, await prepare(request, q));
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="usage-${part}-${q.from}-${q.to}.csv"`)
      .send(reportCsv(report, part));
  });

  // The dashboard's history (the sampler's rows): admins everything, managers their organisation's desktops.
  r.get('/admin/dashboard/history', { preHandler: staff, schema: { querystring: ZDashboardHistoryQuery, response: { 200: ZDashboardHistory } } }, async (request) =>
    dashboardHistory(ctx, request.query.range, boundCategory(request), ctx.clock.now()),
  );
}
