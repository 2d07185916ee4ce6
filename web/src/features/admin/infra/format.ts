import { formatBytes } from '../../../entities/format';

/** Megabytes in the closest unit (formatBytes). */
export const formatMb = (mb: number, lang: string) => formatBytes(mb * 1024 * 1024, lang);

/** A share as a whole percent, bounded. */
export const percent = (part: number, whole: number) => (whole > 0 ? Math.max(0, Math.min(100, Math.round((part / whole) * 100))) : 0);
