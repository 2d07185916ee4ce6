import { RECYCLE_BIN_GONE_STATUSES, type TRecycleBinItem, type TRecycleBinStatusEvent } from '@vdi/contracts';
import { numberFormat } from '../../i18n/intl';

/** add_recycle_bin: a new (or changed) item; one whose status is gone is removed instead (spec 001 §4). */
export function addItem(list: TRecycleBinItem[] | undefined, item: TRecycleBinItem): TRecycleBinItem[] | undefined {
  if (!list || !item || typeof item.id !== 'string') return list;
  if (RECYCLE_BIN_GONE_STATUSES.includes(item.status)) return list.filter((x) => x.id !== item.id);
  const i = list.findIndex((x) => x.id === item.id);
  if (i < 0) return [item, ...list];
  const next = [...list];
  next[i] = item;
  return next;
}

/** update_recycle_bin / delete_recycle_bin: restored, deleting and deleted leave the list; anything else updates the status. */
export function applyStatus(list: TRecycleBinItem[] | undefined, e: TRecycleBinStatusEvent): TRecycleBinItem[] | undefined {
  if (!list || !e || typeof e.id !== 'string') return list;
  if (RECYCLE_BIN_GONE_STATUSES.includes(e.status)) return list.filter((x) => x.id !== e.id);
  return list.map((x) => (x.id === e.id ? { ...x, status: e.status } : x));
}

/** The retention, humanised in the reader's language: "1 hour", "36 hours", "2 days", "1 week". */
export function humaniseHours(hours: number, lang: string): string {
  const unit = (value: number, u: 'hour' | 'day' | 'week') => numberFormat(lang, { style: 'unit', unit: u, unitDisplay: 'long' }).format(value);
  if (hours >= 168 && hours % 168 === 0) return unit(hours / 168, 'week');
  if (hours >= 48 && hours % 24 === 0) return unit(hours / 24, 'day');
  return unit(hours, 'hour');
}

/** Which i18n label an item type has (`bulk` has its own). */
export const itemTypeKey = (type: string) =>
  ['desktop', 'template', 'deployment', 'user', 'group', 'category', 'bulk'].includes(type) ? `recycle_bin.types.${type}` : 'recycle_bin.types.other';
