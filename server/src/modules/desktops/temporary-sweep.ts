import { and, eq, inArray } from 'drizzle-orm';
import { VIEWABLE } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { audit } from '../../audit/record';
import { forgetViewers, viewerState } from '../viewers/activity';
import type { DesktopLifecycle } from './lifecycle';

/**
 * The temporary-desktop inactivity limit (setting `temporary_desktops`): a running temporary
 * desktop with no viewer open for that many minutes — counted from the last viewer closed, else
 * the last viewer opened, else its start — is stopped, which deletes it. Answers how many.
 */
export async function sweepIdleTemporaryDesktops(ctx: AppContext, lifecycle: DesktopLifecycle, now = Date.now()): Promise<number> {
  const { inactivity_minutes } = await ctx.settings.get('temporary_desktops');
  if (inactivity_minutes <= 0) return 0;
  const limit = inactivity_minutes * 60_000;
  const d = schema.domains;
  const rows = await ctx.db
    .select()
    .from(d)
    .where(and(eq(d.kind, 'desktop'), eq(d.persistent, false), inArray(d.status, [...VIEWABLE])));
  let stopped = 0;
  for (const row of rows) {
    const viewers = await viewerState(ctx, row.id);
    if (viewers.open > 0) continue;
    const seen = Math.max(viewers.lastClosed ?? 0, row.accessedAt?.getTime() ?? 0, row.startedAt?.getTime() ?? 0);
    if (now - seen < limit) continue;
    await lifecycle.destroyDesktop(row);
    await forgetViewers(ctx, row.id);
    await audit(ctx.db, { id: null, name: '', role: null, categoryId: row.categoryId, address: null }, {
      action: 'desktop.temporary_expired',
      objectType: 'desktop',
      objectId: row.id,
      objectName: row.name,
      categoryId: row.categoryId,
      detail: { owner_id: row.userId, inactivity_minutes },
    });
    stopped++;
  }
  return stopped;
}

/** Every minute (the limit is in minutes). Answers the function that stops it. */
export function startTemporaryDesktopSweep(ctx: AppContext, lifecycle: DesktopLifecycle, intervalMs = 60_000) {
  let running = false;
  const every = setInterval(() => {
    if (running) return;
    running = true;
    sweepIdleTemporaryDesktops(ctx, lifecycle)
      .then((n) => n > 0 && ctx.log.info({ stopped: n }, 'temporary desktops: idle ones stopped'))
      .catch((err) => ctx.log.error({ err }, 'temporary desktop sweep failed'))
      .finally(() => (running = false));
  }, intervalMs).unref();
  return () => clearInterval(every);
}
