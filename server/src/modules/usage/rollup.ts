import { sql } from 'drizzle-orm';
import { ON_HYPERVISOR } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { LOCK_CLASSES } from '../../db';
import { rowsOf } from './query';

type Ctx = Pick<AppContext, 'db' | 'log'>;

/** The roll-up's name in usage_rollups. */
const ROLLUP = 'usage';
/** Statuses whose machine may still run: an open interval of a desktop in another one (or gone) is closed. */
const MAY_RUN = [...ON_HYPERVISOR, 'Unknown'];

const list = (values: readonly string[]) => sql.join(values.map((v) => sql`${v}`), sql`, `);

/**
 * Rolls usage up per hour into usage_hours, from `done_until` (the start of the hour the last run was in)
 * to `now`: desktop seconds and GPU seconds used from the intervals, GPU seconds booked from the bookings,
 * sign-ins from the audit log. Every value is an upsert with GREATEST — the seconds of an hour only grow
 * as time passes — so running it again (after a restart, or in two processes) never counts twice, and the
 * hour under way counts too. One process at a time (a transaction advisory lock; the others skip).
 * Answers whether this call did the work.
 */
export async function rollupUsage(ctx: Ctx, now: Date = new Date()): Promise<boolean> {
  const at = now.toISOString();
  return ctx.db.transaction(async (tx) => {
    const locked = await rowsOf<{ ok: boolean }>(tx, sql`SELECT pg_try_advisory_xact_lock(${LOCK_CLASSES.usageRollup}::int, 0) AS ok`);
    if (!locked[0]?.ok) return false;

    // Intervals whose machine can no longer be running (a process died before the stop was recorded, the desktop deleted).
    await tx.execute(sql`UPDATE usage_intervals i SET ended_at = greatest(i.started_at, ${at}::timestamptz)
      WHERE i.ended_at IS NULL AND NOT EXISTS (SELECT 1 FROM domains d WHERE d.id = i.desktop_id AND d.status IN (${list(MAY_RUN)}))`);

    const state = await rowsOf<{ from: string | Date | null }>(tx, sql`SELECT coalesce(
        (SELECT done_until FROM usage_rollups WHERE name = ${ROLLUP}),
        date_trunc('hour', least(
          (SELECT min(started_at) FROM usage_intervals),
          (SELECT min(at) FROM audit_log WHERE action = 'auth.sign_in'),
          (SELECT min(start) FROM bookings),
          ${at}::timestamptz))) AS from`);
    const from = new Date(state[0]!.from ?? at).toISOString();

    // Desktop seconds and GPU seconds used: each interval cut into the hours it overlaps, up to now.
    await tx.execute(sql`INSERT INTO usage_hours AS u (hour, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name,
        deployment_id, deployment_name, desktop_id, desktop_name, desktop_seconds, gpu_used_seconds)
      SELECT h.hour, max(i.category_id), max(i.category_name), max(i.group_id), max(i.group_name), i.user_id, max(i.username), max(i.template_id), max(i.template_name),
        i.deployment_id, max(i.deployment_name), i.desktop_id, max(i.desktop_name),
        sum(s.seconds)::int, sum(CASE WHEN i.gpu_profile IS NULL THEN 0 ELSE s.seconds END)::int
      FROM usage_intervals i
      CROSS JOIN LATERAL generate_series(date_trunc('hour', greatest(i.started_at, ${from}::timestamptz)), least(coalesce(i.ended_at, ${at}::timestamptz), ${at}::timestamptz), interval '1 hour') AS h(hour)
      CROSS JOIN LATERAL (SELECT round(extract(epoch FROM least(coalesce(i.ended_at, ${at}::timestamptz), ${at}::timestamptz, h.hour + interval '1 hour') - greatest(i.started_at, h.hour)))::int AS seconds) AS s
      WHERE (i.ended_at IS NULL OR i.ended_at > ${from}::timestamptz) AND i.started_at < ${at}::timestamptz AND s.seconds > 0
      GROUP BY h.hour, i.user_id, i.desktop_id, i.deployment_id
      ON CONFLICT (hour, user_id, desktop_id, deployment_id) DO UPDATE SET
        desktop_seconds = greatest(u.desktop_seconds, excluded.desktop_seconds),
        gpu_used_seconds = greatest(u.gpu_used_seconds, excluded.gpu_used_seconds)`);

    // The most desktops running at once per hour (per organisation and '*' for all), to the minute.
    await rollupPeaks(tx, from, at);

    // GPU seconds booked (units × time): a desktop's bookings on its row, a deployment's on the deployment's.
    await tx.execute(sql`INSERT INTO usage_hours AS u (hour, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name,
        deployment_id, deployment_name, desktop_id, desktop_name, gpu_booked_seconds)
      SELECT h.hour, max(x.category_id), max(coalesce(c.name, '')), max(x.group_id), max(coalesce(g.name, '')), x.user_id, max(coalesce(us.username, '')),
        max(x.template_id), max(coalesce(t.name, '')), x.deployment_id, max(coalesce(p.name, '')), x.desktop_id, max(x.desktop_name),
        sum(s.seconds * b.units)::int
      FROM bookings b
      LEFT JOIN domains d ON b.item_type = 'desktop' AND d.id = b.item_id
      LEFT JOIN deployments dp ON b.item_type = 'deployment' AND dp.id = b.item_id
      CROSS JOIN LATERAL (SELECT
          coalesce(d.category_id, dp.category_id) AS category_id, coalesce(d.group_id, dp.group_id) AS group_id,
          coalesce(d.user_id, dp.user_id) AS user_id, coalesce(d.template_id, dp.template_id, '') AS template_id,
          coalesce(d.tag, dp.id, '') AS deployment_id, coalesce(d.id, '') AS desktop_id, coalesce(d.name, '') AS desktop_name) AS x
      LEFT JOIN categories c ON c.id = x.category_id
      LEFT JOIN groups g ON g.id = x.group_id
      LEFT JOIN users us ON us.id = x.user_id
      LEFT JOIN domains t ON t.id = x.template_id
      LEFT JOIN deployments p ON p.id = x.deployment_id
      CROSS JOIN LATERAL generate_series(date_trunc('hour', greatest(b.start, ${from}::timestamptz)), least(b."end", ${at}::timestamptz), interval '1 hour') AS h(hour)
      CROSS JOIN LATERAL (SELECT round(extract(epoch FROM least(b."end", ${at}::timestamptz, h.hour + interval '1 hour') - greatest(b.start, h.hour)))::int AS seconds) AS s
      WHERE b."end" > ${from}::timestamptz AND b.start < ${at}::timestamptz AND x.user_id IS NOT NULL AND s.seconds > 0
      GROUP BY h.hour, x.user_id, x.desktop_id, x.deployment_id
      ON CONFLICT (hour, user_id, desktop_id, deployment_id) DO UPDATE SET gpu_booked_seconds = greatest(u.gpu_booked_seconds, excluded.gpu_booked_seconds)`);

    // Sign-ins per hour and person, from the audit log (append-only: an hour's count only grows).
    await tx.execute(sql`INSERT INTO usage_hours AS u (hour, category_id, category_name, group_id, group_name, user_id, username, sign_ins)
      SELECT date_trunc('hour', a.at), max(coalesce(us.category_id, a.category_id, '')), max(coalesce(c.name, '')), max(coalesce(us.group_id, '')), max(coalesce(g.name, '')),
        a.actor_id, max(coalesce(us.username, a.actor_name)), count(*)::int
      FROM audit_log a
      LEFT JOIN users us ON us.id = a.actor_id
      LEFT JOIN categories c ON c.id = coalesce(us.category_id, a.category_id)
      LEFT JOIN groups g ON g.id = us.group_id
      WHERE a.action = 'auth.sign_in' AND a.actor_id IS NOT NULL AND a.at >= ${from}::timestamptz AND a.at < ${at}::timestamptz
      GROUP BY date_trunc('hour', a.at), a.actor_id
      ON CONFLICT (hour, user_id, desktop_id, deployment_id) DO UPDATE SET sign_ins = greatest(u.sign_ins, excluded.sign_ins)`);

    // The sums the reports read: per hour and organisation, and for all ('*'), replaced for the hours touched; and per
    // month for each key touched since `from` (summed again from its month's hours: exact, however often it runs).
    await tx.execute(sql`INSERT INTO usage_category_hours AS c (hour, category_id, desktop_seconds, gpu_booked_seconds, gpu_used_seconds, sign_ins)
      SELECT hour, CASE WHEN grouping(category_id) = 1 THEN '*' ELSE category_id END, sum(desktop_seconds), sum(gpu_booked_seconds), sum(gpu_used_seconds), sum(sign_ins)
      FROM usage_hours WHERE hour >= ${from}::timestamptz GROUP BY hour, ROLLUP (category_id)
      ON CONFLICT (category_id, hour) DO UPDATE SET desktop_seconds = excluded.desktop_seconds, gpu_booked_seconds = excluded.gpu_booked_seconds,
        gpu_used_seconds = excluded.gpu_used_seconds, sign_ins = excluded.sign_ins`);
    await tx.execute(sql`INSERT INTO usage_months AS m (month, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name,
        deployment_id, deployment_name, desktop_id, desktop_name, desktop_seconds, gpu_booked_seconds, gpu_used_seconds, sign_ins)
      SELECT k.month, max(h.category_id), max(h.category_name), max(h.group_id), max(h.group_name), h.user_id, max(h.username), max(h.template_id), max(h.template_name),
        h.deployment_id, max(h.deployment_name), h.desktop_id, max(h.desktop_name), sum(h.desktop_seconds), sum(h.gpu_booked_seconds), sum(h.gpu_used_seconds), sum(h.sign_ins)
      FROM (SELECT DISTINCT date_trunc('month', hour, 'UTC') AS month, user_id, desktop_id, deployment_id FROM usage_hours WHERE hour >= ${from}::timestamptz) AS k
      JOIN usage_hours h ON h.user_id = k.user_id AND h.desktop_id = k.desktop_id AND h.deployment_id = k.deployment_id
        AND h.hour >= k.month AND h.hour < k.month + interval '1 month'
      GROUP BY k.month, h.user_id, h.desktop_id, h.deployment_id
      ON CONFLICT (month, user_id, desktop_id, deployment_id) DO UPDATE SET category_id = excluded.category_id, category_name = excluded.category_name,
        group_id = excluded.group_id, group_name = excluded.group_name, username = excluded.username, template_id = excluded.template_id,
        template_name = excluded.template_name, deployment_name = excluded.deployment_name, desktop_name = excluded.desktop_name,
        desktop_seconds = excluded.desktop_seconds, gpu_booked_seconds = excluded.gpu_booked_seconds, gpu_used_seconds = excluded.gpu_used_seconds, sign_ins = excluded.sign_ins`);

    // And per UTC day and key, every key of each day touched since `from` (summed again from the day's hours:
    // exact, however often it runs); a report reads whole days from here, the hours only for a partial day.
    await tx.execute(sql`INSERT INTO usage_days AS d (day, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name,
        deployment_id, deployment_name, desktop_id, desktop_name, desktop_seconds, gpu_booked_seconds, gpu_used_seconds, sign_ins)
      SELECT date_trunc('day', hour, 'UTC'), max(category_id), max(category_name), max(group_id), max(group_name), user_id, max(username), max(template_id), max(template_name),
        deployment_id, max(deployment_name), desktop_id, max(desktop_name), sum(desktop_seconds), sum(gpu_booked_seconds), sum(gpu_used_seconds), sum(sign_ins)
      FROM usage_hours WHERE hour >= date_trunc('day', ${from}::timestamptz, 'UTC')
      GROUP BY date_trunc('day', hour, 'UTC'), user_id, desktop_id, deployment_id
      ON CONFLICT (day, user_id, desktop_id, deployment_id) DO UPDATE SET category_id = excluded.category_id, category_name = excluded.category_name,
        group_id = excluded.group_id, group_name = excluded.group_name, username = excluded.username, template_id = excluded.template_id,
        template_name = excluded.template_name, deployment_name = excluded.deployment_name, desktop_name = excluded.desktop_name,
        desktop_seconds = excluded.desktop_seconds, gpu_booked_seconds = excluded.gpu_booked_seconds, gpu_used_seconds = excluded.gpu_used_seconds, sign_ins = excluded.sign_ins`);

    // Storage used now, as the day's and the hour's reading.
    await sampleStorage(tx, at);

    await tx.execute(sql`INSERT INTO usage_rollups (name, done_until) VALUES (${ROLLUP}, date_trunc('hour', ${at}::timestamptz))
      ON CONFLICT (name) DO UPDATE SET done_until = greatest(usage_rollups.done_until, excluded.done_until)`);
    return true;
  });
}

