import { lt } from 'drizzle-orm';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';

/** Deletes the entries older than the `audit` setting's retention (0 days: kept for ever). Answers how many. */
export async function sweepAudit(ctx: AppContext, now = Date.now()): Promise<number> {
  const { retention_days } = await ctx.settings.get('audit');
  if (retention_days <= 0) return 0;
  const rows = await ctx.db
    .delete(schema.auditLog)
    .where(lt(schema.auditLog.at, new Date(now - retention_days * 86_400_000)))
    .returning({ id: schema.auditLog.id });
  return rows.length;
}

/**
 * The audit retention job, beside the recycle bin's: soon after start, then every hour (the
 * retention is in days). Answers the function that stops it.
 */
export function startAuditSweep(ctx: AppContext, intervalMs = 3_600_000) {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const n = await sweepAudit(ctx);
      if (n > 0) ctx.log.info({ removed: n }, 'audit log: entries past retention removed');
    } catch (err) {
      ctx.log.error({ err }, 'audit log sweep failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void tick(), Math.min(intervalMs, 10_000)).unref();
  const every = setInterval(() => void tick(), intervalMs).unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
