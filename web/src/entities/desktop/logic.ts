import dayjs from 'dayjs';
import { formatGb, GB } from '../format';
import {
  desktopState,
  sortViewers,
  VIEWERS,
  VIEWERS_NEEDING_IP,
  type TDesktop,
  type TDesktopState,
  type TQueueEvent,
  type TViewer,
} from '@vdi/contracts';

/* ------------------------------------------------------------------ states */

/** States the list shows by their own name (spec core §4 table); the rest show as working. */
const SHOWN_STATES: readonly TDesktopState[] = [
  'notCreated', 'stopped', 'started', 'waitingip', 'paused', 'shutting-down', 'failed', 'maintenance', 'working', 'downloading', 'unknown',
];

export type StateView = {
  /** The state whose label is shown (working for any state outside the table). */
  shown: TDesktopState;
  /** The state itself, for a tooltip when it shows as working. */
  state: TDesktopState;
  color: string;
  /** Something is going on: show a spinner. */
  busy: boolean;
};

const COLORS: Partial<Record<TDesktopState, string>> = {
  started: 'teal',
  waitingip: 'cyan',
  paused: 'yellow',
  stopped: 'gray',
  'shutting-down': 'orange',
  failed: 'red',
  maintenance: 'grape',
  downloading: 'blue',
  unknown: 'gray',
  notCreated: 'gray',
  working: 'indigo',
};

export function stateView(status: string): StateView {
  const state = desktopState(status);
  const shown = SHOWN_STATES.includes(state) ? state : 'working';
  return {
    shown,
    state,
    color: COLORS[shown] ?? 'indigo',
    busy: shown === 'working' || shown === 'shutting-down' || shown === 'downloading' || shown === 'waitingip',
  };
}

/** The desktop is on (what "started only" keeps). */
export const isOn = (state: TDesktopState) => state === 'started' || state === 'waitingip' || state === 'paused' || state === 'shutting-down';

/** A viewer can be asked for. */
export const canOpen = (state: TDesktopState) => state === 'started' || state === 'waitingip';

/* ------------------------------------------------------------------ filter */

