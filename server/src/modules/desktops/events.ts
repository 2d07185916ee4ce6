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

/**
 * Where a page of a desktop's history ends, for the next (older) page: the last line's time in microseconds (the
 * database's precision: two events in one millisecond stay apart), its source (`e` a recorded event, `a` an audit
 * entry, `c` the creation) and its row id. Opaque to the client (base64url); the order it continues is time, then
 * source (e, a, c), then id, all descending.
 */
export type HistoryCursor = { us: bigint; source: 'e' | 'a' | 'c'; id: bigint };
export const HISTORY_SOURCE_RANK = { e: 2, a: 1, c: 0 } as const;

export const encodeHistoryCursor = (c: HistoryCursor) => Buffer.from(`${c.us}~${c.source}~${c.id}`, 'utf8').toString('base64url');

const CURSOR = /^(\d{1,19})~([eac])~(\d{1,19})$/;
/** The cursor a page gave, or null when it is not one (tampered, truncated, of another shape). */
export function decodeHistoryCursor(text: string): HistoryCursor | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const m = CURSOR.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!m) return null;
  const us = BigInt(m[1]!);
  const id = BigInt(m[3]!);
  // Both fit a bigint column (and a timestamp's microseconds).
  if (us > 9_223_372_036_854_775_807n || id > 9_223_372_036_854_775_807n) return null;
  return { us, source: m[2] as HistoryCursor['source'], id };
}

/** Descending history order: a before b when a is newer (then by source rank, then id). */
export function compareHistory(a: HistoryCursor, b: HistoryCursor) {
  if (a.us !== b.us) return a.us > b.us ? -1 : 1;
  const r = HISTORY_SOURCE_RANK[b.source] - HISTORY_SOURCE_RANK[a.source];
  if (r !== 0) return r;
  return a.id === b.id ? 0 : a.id > b.id ? -1 : 1;
}