type Tx = Parameters<Parameters<Ctx['db']['transaction']>[0]>[0];

/**
 * The peak of concurrent desktops of each hour from `from` (an hour's start) to `at`: a sweep over the
 * intervals' starts (+1) and ends (−1) in time order (an end before a start at the same instant: a desktop
 * started again is not two), with a marker (0) at each hour's start so an hour without a start or a stop
 * still has its count. Recomputed from the intervals each run: exact however often it runs.
 */
export async function rollupPeaks(tx: Pick<Ctx['db'], 'execute'>, from: string, at: string): Promise<void> {
  await tx.execute(sql`WITH iv AS (
        SELECT category_id, greatest(started_at, ${from}::timestamptz) AS s, least(coalesce(ended_at, ${at}::timestamptz), ${at}::timestamptz) AS e
        FROM usage_intervals WHERE started_at < ${at}::timestamptz AND (ended_at IS NULL OR ended_at > ${from}::timestamptz)),
      ev AS (
        SELECT category_id, s AS t, 1 AS d FROM iv WHERE e > s
        UNION ALL SELECT category_id, e, -1 FROM iv WHERE e > s
        UNION ALL SELECT c.category_id, h.hour, 0 FROM (SELECT DISTINCT category_id FROM iv) c
          CROSS JOIN generate_series(${from}::timestamptz, ${at}::timestamptz, interval '1 hour') AS h(hour)),
      scoped AS (SELECT category_id, t, d FROM ev UNION ALL SELECT '*', t, d FROM ev),
      run AS (SELECT category_id, t, sum(d) OVER (PARTITION BY category_id ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS n FROM scoped)
    INSERT INTO usage_peak_hours AS p (hour, category_id, desktops, at)
      SELECT DISTINCT ON (date_trunc('hour', t, 'UTC'), category_id) date_trunc('hour', t, 'UTC'), category_id, n::int, date_trunc('minute', t, 'UTC')
      FROM run WHERE t < ${at}::timestamptz AND n > 0
      ORDER BY date_trunc('hour', t, 'UTC'), category_id, n DESC, t
    ON CONFLICT (hour, category_id) DO UPDATE SET desktops = excluded.desktops, at = excluded.at`);
}