/** `shown` gives the name and description as the person reads them (`builtInText`): both are searched. */
export function filterDesktops(desktops: readonly TDesktop[], text: string, startedOnly: boolean, shown: (text: string) => string = (s) => s): TDesktop[] {
  const words = text.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
  return desktops.filter((d) => {
    if (startedOnly && !isOn(desktopState(d.state))) return false;
    if (!words.length) return true;
    const hay = `${d.name} ${d.description} ${shown(d.name)} ${shown(d.description)}`.toLocaleLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/* ------------------------------------------------------------------ view mode and viewer choice, kept locally */

export type ViewMode = 'grid' | 'table';
export const VIEW_KEY = 'vdi.desktops.view';
export const VIEWER_KEY_PREFIX = 'vdi.desktops.viewer.';

function storage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

export function loadViewMode(): ViewMode {
  return storage()?.getItem(VIEW_KEY) === 'table' ? 'table' : 'grid';
}
export function saveViewMode(mode: ViewMode) {
  storage()?.setItem(VIEW_KEY, mode);
}

/** The viewers a desktop offers now, in display order (no address yet: none of those that need one). */
export function availableViewers(d: Pick<TDesktop, 'viewers' | 'state'>): TViewer[] {
  const state = desktopState(d.state);
  const known = d.viewers.filter((v): v is TViewer => (VIEWERS as readonly string[]).includes(v));
  return sortViewers(state === 'waitingip' ? known.filter((v) => !VIEWERS_NEEDING_IP.includes(v)) : known);
}

export function rememberViewer(desktopId: string, viewer: TViewer) {
  storage()?.setItem(VIEWER_KEY_PREFIX + desktopId, viewer);
}

export function forgetViewer(desktopId: string) {
  storage()?.removeItem(VIEWER_KEY_PREFIX + desktopId);
}

/** The remembered viewer when the desktop still offers it, else the first in display order. */
export function chosenViewer(desktopId: string, available: readonly TViewer[]): TViewer | null {
  const saved = storage()?.getItem(VIEWER_KEY_PREFIX + desktopId) as TViewer | null | undefined;
  if (saved && available.includes(saved)) return saved;
  return available[0] ?? null;
}

/* ------------------------------------------------------------------ dates */

/** Server dates come as ISO or "%Y-%m-%dT%H:%M%z" (e.g. 2025-05-01T18:00+0000); null when unreadable. */
export function parseServerDate(value: string | false | null | undefined): Date | null {
  if (!value) return null;
  const iso = value.trim().replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/ /, 'T');
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Local form of the spec: YYYY-MM-DD HH:mm. */
export function formatLocal(value: string | false | null | undefined): string | null {
  const d = parseServerDate(value);
  return d ? dayjs(d).format('YYYY-MM-DD HH:mm') : null;
}

/* ------------------------------------------------------------------ live cache updates */

const byName = (a: TDesktop, b: TDesktop) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || a.id.localeCompare(b.id);

/** A desktop added or changed: replaced in place, or inserted in name order. */
export function upsertDesktop(list: readonly TDesktop[] | undefined, d: TDesktop): TDesktop[] {
  const current = list ?? [];
  const i = current.findIndex((x) => x.id === d.id);
  if (i === -1) return [...current, d].sort(byName);
  const next = [...current];
  next[i] = d;
  return next;
}

export function removeDesktop(list: readonly TDesktop[] | undefined, id: string): TDesktop[] {
  return (list ?? []).filter((d) => d.id !== id);
}

/**
 * The desktop's state as an action answered it, until the live update arrives; only while the
 * state is still the one the action started from (a live update may have come first).
 */
export function withStatus(list: readonly TDesktop[] | undefined, id: string, status: string, from?: string): TDesktop[] | undefined {
  if (!list) return list as undefined;
  return list.map((d) => (d.id === id && (from === undefined || d.state === from) ? { ...d, state: status } : d));
}

/** Queue positions per desktop id. */
export type QueueMap = Record<string, number>;

/**
 * Merges a desktops_queue event: a positive position sets it; an entry whose position is 0 or
 * less, or whose event says it left the queue, removes it.
 */
export function applyQueue(prev: QueueMap, event: TQueueEvent): QueueMap {
  const next = { ...prev };
  for (const [key, entry] of Object.entries(event)) {
    const id = entry.desktop_id || key;
    const left = /^(started|start|removed|remove|dequeued|done|cancel(l)?ed|failed|delete|deleted|leave|left)$/i.test(entry.event);
    if (entry.position > 0 && !left) next[id] = entry.position;
    else delete next[id];
  }
  return next;
}

/** A desktop that is no longer waiting to start leaves the queue. */
export function pruneQueue(prev: QueueMap, d: Pick<TDesktop, 'id' | 'state'>): QueueMap {
  if (!(d.id in prev)) return prev;
  const s = desktopState(d.state);
  if (s === 'starting' || s === 'creating') return prev;
  const next = { ...prev };
  delete next[d.id];
  return next;
}

/** Memory for people: MB under 1 GB, else GB. */
export const memoryLabel = (gb: number, lang = 'en'): { key: 'memory_mb' | 'memory_gb'; value: string } =>
  gb > 0 && gb < 1 ? { key: 'memory_mb', value: new Intl.NumberFormat(lang).format(Math.round(gb * 1024)) } : { key: 'memory_gb', value: formatGb(gb * GB, lang) };

/**
 * When each desktop last changed by a live event (ms). A list fetched before that moment is
 * older news for that desktop: the cached version stays (see mergeFetched).
 */
export const liveStamps = new Map<string, number>();

/**
 * Merges a freshly fetched list into the cache without losing live events that arrived while
 * the fetch was under way: those desktops keep their cached (newer) version; desktops removed
 * live stay removed; desktops added live stay added.
 */
export function mergeFetched(
  cached: readonly TDesktop[] | undefined,
  fetched: readonly TDesktop[],
  fetchStartedAt: number,
  stamps: ReadonlyMap<string, number> = liveStamps,
): TDesktop[] {
  const newer = (id: string) => (stamps.get(id) ?? 0) > fetchStartedAt;
  const byId = new Map((cached ?? []).map((d) => [d.id, d]));
  const out: TDesktop[] = [];
  for (const d of fetched) {
    if (!newer(d.id)) out.push(d);
    else if (byId.has(d.id)) out.push(byId.get(d.id)!);
  }
  for (const d of cached ?? []) if (newer(d.id) && !fetched.some((f) => f.id === d.id)) out.push(d);
  return out.sort(byName);
}
