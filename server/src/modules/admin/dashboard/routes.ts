import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, countDistinct, eq, gt, isNull, lt, type SQL } from 'drizzle-orm';
import { ZAdminDashboard, type TAdminDashboard } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { authOf } from '../../../http/guard';
import { boundCategory, peopleGuards } from '../people/scope';
import { listAudit } from '../audit/list';
import { runningOf } from '../../quotas/usage';
import { busyJobs } from '../jobs/routes';
import { hypervisorViews } from '../hypervisors/view';

/** How many audit entries the dashboard shows. */
const AUDIT_ENTRIES = 8;

/**
 * The first screen of the console: who is signed in, what runs, the hypervisors' load (admins),
 * today's bookings, busy jobs and the latest audit entries. Managers get their category's numbers.
 */
export async function adminDashboardRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);

  r.get('/admin/dashboard', { preHandler: staff, schema: { response: { 200: ZAdminDashboard } } }, async (request): Promise<TAdminDashboard> => {
    const { db } = ctx;
    const bound = boundCategory(request);
    const now = ctx.clock.now();
    const dayStart = new Date(now);
    dayStart.setHours(0, 0, 0, 0);
    const dayEnd = new Date(dayStart.getTime() + 86_400_000);
    const inCategory = (col: typeof schema.users.categoryId | typeof schema.domains.categoryId): SQL | undefined => (bound === null ? undefined : eq(col, bound));
    const s = schema.sessions;
    const u = schema.users;
    const d = schema.domains;
    const b = schema.bookings;

    const [[online], [users], [desktops], running, [bookings], jobs, audit, hypervisors] = await Promise.all([
      db
        .select({ n: countDistinct(s.userId) })
        .from(s)
        .innerJoin(u, eq(u.id, s.userId))
        .where(and(isNull(s.revokedAt), gt(s.expiresAt, now), gt(s.maxTimeAt, now), inCategory(u.categoryId))),
      db.select({ n: count() }).from(u).where(and(isNull(u.deletedAt), inCategory(u.categoryId))),
      db.select({ n: count() }).from(d).where(and(eq(d.kind, 'desktop'), inCategory(d.categoryId))),
      runningOf(db, bound === null ? {} : { categoryId: bound }),
      db
        .select({ n: count() })
        .from(b)
        .innerJoin(u, eq(u.id, b.userId))
        .where(and(lt(b.start, dayEnd), gt(b.end, dayStart), inCategory(u.categoryId))),
      busyJobs(db, bound),
      listAudit(db, authOf(request), { page: 1, per_page: AUDIT_ENTRIES }),
      // Managers see no hypervisor.
      bound === null ? hypervisorViews(ctx) : Promise.resolve(null),
    ]);
    const up = hypervisors?.filter((h) => h.state === 'Online') ?? [];
    return {
      category: bound,
      users_online: Number(online?.n ?? 0),
      users_total: Number(users?.n ?? 0),
      desktops_running: running.count,
      desktops_total: Number(desktops?.n ?? 0),
      hypervisors: hypervisors
        ? {
            online: up.length,
            accepting: up.filter((h) => h.accepts_starts).length,
            total: hypervisors.length,
            cpu_used_percent: up.length ? Math.round((up.reduce((a, h) => a + h.cpu_used_percent, 0) / up.length) * 10) / 10 : 0,
            load: up.reduce((a, h) => a + (h.load[0] ?? 0), 0),
            memory_used_mb: up.reduce((a, h) => a + h.memory_used_mb, 0),
            memory_total_mb: up.reduce((a, h) => a + h.memory_total_mb, 0),
          }
        : null,
      bookings_today: Number(bookings?.n ?? 0),
      jobs_busy: jobs,
      audit: audit.items,
      at: new Date().toISOString(),
    };
  });
}
