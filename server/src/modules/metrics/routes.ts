// GET /metrics: the Prometheus text format, for an installation's monitoring (README "Monitoring").
// What this process counted (HTTP answers, the starts it ran, its database pool, Node's own numbers)
// and the installation's state read from the database at each scrape (desktops by state, the start
// queue, jobs, open viewers, bookings running now, each hypervisor): any process answers those the same.
// Guarded by METRICS_TOKEN (Authorization: Bearer) or METRICS_ALLOW (the scraper's addresses); neither: off.
import { timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { and, count, eq, gt, isNull, lte, min, sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Gauge } from 'prom-client';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { notFound, unauthorized } from '../../http/errors';
import { hypervisorViews } from '../admin/hypervisors/view';

/** Who may scrape: the token, or an allowed address (the request's, as TRUST_PROXY makes it). */
export function scrapeAllowed(config: AppContext['config']['metrics'], request: Pick<FastifyRequest, 'headers' | 'ip'>): 'ok' | 'off' | 'refused' {
  if (!config.token && config.allow.length === 0) return 'off';
  const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (config.token && given) {
    const a = Buffer.from(given);
    const b = Buffer.from(config.token);
    if (a.length === b.length && timingSafeEqual(a, b)) return 'ok';
  }
  if (config.allow.length > 0) {
    const list = new BlockList();
    for (const entry of config.allow) {
      const [address, bits] = entry.split('/');
      const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) list.addAddress(address!, family);
      else list.addSubnet(address!, Number(bits), family);
    }
    const ip = request.ip.replace(/^::ffff:(?=\d+\.)/, '');
    if (isIP(ip) && list.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4')) return 'ok';
  }
  return 'refused';
}

/** The installation's numbers, set from the database at each scrape. */
function installationGauges(ctx: AppContext) {
  const registers = [ctx.metrics.registry];
  const g = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) => new Gauge<L>({ name, help, labelNames, registers });
  const desktops = g('vdi_desktops', 'Desktops of the installation by state', ['state']);
  const queueWaiting = g('vdi_start_queue_waiting', 'Starts waiting in the start queue, per hypervisor', ['hypervisor']);
  const queueRunning = g('vdi_start_queue_running', 'Starts under way (left the queue, machine not up yet), per hypervisor', ['hypervisor']);
  const queueOldest = g('vdi_start_queue_oldest_wait_seconds', 'How long the oldest waiting start has waited, per hypervisor', ['hypervisor']);
  const jobs = g('vdi_jobs', 'Jobs (downloads, template and deployment creation…) by state and kind', ['state', 'kind']);
  const viewers = g('vdi_viewer_connections', 'Viewer connections open now');
  const bookings = g('vdi_bookings_active', 'Bookings running now');
  const hostUp = g('vdi_hypervisor_up', 'Whether the hypervisor answers (1) or not (0)', ['hypervisor']);
  const hostCpu = g('vdi_hypervisor_cpu_used_ratio', "Share of the hypervisor's CPU busy (0–1)", ['hypervisor']);
  const hostMemTotal = g('vdi_hypervisor_memory_bytes', "The hypervisor's memory", ['hypervisor']);
  const hostMemUsed = g('vdi_hypervisor_memory_used_bytes', "The hypervisor's memory in use", ['hypervisor']);
  const hostRunning = g('vdi_hypervisor_desktops_running', 'Desktops running on the hypervisor', ['hypervisor']);
  const pool = g('vdi_database_connections', "This process's database connections by state (open, idle; waiting: queries waiting for one; max: the pool's size)", ['state']);
  const all = [desktops, queueWaiting, queueRunning, queueOldest, jobs, viewers, bookings, hostUp, hostCpu, hostMemTotal, hostMemUsed, hostRunning];
  const d = schema.domains;
  const q = schema.startQueue;
  return async function refresh() {
    const now = new Date();
    const [states, lanes, jobRows, [open], [active], hosts] = await Promise.all([
      ctx.db.select({ state: d.status, n: count() }).from(d).where(eq(d.kind, 'desktop')).groupBy(d.status),
      ctx.db
        .select({ lane: q.lane, waiting: sql<number>`count(*) filter (where ${q.startedAt} is null)`.mapWith(Number), running: sql<number>`count(*) filter (where ${q.startedAt} is not null)`.mapWith(Number), oldest: min(sql`case when ${q.startedAt} is null then ${q.enqueuedAt} end`) })
        .from(q)
        .groupBy(q.lane),
      ctx.db.select({ state: schema.jobs.status, kind: schema.jobs.kind, n: count() }).from(schema.jobs).groupBy(schema.jobs.status, schema.jobs.kind),
      ctx.db.select({ n: count() }).from(schema.viewerConnections).where(isNull(schema.viewerConnections.closedAt)),
      ctx.db.select({ n: count() }).from(schema.bookings).where(and(lte(schema.bookings.start, now), gt(schema.bookings.end, now))),
      hypervisorViews(ctx),
    ]);
    for (const m of all) m.reset();
    for (const s of states) desktops.set({ state: s.state }, s.n);
    for (const l of lanes) {
      queueWaiting.set({ hypervisor: l.lane }, l.waiting);
      queueRunning.set({ hypervisor: l.lane }, l.running);
      const oldest = l.oldest ? new Date(l.oldest as string | Date).getTime() : null;
      queueOldest.set({ hypervisor: l.lane }, oldest === null ? 0 : Math.max(0, (now.getTime() - oldest) / 1000));
    }
    for (const j of jobRows) jobs.set({ state: j.state, kind: j.kind }, j.n);
    viewers.set(open?.n ?? 0);
    bookings.set(active?.n ?? 0);
    for (const h of hosts) {
      const up = h.state === 'Online';
      hostUp.set({ hypervisor: h.id }, up ? 1 : 0);
      if (!up) continue;
      hostCpu.set({ hypervisor: h.id }, h.cpu_used_percent / 100);
      hostMemTotal.set({ hypervisor: h.id }, h.memory_total_mb * 1048576);
      hostMemUsed.set({ hypervisor: h.id }, h.memory_used_mb * 1048576);
      hostRunning.set({ hypervisor: h.id }, h.desktops_running);
    }
    const p = ctx.databasePool();
    pool.set({ state: 'open' }, p.total);
    pool.set({ state: 'idle' }, p.idle);
    pool.set({ state: 'waiting' }, p.waiting);
    pool.set({ state: 'max' }, p.max);
  };
}

export async function metricsRoutes(app: FastifyInstance, ctx: AppContext) {
  const refresh = installationGauges(ctx);
  // Scrapes at once share one reading of the database.
  let reading: Promise<void> | null = null;
  app.get('/metrics', async (request, reply) => {
    const allowed = scrapeAllowed(ctx.config.metrics, request);
    if (allowed === 'off') throw notFound('not_found', 'Monitoring is off: set METRICS_TOKEN or METRICS_ALLOW to scrape /metrics');
    if (allowed === 'refused') throw unauthorized('unauthorized', 'Scraping /metrics needs the monitoring token (Authorization: Bearer) or an allowed address');
    await (reading ??= refresh().finally(() => (reading = null)));
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
}
