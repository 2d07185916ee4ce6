/** Bytes with the reader's separators and a unit that keeps the number short (MB, GB, TB). */
export function formatBytes(bytes: number, lang: string): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = Math.max(0, bytes);
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${new Intl.NumberFormat(lang, { maximumFractionDigits: v >= 100 || u === 0 ? 0 : 1 }).format(v)} ${units[u]}`;
}

/** Megabytes as GB with one decimal. */
export const formatMb = (mb: number, lang: string) => formatBytes(mb * 1024 * 1024, lang);

/** A share as a whole percent, bounded. */
export const percent = (part: number, whole: number) => (whole > 0 ? Math.max(0, Math.min(100, Math.round((part / whole) * 100))) : 0);
