import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context';

type Ctx = Pick<AppContext, 'db' | 'log'> & { clock?: AppContext['clock'] };

const nowOf = (ctx: Ctx) => ctx.clock?.now() ?? new Date();

/**
 * For `npm run bench` only (its row "usage recording's cost on the start"): VDI_BENCH_NO_USAGE=1 in the
 * server's environment leaves the intervals unrecorded, so the same start can be timed with and without
 * them (docs/decisions/0032). Not an operator setting: not in config.ts nor the README; never set in service.
 */
const recording = process.env.VDI_BENCH_NO_USAGE !== '1';

/**
 * A desktop's machine is up: one usage interval opens, with the names of its owner, group, organisation,
 * template and deployment as they are now (kept when those are deleted later). Nothing when one is
 * already open (the same start told twice, a machine adopted after a restart: a unique index holds it). A failed write is logged and never stops the start.
 */
export async function openUsage(ctx: Ctx, desktopId: string, at = nowOf(ctx)): Promise<void> {
  if (!recording) return;
  await ctx.db
    .execute(
      sql`INSERT INTO usage_intervals (desktop_id, desktop_name, user_id, username, group_id, group_name, category_id, category_name,
            template_id, template_name, deployment_id, deployment_name, gpu_profile, started_at)
          SELECT d.id, d.name, d.user_id, coalesce(u.username, ''), d.group_id, coalesce(g.name, ''), d.category_id, coalesce(c.name, ''),
            coalesce(d.template_id, ''), coalesce(t.name, ''), coalesce(d.tag, ''), coalesce(p.name, ''),
            nullif(d.hardware->'reservables'->'vgpus'->>0, ''), ${at.toISOString()}::timestamptz
          FROM domains d
          LEFT JOIN users u ON u.id = d.user_id
          LEFT JOIN groups g ON g.id = d.group_id
          LEFT JOIN categories c ON c.id = d.category_id
          LEFT JOIN domains t ON t.id = d.template_id
          LEFT JOIN deployments p ON p.id = d.tag
          WHERE d.id = ${desktopId}
            AND NOT EXISTS (SELECT 1 FROM usage_intervals o WHERE o.desktop_id = d.id AND o.ended_at IS NULL)
          ON CONFLICT (desktop_id) WHERE ended_at IS NULL DO NOTHING`,
    )
    .catch((err: unknown) => ctx.log.warn({ err, desktop: desktopId }, 'usage not recorded'));
}

/** A desktop's machine is gone: its open interval closes (nothing when none is open). */
export async function closeUsage(ctx: Ctx, desktopId: string, at = nowOf(ctx)): Promise<void> {
  if (!recording) return;
  await ctx.db
    .execute(sql`UPDATE usage_intervals SET ended_at = greatest(started_at, ${at.toISOString()}::timestamptz) WHERE desktop_id = ${desktopId} AND ended_at IS NULL`)
    .catch((err: unknown) => ctx.log.warn({ err, desktop: desktopId }, 'usage not recorded'));
}
