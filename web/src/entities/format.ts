import dayjs from 'dayjs';
import { bytesToGb } from '@vdi/contracts';

/** GB with the reader's separators: "1.06", "12". */
export const formatGb = (bytes: number, lang: string): string => formatGbValue(bytes / 1024 ** 3, lang);

/** A size already in GB (quota and used values), rounded the same way. */
export function formatGbValue(gb: number, lang: string): string {
  const fmt = new Intl.NumberFormat(lang, { maximumFractionDigits: 2 });
  const rounded = bytesToGb(gb * 1024 ** 3);
  // A few KB would read "0": say it is under the smallest step instead.
  return rounded === 0 && gb > 0 ? `< ${fmt.format(0.01)}` : fmt.format(rounded);
}

/** Bytes in the closest unit (KB, MB, GB), for progress and throughput. */
export function formatBytes(bytes: number, lang = 'en'): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${new Intl.NumberFormat(lang, { maximumFractionDigits: v < 10 && i > 0 ? 1 : 0 }).format(v)} ${units[i]}`;
}

/** Seconds as h:mm:ss or m:ss. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Local form of the spec: YYYY-MM-DD HH:mm. */
export const formatEpoch = (epoch: number | null | undefined) => (epoch ? dayjs(epoch * 1000).format('YYYY-MM-DD HH:mm') : null);
