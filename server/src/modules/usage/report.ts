import { sql, type SQL } from 'drizzle-orm';
import { REPORT_MAX_YEARS, type TReportGrouping, type TReportPart, type TUsageReport, type TUsageReportQuery } from '@vdi/contracts';
import type { Db } from '../../db';
import { badRequest } from '../../http/errors';
import { csvFile } from '../../http/csv';
import { rowsOf } from './query';

/** The columns of usage_hours that key and name each grouping. */
const GROUPING: Record<TReportGrouping, [string, string]> = {
  organisation: ['category_id', 'category_name'],
  group: ['group_id', 'group_name'],
  user: ['user_id', 'username'],
  template: ['template_id', 'template_name'],
  deployment: ['deployment_id', 'deployment_name'],
};
/** How many top templates a report lists. */
const TOP_TEMPLATES = 10;
/** How many groups a report lists. */
const MAX_ROWS = 500;
/** Periods up to this many days are drawn per hour, longer ones per day. */
const HOURLY_UP_TO_DAYS = 3;

const DAY_MS = 86_400_000;
const h = (seconds: unknown) => Math.round((Number(seconds ?? 0) / 3600) * 1000) / 1000;
const iso = (v: unknown) => new Date(v as string).toISOString();

/** The period's bounds as instants: from the first day's start to the day after the last (UTC); refused when reversed or too long. */
export function reportPeriod(q: Pick<TUsageReportQuery, 'from' | 'to'>): { start: Date; end: Date } {
  const start = new Date(`${q.from}T00:00:00Z`);
  const end = new Date(new Date(`${q.to}T00:00:00Z`).getTime() + DAY_MS);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()) || end <= start) throw badRequest('report_period_invalid', 'The period must end on or after its start');
  const limit = new Date(start);
  limit.setUTCFullYear(limit.getUTCFullYear() + REPORT_MAX_YEARS);
  if (end > limit) throw badRequest('report_period_too_long', `A report covers at most ${REPORT_MAX_YEARS} years`, { max_years: REPORT_MAX_YEARS });
  return { start, end };
}

/** The whole months inside [start, end) (UTC): the first month start at or after `start`, the last at or before `end`. */
function wholeMonths(start: Date, end: Date): [Date, Date] {
  const first = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + (start.getUTCDate() === 1 && start.getTime() % DAY_MS === 0 ? 0 : 1), 1));
  const last = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), 1));
  return [first, last];
}

/** The whole days inside [start, end) (UTC): the first day start at or after `start`, the last at or before `end`. */
function wholeDays(start: Date, end: Date): [Date, Date] {
  return [new Date(Math.ceil(start.getTime() / DAY_MS) * DAY_MS), new Date(Math.floor(end.getTime() / DAY_MS) * DAY_MS)];
}

type Piece = { table: 'usage_months' | 'usage_days' | 'usage_hours'; column: 'month' | 'day' | 'hour'; from: Date; to: Date; less?: { from: Date; to: Date } };

/**
 * The pieces [table, column, from, to) that cover [start, end) exactly, each from the coarsest sums that fit:
 * whole months from usage_months, the whole days around them from usage_days, the hours of a partial day
 * from usage_hours (none for a report's periods, which are whole days). A partial month beside whole ones
 * with fewer days outside the period than inside is its month less those days (`less`, from usage_days:
 * a month's sums are those of its days): the 365 days to yesterday read about as many rows as 12 months.
 */
