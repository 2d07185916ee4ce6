import { z } from 'zod';

/** What a usage report is grouped by. */
export const REPORT_GROUPINGS = ['organisation', 'group', 'user', 'template', 'deployment'] as const;
export type TReportGrouping = (typeof REPORT_GROUPINGS)[number];
/** The parts of a usage report, each also a CSV file. */
export const REPORT_PARTS = ['desktop_hours', 'concurrency', 'gpu', 'sign_ins', 'top_templates', 'storage', 'storage_by_group'] as const;
export type TReportPart = (typeof REPORT_PARTS)[number];
/** The longest period a report covers, in years. */
export const REPORT_MAX_YEARS = 10;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
/** A report's period: whole days (UTC), both included; a grouping; admins may name one organisation. */
export const ZUsageReportQuery = z
  .object({
    from: day,
    to: day,
    group_by: z.enum(REPORT_GROUPINGS).default('organisation'),
    category: z.string().min(1).max(64).optional(),
  })
  .strict();
export type TUsageReportQuery = z.infer<typeof ZUsageReportQuery>;
export const ZUsageReportCsvQuery = ZUsageReportQuery.extend({ part: z.enum(REPORT_PARTS) }).strict();
export type TUsageReportCsvQuery = z.infer<typeof ZUsageReportCsvQuery>;

const hours = z.number();
export const ZUsageReportRow = z.object({
  /** The group's id ('' for none, e.g. desktops without a deployment) and its name as last recorded. */
  key: z.string(),
  name: z.string(),
  desktop_hours: hours,
  gpu_booked_hours: hours,
  gpu_used_hours: hours,
  sign_ins: z.number().int(),
});
export type TUsageReportRow = z.infer<typeof ZUsageReportRow>;

export const ZUsageReport = z.object({
  from: z.string(),
  to: z.string(),
  group_by: z.enum(REPORT_GROUPINGS),
  /** The points' step: an hour (periods up to 3 days) or a day. */
  step: z.enum(['hour', 'day']),
  totals: ZUsageReportRow.omit({ key: true, name: true }),
  /** Per group, most desktop hours first. */
  rows: z.array(ZUsageReportRow),
  /** Per step: desktop hours, GPU hours booked and used. */
  hours: z.array(z.object({ at: z.string(), desktop_hours: hours, gpu_booked_hours: hours, gpu_used_hours: hours })),
  /** Concurrent desktops per step: the busiest hour's average in the step, and the most at once in it (to the minute). */
  concurrency: z.array(z.object({ at: z.string(), desktops: z.number(), peak: z.number().int() })),
  /** The most desktops running at once in the period, and the minute it was first reached. */
  peak: z.object({ desktops: z.number(), at: z.string() }).nullable(),
  sign_ins: z.array(z.object({ day: z.string(), sign_ins: z.number().int() })),
  top_templates: z.array(z.object({ key: z.string(), name: z.string(), desktop_hours: hours, desktops: z.number().int() })),
  /**
   * Storage used (desktops' and templates' disks, bytes allocated): per step the most of the step, and per
   * group as last sampled in the period (`day`: that sample's day, null when none was taken in the period).
   */
  storage: z.object({
    day: z.string().nullable(),
    bytes: z.number(),
    points: z.array(z.object({ at: z.string(), bytes: z.number() })),
    rows: z.array(z.object({ key: z.string(), name: z.string(), bytes: z.number() })),
  }),
});
export type TUsageReport = z.infer<typeof ZUsageReport>;

/** The dashboard's history: the last hour (a point a minute) or day (a point every five minutes). */
export const DASHBOARD_RANGES = ['hour', 'day'] as const;
export const ZDashboardHistoryQuery = z.object({ range: z.enum(DASHBOARD_RANGES).default('hour') }).strict();
export const ZDashboardHistory = z.object({
  range: z.enum(DASHBOARD_RANGES),
  /** Running desktops, starts asked in the minute (the most in a five-minute step), the start queue's length (admins only: null for managers). */
  points: z.array(z.object({ at: z.string(), running: z.number().int(), starts: z.number().int(), queued: z.number().int().nullable() })),
  /** Each hypervisor's CPU and memory used, in percent (admins only). */
  hypervisors: z.array(z.object({ id: z.string(), name: z.string(), points: z.array(z.object({ at: z.string(), cpu_percent: z.number(), memory_percent: z.number() })) })),
});
export type TDashboardHistory = z.infer<typeof ZDashboardHistory>;