/**
 * Storage used at `at`: the allocated bytes of the disks of every desktop and template (a disk counted once,
 * under the domain that owns it rather than a duplicate sharing it), per owner, template and deployment,
 * replacing that day's reading; and its sums per organisation and for all ('*'), replacing that hour's.
 */
export async function sampleStorage(tx: Pick<Ctx['db'], 'execute'>, at: string): Promise<void> {
  await tx.execute(sql`DELETE FROM usage_storage_days WHERE day = date_trunc('day', ${at}::timestamptz, 'UTC')`);
  await tx.execute(sql`INSERT INTO usage_storage_days (day, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name, deployment_id, deployment_name, bytes)
    SELECT date_trunc('day', ${at}::timestamptz, 'UTC'), max(x.category_id), max(coalesce(c.name, '')), max(x.group_id), max(coalesce(g.name, '')), x.user_id, max(coalesce(us.username, '')),
      x.template_id, max(coalesce(t.name, '')), x.deployment_id, max(coalesce(p.name, '')), sum(x.bytes)
    FROM (SELECT DISTINCT ON (s.id) s.actual_size AS bytes, d.category_id, d.group_id, d.user_id,
            CASE WHEN d.kind = 'template' THEN d.id ELSE coalesce(d.template_id, '') END AS template_id, coalesce(d.tag, '') AS deployment_id
          FROM storage s JOIN domain_disks dd ON dd.storage_id = s.id JOIN domains d ON d.id = dd.domain_id
          WHERE s.status NOT IN ('deleted', 'failed')
          ORDER BY s.id, (d.duplicate_of_id IS NOT NULL), d.created_at) AS x
    LEFT JOIN categories c ON c.id = x.category_id
    LEFT JOIN groups g ON g.id = x.group_id
    LEFT JOIN users us ON us.id = x.user_id
    LEFT JOIN domains t ON t.id = x.template_id
    LEFT JOIN deployments p ON p.id = x.deployment_id
    GROUP BY x.user_id, x.template_id, x.deployment_id`);
  await tx.execute(sql`DELETE FROM usage_storage_hours WHERE hour = date_trunc('hour', ${at}::timestamptz, 'UTC')`);
  await tx.execute(sql`INSERT INTO usage_storage_hours (hour, category_id, bytes)
    SELECT date_trunc('hour', ${at}::timestamptz, 'UTC'), coalesce(category_id, '*'), sum(bytes) FROM usage_storage_days
    WHERE day = date_trunc('day', ${at}::timestamptz, 'UTC') GROUP BY ROLLUP (category_id)
    HAVING sum(bytes) IS NOT NULL`);
}

/** Every minute; answers the function that stops it. */
export function startUsageRollup(ctx: Ctx & Pick<AppContext, 'clock'>, intervalMs = 60_000) {
  let running = false;
  const every = setInterval(() => {
    if (running) return;
    running = true;
    rollupUsage(ctx, ctx.clock.now())
      .catch((err: unknown) => ctx.log.error({ err }, 'usage roll-up failed'))
      .finally(() => (running = false));
  }, intervalMs).unref();
  return () => clearInterval(every);
}
