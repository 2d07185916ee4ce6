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

/**
 * A usage report from the roll-up's sums: the period, the grouping and the organisation the caller may see (null: all).
 * Five statements (PGlite runs them one after the other on its one thread): the groups and the top templates from
 * one reading of the period's sums per key; the series over time from the period's hours (one row each, of the
 * organisation or of the whole installation: totals, steps, concurrency and sign-ins summed here); the peaks; the
 * storage per group; the storage over time.
 */
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
          // Integers (the differences of bigints and the days' numeric sums, cast back): numeric in one piece would make the whole union numeric.
          sql`SELECT ${keyCols}, (desktop_seconds - coalesce(o.desktop, 0))::bigint AS desktop_seconds, (gpu_booked_seconds - coalesce(o.booked, 0))::bigint AS gpu_booked_seconds,
                (gpu_used_seconds - coalesce(o.used, 0))::bigint AS gpu_used_seconds, (usage_months.sign_ins - coalesce(o.signs, 0))::bigint AS sign_ins
              FROM usage_months LEFT JOIN (SELECT user_id, desktop_id, deployment_id, sum(desktop_seconds) AS desktop, sum(gpu_booked_seconds) AS booked,
                  sum(gpu_used_seconds) AS used, sum(sign_ins) AS signs FROM usage_days WHERE ${span('day', p.less.from, p.less.to)} GROUP BY 1, 2, 3) AS o
                USING (user_id, desktop_id, deployment_id)
              WHERE ${span(p.column, p.from, p.to)}${inCategory}
                AND (desktop_seconds, gpu_booked_seconds, gpu_used_seconds, usage_months.sign_ins) <> (coalesce(o.desktop, 0), coalesce(o.booked, 0), coalesce(o.used, 0), coalesce(o.signs, 0))`
        : sql`SELECT ${cols} FROM ${sql.raw(p.table)} WHERE ${span(p.column, p.from, p.to)}${inCategory}`,
    ),
    sql` UNION ALL `,
  )}) AS u`;
  const [key, name] = GROUPING[q.group_by].map((c) => sql.raw(c)) as [SQL, SQL];
  const bucket = sql.raw(`to_char(date_trunc('${step}', hour AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);
  // The sums, peaks and storage per hour keep a row for the whole installation ('*') beside each organisation's.
  const scope = category === null ? sql`category_id = '*'` : sql`category_id = ${category}`;
  // Storage: per group as last sampled in the period, over time the most of each step.
  const storageDays = sql`usage_storage_days WHERE day = (SELECT max(day) FROM usage_storage_days WHERE ${span('day', start, end)}${inCategory})${inCategory}`;

  type Num = string | number | null;
  const [grouped, hourly, peaks, storageRows, storagePoints] = await Promise.all([
    // The period's sums read once, per group key, template and desktop (a few rows per person), then summed per
    // group (the table) and per template (the top templates: its desktops that ran, the seconds of the rows that
    // ran and their template's name, as when counted from the rows themselves).
    rowsOf<{ part: 'group' | 'template'; key: string; name: string; desktop: Num; booked: Num; used: Num; sign_ins: Num; desktops: Num }>(
      db,
      sql`WITH g AS MATERIALIZED (
            SELECT ${key} AS key, max(${name}) AS name, template_id, desktop_id, sum(desktop_seconds)::bigint AS desktop, sum(gpu_booked_seconds)::bigint AS booked,
              sum(gpu_used_seconds)::bigint AS used, sum(sign_ins)::bigint AS sign_ins,
              sum(desktop_seconds) FILTER (WHERE desktop_seconds > 0)::bigint AS ran, max(template_name) FILTER (WHERE desktop_seconds > 0) AS ran_name
            FROM ${source} GROUP BY 1, template_id, desktop_id)
          SELECT * FROM (
            (SELECT 'group' AS part, row_number() OVER (ORDER BY sum(desktop) DESC, max(name)) AS n, key, max(name) AS name,
                sum(desktop) AS desktop, sum(booked) AS booked, sum(used) AS used, sum(sign_ins) AS sign_ins, NULL::bigint AS desktops
              FROM g GROUP BY key ORDER BY 2 LIMIT ${MAX_ROWS})
            UNION ALL
            (SELECT 'template', row_number() OVER (ORDER BY sum(ran) DESC, max(ran_name)), template_id, max(ran_name), sum(ran), NULL, NULL, NULL, count(DISTINCT desktop_id)
              FROM g WHERE template_id <> '' AND ran IS NOT NULL GROUP BY template_id ORDER BY 2 LIMIT ${TOP_TEMPLATES})
          ) AS x ORDER BY part, n`,
    ),
    // One row per hour (the organisation's, or the whole installation's): its step, its day, its sums.
    rowsOf<{ at: string; day: string; desktop: Num; booked: Num; used: Num; sign_ins: Num }>(
      db,
      sql`SELECT ${bucket} AS at, to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, desktop_seconds AS desktop, gpu_booked_seconds AS booked,
            gpu_used_seconds AS used, sign_ins FROM usage_category_hours WHERE ${scope} AND ${span('hour', start, end)} ORDER BY hour`,
    ),
    // The most desktops at once (to the minute) per step, with the earliest minute it was reached in the step.
    rowsOf<{ step: string; desktops: number; reached: string | Date }>(
      db,
      sql`SELECT DISTINCT ON (1) ${bucket} AS step, desktops, at AS reached FROM usage_peak_hours WHERE ${scope} AND ${span('hour', start, end)} ORDER BY 1, desktops DESC, at`,
    ),
    // Per group as last read, with the total over every group and that day.
    rowsOf<{ key: string; name: string; bytes: Num; total: Num; day: string | null }>(
      db,
      sql`SELECT ${key} AS key, max(${name}) AS name, sum(bytes) AS bytes, sum(sum(bytes)) OVER () AS total, to_char(max(day) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
          FROM ${storageDays} GROUP BY ${key} ORDER BY sum(bytes) DESC, 2 LIMIT ${MAX_ROWS}`,
    ),
    rowsOf<{ at: string; bytes: string }>(
      db,
      sql`SELECT ${bucket} AS at, max(bytes) AS bytes FROM usage_storage_hours WHERE ${scope} AND ${span('hour', start, end)} GROUP BY 1 ORDER BY 1`,
    ),
  ]);

  // The hours (in time order, so each step's and each day's are together) summed per step and per day.
  const totals = { desktop: 0, booked: 0, used: 0, signIns: 0 };
  const steps: { at: string; desktop: number; booked: number; used: number }[] = [];
  const signIns: { day: string; sign_ins: number }[] = [];
  const concurrency = new Map<string, { at: string; desktops: number; peak: number }>();
  const stepOf = (at: string) => concurrency.get(at) ?? concurrency.set(at, { at, desktops: 0, peak: 0 }).get(at)!;
  for (const r of hourly) {
    const [desktop, booked, used, signs] = [Number(r.desktop ?? 0), Number(r.booked ?? 0), Number(r.used ?? 0), Number(r.sign_ins ?? 0)];
    totals.desktop += desktop;
    totals.booked += booked;
    totals.used += used;
    totals.signIns += signs;
    const last = steps.at(-1);
    if (last?.at === r.at) {
      last.desktop += desktop;
      last.booked += booked;
      last.used += used;
    } else steps.push({ at: r.at, desktop, booked, used });
    // Concurrent desktops: an hour's desktop seconds / 3600 is the average number running in it; a step shows its busiest hour.
    if (desktop > 0) {
      const c = stepOf(r.at);
      c.desktops = Math.max(c.desktops, Math.round((desktop / 3600) * 1000) / 1000);
    }
    if (signs > 0) {
      const day = signIns.at(-1);
      if (day?.day === r.day) day.sign_ins += signs;
      else signIns.push({ day: r.day, sign_ins: signs });
    }
  }
  // The period's peak: the most at once, first reached earliest.
  let top: (typeof peaks)[number] | undefined;
  for (const r of peaks) {
    stepOf(r.step).peak = Number(r.desktops);
    if (!top || Number(r.desktops) > Number(top.desktops) || (Number(r.desktops) === Number(top.desktops) && new Date(r.reached) < new Date(top.reached))) top = r;
  }
  const peak: TUsageReport['peak'] = top ? { desktops: Number(top.desktops), at: iso(top.reached) } : null;
  const rows = grouped.filter((r) => r.part === 'group');
  const templates = grouped.filter((r) => r.part === 'template');
  return {
    from: q.from,
    to: q.to,
    group_by: q.group_by,
    step,
    totals: { desktop_hours: h(totals.desktop), gpu_booked_hours: h(totals.booked), gpu_used_hours: h(totals.used), sign_ins: totals.signIns },
    rows: rows.map((r) => ({ key: r.key, name: r.name, desktop_hours: h(r.desktop), gpu_booked_hours: h(r.booked), gpu_used_hours: h(r.used), sign_ins: Number(r.sign_ins ?? 0) })),
    hours: steps.map((r) => ({ at: r.at, desktop_hours: h(r.desktop), gpu_booked_hours: h(r.booked), gpu_used_hours: h(r.used) })),
    concurrency: [...concurrency.values()].sort((a, b) => a.at.localeCompare(b.at)),
    peak,
    sign_ins: signIns,
    top_templates: templates.map((r) => ({ key: r.key, name: r.name, desktop_hours: h(r.desktop), desktops: Number(r.desktops) })),
    storage: {
      day: storageRows[0]?.day ?? null,
      bytes: Number(storageRows[0]?.total ?? 0),
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
