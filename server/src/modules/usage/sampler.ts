import { and, count, eq, gte, inArray, lt } from 'drizzle-orm';
import { ON_HYPERVISOR, type TDashboardHistory } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { hypervisorViews } from '../admin/hypervisors/view';

const MINUTE = 60_000;
/** How long the dashboard's history is kept: the longest range it draws (a day) and a step more. The
 *  reports read the hourly usage rows (usage_hours and its sums), kept for years: nothing here is needed after. */
export const SAMPLES_KEPT_MS = 86_400_000 + 5 * MINUTE;
const pct = (used: number, total: number) => (total > 0 ? Math.round((used / total) * 1000) / 10 : 0);

/**
 * One row for the minute `now` is in: nothing when another process (or an earlier call) wrote it already
 * (its key is the minute), so the history has one row a minute however many processes sample. Older
 * rows than SAMPLES_KEPT_MS go. Answers whether it wrote one.
 */
export async function sampleMetrics(ctx: AppContext, now = new Date()): Promise<boolean> {
  const at = new Date(Math.floor(now.getTime() / MINUTE) * MINUTE);
  const s = schema.metricSamples;
  if ((await ctx.db.select({ at: s.at }).from(s).where(eq(s.at, at))).length > 0) return false;
  const d = schema.domains;
  const e = schema.desktopEvents;
  const [running, starts, [queued], hosts] = await Promise.all([
    ctx.db.select({ category: d.categoryId, n: count() }).from(d).where(and(eq(d.kind, 'desktop'), inArray(d.status, [...ON_HYPERVISOR]))).groupBy(d.categoryId),
    ctx.db
      .select({ category: d.categoryId, n: count() })
      .from(e)
      .innerJoin(d, eq(d.id, e.desktopId))
      .where(and(eq(e.kind, 'start'), gte(e.at, new Date(at.getTime() - MINUTE)), lt(e.at, at)))
      .groupBy(d.categoryId),
    ctx.db.select({ n: count() }).from(schema.startQueue),
    hypervisorViews(ctx).catch(() => []),
  ]);
  const written = await ctx.db
    .insert(s)
    .values({
      at,
      running: Object.fromEntries(running.map((r) => [r.category, r.n])),
      starts: Object.fromEntries(starts.map((r) => [r.category, r.n])),
      queued: queued?.n ?? 0,
      hypervisors: hosts.map((h) => ({ id: h.id, name: h.name, cpu_percent: h.cpu_used_percent, memory_percent: pct(h.memory_used_mb, h.memory_total_mb) })),
    })
    .onConflictDoNothing()
    .returning({ at: s.at });
  await ctx.db.delete(s).where(lt(s.at, new Date(at.getTime() - SAMPLES_KEPT_MS)));
  return written.length > 0;
}

/** Samples every 20 s (the first process to reach a minute writes it); answers the function that stops it. */
export function startMetricSampler(ctx: AppContext, intervalMs = 20_000) {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    sampleMetrics(ctx)
      .catch((err: unknown) => ctx.log.warn({ err }, 'dashboard sample not written'))
      .finally(() => (running = false));
  };
  const first = setTimeout(tick, 1_000);
  first.unref();
  const every = setInterval(tick, intervalMs).unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}

/** The last hour (each minute) or day (five-minute steps: the most of each) of the history; a manager's: their organisation's desktops only. */
export async function dashboardHistory(ctx: AppContext, range: 'hour' | 'day', category: string | null, now = new Date()): Promise<TDashboardHistory> {
  const s = schema.metricSamples;
  const step = range === 'hour' ? MINUTE : 5 * MINUTE;
  const since = new Date(now.getTime() - (range === 'hour' ? 3_600_000 : 86_400_000));
  const rows = await ctx.db.select().from(s).where(gte(s.at, since)).orderBy(s.at);
  const sum = (m: Record<string, number>) => (category === null ? Object.values(m).reduce((a, b) => a + b, 0) : (m[category] ?? 0));
  type Point = TDashboardHistory['points'][number];
  const points = new Map<string, Point>();
  const hosts = new Map<string, { id: string; name: string; points: Map<string, { at: string; cpu_percent: number; memory_percent: number }> }>();
  for (const r of rows) {
    const at = new Date(Math.floor(r.at.getTime() / step) * step).toISOString();
    const p = points.get(at);
    const next = { at, running: sum(r.running), starts: sum(r.starts), queued: category === null ? r.queued : null };
    points.set(at, p ? { at, running: Math.max(p.running, next.running), starts: Math.max(p.starts, next.starts), queued: p.queued === null ? null : Math.max(p.queued, next.queued ?? 0) } : next);
    if (category !== null) continue;
    for (const h of r.hypervisors) {
      const host = hosts.get(h.id) ?? { id: h.id, name: h.name, points: new Map() };
      hosts.set(h.id, host);
      const q = host.points.get(at);
      host.points.set(at, { at, cpu_percent: Math.max(q?.cpu_percent ?? 0, h.cpu_percent), memory_percent: Math.max(q?.memory_percent ?? 0, h.memory_percent) });
    }
  }
  return { range, points: [...points.values()], hypervisors: [...hosts.values()].map((h) => ({ id: h.id, name: h.name, points: [...h.points.values()] })) };
}

