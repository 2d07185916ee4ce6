import { MEDIA_DOWNLOADING_STATUSES, MEDIA_RETRYABLE_STATUSES, type TMedia, type TMediaStatus } from '@vdi/contracts';

export type StatusLook = { color: string; busy: boolean; tone: 'ok' | 'working' | 'failed' | 'other' };

const LOOK: Partial<Record<TMediaStatus, StatusLook>> = {
  DownloadStarting: { color: 'indigo', busy: true, tone: 'working' },
  Downloading: { color: 'indigo', busy: true, tone: 'working' },
  ResetDownloading: { color: 'indigo', busy: true, tone: 'working' },
  DownloadAborting: { color: 'orange', busy: true, tone: 'working' },
  Downloaded: { color: 'teal', busy: false, tone: 'ok' },
  DownloadFailed: { color: 'red', busy: false, tone: 'failed' },
  DownloadFailedInvalidFormat: { color: 'red', busy: false, tone: 'failed' },
  FailedDeleted: { color: 'red', busy: false, tone: 'failed' },
  Deleting: { color: 'gray', busy: true, tone: 'working' },
  Maintenance: { color: 'grape', busy: true, tone: 'working' },
};
export const KNOWN_STATUSES = Object.keys(LOOK) as TMediaStatus[];

export const statusLook = (status: string): StatusLook => LOOK[status as TMediaStatus] ?? { color: 'gray', busy: false, tone: 'other' };

export type MediaAction = 'abort' | 'retry' | 'new_desktop' | 'delete';

/** What the row offers: abort while downloading, retry when failed, a desktop when ready, delete unless busy deleting. */
export function mediaActions(m: Pick<TMedia, 'status' | 'kind' | 'editable'>): MediaAction[] {
  const out: MediaAction[] = [];
  const s = m.status as TMediaStatus;
  if (m.editable && MEDIA_DOWNLOADING_STATUSES.includes(s)) out.push('abort');
  if (m.editable && MEDIA_RETRYABLE_STATUSES.includes(s)) out.push('retry');
  if (s === 'Downloaded' && m.kind === 'iso') out.push('new_desktop');
  if (m.editable && s !== 'Deleting' && s !== 'DownloadAborting') out.push('delete');
  return out;
}

/** The list search needs two typed letters (spec 000 §5); it looks at names, descriptions and addresses. */
export const SEARCH_MIN = 2;
export function filterMedia(list: TMedia[], text: string): TMedia[] {
  const q = text.trim().toLowerCase();
  if (q.length < SEARCH_MIN) return list;
  return list.filter((m) => [m.name, m.description, m.url, m.user_name ?? ''].some((f) => f.toLowerCase().includes(q)));
}

export function upsertMedia(list: TMedia[] | undefined, m: TMedia): TMedia[] {
  if (!list) return [m];
  const i = list.findIndex((x) => x.id === m.id);
  if (m.status === 'deleted') return i < 0 ? list : list.filter((x) => x.id !== m.id);
  const next = i < 0 ? [...list, m] : list.map((x) => (x.id === m.id ? m : x));
  return next.sort((a, b) => a.name.localeCompare(b.name));
}

export const removeMedia = (list: TMedia[] | undefined, id: string) => (list ?? []).filter((m) => m.id !== id);

/** Media a desktop can boot: downloaded ISOs. */
export const bootable = (list: TMedia[]) => list.filter((m) => m.status === 'Downloaded' && m.kind === 'iso');

/** Hardware choices: memory in 0.5 GB steps, vCPUs and disk in steps of 1, up to the quota. */
export function clampStep(value: number, step: number, min: number, max: number): number {
  const v = Math.round(value / step) * step;
  return Math.min(max, Math.max(min, v));
}