export function reportPieces(start: Date, end: Date): Piece[] {
  const pieces: Piece[] = [];
  const add = (table: Piece['table'], column: Piece['column'], from: Date, to: Date) => {
    if (from < to) pieces.push({ table, column, from, to });
  };
  const month = (d: Date, n: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
  const [d1, d2] = wholeDays(start, end);
  if (d1 >= d2) {
    add('usage_hours', 'hour', start, end);
    return pieces;
  }
  add('usage_hours', 'hour', start, d1);
  const [m1, m2] = wholeMonths(d1, d2);
  if (m1 < m2) {
    const before = month(m1, -1);
    if (d1 > before && d1.getTime() - before.getTime() < m1.getTime() - d1.getTime()) pieces.push({ table: 'usage_months', column: 'month', from: before, to: m1, less: { from: before, to: d1 } });
    else add('usage_days', 'day', d1, m1);
    add('usage_months', 'month', m1, m2);
    const after = month(m2, 1);
    if (d2 > m2 && after.getTime() - d2.getTime() < d2.getTime() - m2.getTime()) pieces.push({ table: 'usage_months', column: 'month', from: m2, to: after, less: { from: d2, to: after } });
    else add('usage_days', 'day', m2, d2);
  } else add('usage_days', 'day', d1, d2);
  add('usage_hours', 'hour', d2, end);
  return pieces;
}

/** A usage report from usage_hours: the period, the grouping and the organisation the caller may see (null: all). */
export async function usageReport(db: Db, q: TUsageReportQuery, category: string | null): Promise<TUsageReport> {
  const { start, end } = reportPeriod(q);
  const step = end.getTime() - start.getTime() <= HOURLY_UP_TO_DAYS * DAY_MS ? 'hour' : 'day';
  const inCategory = category === null ? sql`` : sql` AND category_id = ${category}`;
  const span = (col: string, a: Date, b: Date) => sql`${sql.raw(col)} >= ${a.toISOString()}::timestamptz AND ${sql.raw(col)} < ${b.toISOString()}::timestamptz`;
  // Per key: whole months from usage_months, the whole days around them from usage_days, a partial day's hours from usage_hours.
  const keyCols = sql.raw('category_id, category_name, group_id, group_name, user_id, username, template_id, template_name, deployment_id, deployment_name, desktop_id');
  const cols = sql`${keyCols}, desktop_seconds, gpu_booked_seconds, gpu_used_seconds, sign_ins`;
  const source = sql`(${sql.join(
    reportPieces(start, end).map((p) =>
      p.less
        ? // A month less the days outside the period, per key (the month's names and organisation, as for a whole month).
          sql`SELECT ${keyCols}, desktop_seconds - coalesce(o.desktop, 0) AS desktop_seconds, gpu_booked_seconds - coalesce(o.booked, 0) AS gpu_booked_seconds,
                gpu_used_seconds - coalesce(o.used, 0) AS gpu_used_seconds, usage_months.sign_ins - coalesce(o.signs, 0) AS sign_ins
              FROM usage_months LEFT JOIN (SELECT user_id, desktop_id, deployment_id, sum(desktop_seconds) AS desktop, sum(gpu_booked_seconds) AS booked,
                  sum(gpu_used_seconds) AS used, sum(sign_ins) AS signs FROM usage_days WHERE ${span('day', p.less.from, p.less.to)} GROUP BY 1, 2, 3) AS o
                USING (user_id, desktop_id, deployment_id)
              WHERE ${span(p.column, p.from, p.to)}${inCategory}
                AND (desktop_seconds, gpu_booked_seconds, gpu_used_seconds, usage_months.sign_ins) <> (coalesce(o.desktop, 0), coalesce(o.booked, 0), coalesce(o.used, 0), coalesce(o.signs, 0))`
        : sql`SELECT ${cols} FROM ${sql.raw(p.table)} WHERE ${span(p.column, p.from, p.to)}${inCategory}`,
    ),
    sql` UNION ALL `,
  )}) AS u`;
  // Over time: the sums per hour and organisation.
  const series = sql`usage_category_hours WHERE ${span('hour', start, end)}${inCategory}`;
  const [key, name] = GROUPING[q.group_by].map((c) => sql.raw(c)) as [SQL, SQL];
  const bucket = sql.raw(`to_char(date_trunc('${step}', hour AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);
  const sums = sql`sum(desktop_seconds) AS desktop, sum(gpu_booked_seconds) AS booked, sum(gpu_used_seconds) AS used, sum(sign_ins) AS sign_ins`;
  type Sums = { desktop: string | null; booked: string | null; used: string | null; sign_ins: string | null };

  // Storage: per group as last sampled in the period, over time the most of each step.
  const storageDays = sql`usage_storage_days WHERE day = (SELECT max(day) FROM usage_storage_days WHERE ${span('day', start, end)}${inCategory})${inCategory}`;
  // The peaks and the storage per hour keep a row for the whole installation ('*') beside each organisation's.
  const peakScope = category === null ? sql`category_id = '*'` : sql`category_id = ${category}`;

  const [totals, rows, steps, hourly, signIns, templates, peaks, stepPeaks, storageRows, storageTotal, storagePoints] = await Promise.all([
    rowsOf<Sums>(db, sql`SELECT ${sums} FROM ${series}`),
    rowsOf<Sums & { key: string; name: string }>(db, sql`SELECT ${key} AS key, max(${name}) AS name, ${sums} FROM ${source} GROUP BY ${key} ORDER BY sum(desktop_seconds) DESC, 2 LIMIT ${MAX_ROWS}`),
    rowsOf<Sums & { at: string }>(db, sql`SELECT ${bucket} AS at, ${sums} FROM ${series} GROUP BY 1 ORDER BY 1`),
    // Concurrent desktops: an hour's desktop seconds / 3600 is the average number running in it.
    rowsOf<{ at: string; hour: string; seconds: string }>(db, sql`SELECT ${bucket} AS at, hour, sum(desktop_seconds) AS seconds FROM ${series} AND desktop_seconds > 0 GROUP BY hour ORDER BY hour`),
    rowsOf<{ day: string; n: string }>(db, sql`SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(sign_ins) AS n FROM ${series} AND sign_ins > 0 GROUP BY 1 ORDER BY 1`),
    rowsOf<{ key: string; name: string; desktop: string; desktops: string }>(
      db,
      sql`SELECT template_id AS key, max(template_name) AS name, sum(desktop_seconds) AS desktop, count(DISTINCT desktop_id) AS desktops
          FROM ${source} WHERE template_id <> '' AND desktop_seconds > 0 GROUP BY template_id ORDER BY sum(desktop_seconds) DESC, 2 LIMIT ${TOP_TEMPLATES}`,
    ),
    // The most desktops at once (to the minute), the earliest minute it was reached.
    rowsOf<{ desktops: number; at: string | Date }>(db, sql`SELECT desktops, at FROM usage_peak_hours WHERE ${peakScope} AND ${span('hour', start, end)} ORDER BY desktops DESC, at LIMIT 1`),
    rowsOf<{ at: string; desktops: number }>(db, sql`SELECT ${bucket} AS at, max(desktops) AS desktops FROM usage_peak_hours WHERE ${peakScope} AND ${span('hour', start, end)} GROUP BY 1`),
    rowsOf<{ key: string; name: string; bytes: string }>(db, sql`SELECT ${key} AS key, max(${name}) AS name, sum(bytes) AS bytes FROM ${storageDays} GROUP BY ${key} ORDER BY sum(bytes) DESC, 2 LIMIT ${MAX_ROWS}`),
    rowsOf<{ day: string | null; bytes: string | null }>(db, sql`SELECT to_char(max(day) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(bytes) AS bytes FROM ${storageDays}`),
    rowsOf<{ at: string; bytes: string }>(
      db,
      sql`SELECT ${bucket} AS at, max(bytes) AS bytes FROM usage_storage_hours WHERE ${peakScope} AND ${span('hour', start, end)} GROUP BY 1 ORDER BY 1`,
    ),
  ]);

  const concurrency = new Map<string, { at: string; desktops: number; peak: number }>();
  const stepOf = (at: string) => concurrency.get(at) ?? concurrency.set(at, { at, desktops: 0, peak: 0 }).get(at)!;
  for (const r of hourly) {
    const c = stepOf(r.at);
    c.desktops = Math.max(c.desktops, Math.round((Number(r.seconds) / 3600) * 1000) / 1000);
  }
  for (const r of stepPeaks) stepOf(r.at).peak = Number(r.desktops);
  const peak: TUsageReport['peak'] = peaks[0] ? { desktops: Number(peaks[0].desktops), at: iso(peaks[0].at) } : null;
  const t = totals[0];
  return {
    from: q.from,
    to: q.to,
    group_by: q.group_by,
    step,
    totals: { desktop_hours: h(t?.desktop), gpu_booked_hours: h(t?.booked), gpu_used_hours: h(t?.used), sign_ins: Number(t?.sign_ins ?? 0) },
    rows: rows.map((r) => ({ key: r.key, name: r.name, desktop_hours: h(r.desktop), gpu_booked_hours: h(r.booked), gpu_used_hours: h(r.used), sign_ins: Number(r.sign_ins ?? 0) })),
    hours: steps.map((r) => ({ at: r.at, desktop_hours: h(r.desktop), gpu_booked_hours: h(r.booked), gpu_used_hours: h(r.used) })),
    concurrency: [...concurrency.values()].sort((a, b) => a.at.localeCompare(b.at)),
    peak,
    sign_ins: signIns.map((r) => ({ day: r.day, sign_ins: Number(r.n) })),
    top_templates: templates.map((r) => ({ key: r.key, name: r.name, desktop_hours: h(r.desktop), desktops: Number(r.desktops) })),
    storage: {
      day: storageTotal[0]?.day ?? null,
      bytes: Number(storageTotal[0]?.bytes ?? 0),
      points: storagePoints.map((r) => ({ at: r.at, bytes: Number(r.bytes) })),
      rows: storageRows.map((r) => ({ key: r.key, name: r.name, bytes: Number(r.bytes) })),
    },
  };
}

/** One part of a report as a CSV file (UTF-8 with its mark, for spreadsheets). */
export function reportCsv(report: TUsageReport, part: TReportPart): string {
  const table: unknown[][] =
    part === 'desktop_hours'
      ? [[report.group_by, 'name', 'desktop_hours', 'gpu_booked_hours', 'gpu_used_hours', 'sign_ins'], ...report.rows.map((r) => [r.key, r.name, r.desktop_hours, r.gpu_booked_hours, r.gpu_used_hours, r.sign_ins])]
      : part === 'concurrency'
        ? [['at', 'concurrent_desktops', 'most_at_once'], ...report.concurrency.map((r) => [r.at, r.desktops, r.peak])]
        : part === 'gpu'
          ? [['at', 'desktop_hours', 'gpu_booked_hours', 'gpu_used_hours'], ...report.hours.map((r) => [r.at, r.desktop_hours, r.gpu_booked_hours, r.gpu_used_hours])]
          : part === 'sign_ins'
            ? [['day', 'sign_ins'], ...report.sign_ins.map((r) => [r.day, r.sign_ins])]
            : part === 'storage'
              ? [['at', 'storage_bytes'], ...report.storage.points.map((r) => [r.at, r.bytes])]
              : part === 'storage_by_group'
                ? [[report.group_by, 'name', 'storage_bytes'], ...report.storage.rows.map((r) => [r.key, r.name, r.bytes])]
                : [['template', 'name', 'desktop_hours', 'desktops'], ...report.top_templates.map((r) => [r.key, r.name, r.desktop_hours, r.desktops])];
  return `\uFEFF${csvFile(table)}`;
}
