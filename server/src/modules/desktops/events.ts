import type { TDesktopEventKind } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { closeUsage, openUsage } from '../usage/record';

/** Who caused an event: a person (`by`), or the system with its reason (DESKTOP_STOP_REASONS, a description code). */
export type EventCause = { by?: { id: string; username: string } | null; reason?: string };

/**
 * Records one fact of a desktop's life at its cause (the lifecycle, the viewers): the console's desktop
 * page shows them as its history. A failed write is logged and never stops what it records (a desktop
 * deleted meanwhile has no history to keep).
 */
export async function recordDesktopEvent(ctx: Pick<AppContext, 'db' | 'log'>, desktopId: string, kind: TDesktopEventKind, cause: EventCause = {}, detail: Record<string, unknown> = {}) {
  await ctx.db
    .insert(schema.desktopEvents)
    .values({
      desktopId,
      kind,
      actorId: cause.by?.id ?? null,
      actorName: cause.by?.username ?? null,
      detail: { ...detail, ...(cause.reason ? { reason: cause.reason } : {}) },
    })
    .catch((err: unknown) => ctx.log.warn({ err, desktop: desktopId, kind }, 'desktop event not recorded'));
  // Usage as it happens (modules/usage): the machine up opens an interval, gone (or failed while up) closes it.
  if (kind === 'started') await openUsage(ctx, desktopId);
  else if (kind === 'stopped' || kind === 'start_failed') await closeUsage(ctx, desktopId);
}
