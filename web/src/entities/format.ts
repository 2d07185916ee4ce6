import dayjs from 'dayjs';

export const GB = 1024 ** 3;

/**
 * Sizes in GB (bytes / 1024³, spec 001 §9) with the reader's separators, at most two decimals
 * ("1.06", "12.5", "1,5"); a few KB read "< 0.01", not "0". Every size and memory shown in GB.
 */
export function formatGb(bytes: number, lang = 'en'): string {
  const fmt = new Intl.NumberFormat(lang, { maximumFractionDigits: 2 });
  const gb = Math.max(0, bytes) / GB;
  return gb > 0 && gb < 0.005 ? `< ${fmt.format(0.01)}` : fmt.format(gb);
}

/** Bytes in the closest unit (B, KB, MB, GB…) with the reader's separators: one decimal under 10 of a unit ("6.5 MB"), whole from 10 ("300 KB"). */
export function formatBytes(bytes: number, lang = 'en'): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = Math.max(0, bytes);
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
