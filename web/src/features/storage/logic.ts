import type { TStorageDisk, TStorageEvent } from '@vdi/contracts';

/** Used of total, as a whole percent (spec 001: quota percent is actual divided by virtual). */
export function usagePercent(actual: number, virtual: number): number {
  if (!virtual || virtual <= 0) return 0;
  return Math.min(100, Math.max(0, Math.round((actual / virtual) * 100)));
}

export const usageColor = (percent: number) => (percent >= 90 ? 'red' : percent >= 70 ? 'yellow' : 'teal');

/** The size in bytes after adding `increment` whole GB. */
export const grownSize = (virtualBytes: number, increment: number) => virtualBytes + increment * 1024 ** 3;

/**
 * The increase modal asks how many whole GB to add, as the call takes them (reference `increase/<int:increment>`),
 * and shows the size after. Answers the increment, or null when it is not a whole number of at least 1.
 */
export function incrementOf(addGb: number | string): number | null {
  const n = typeof addGb === 'number' ? addGb : Number(addGb);
  return Number.isInteger(n) && n >= 1 ? n : null;
}

/** A `storage` live event applied to the list: sizes, status and the operation's progress. */
export function applyStorageEvent(list: TStorageDisk[] | undefined, e: TStorageEvent): TStorageDisk[] | undefined {
  if (!list || !e || typeof e.id !== 'string') return list;
  return list.map((d) =>
    d.id !== e.id
      ? d
      : {
          ...d,
          status: e.status,
          actual_size: e.actual_size,
          virtual_size: e.virtual_size,
          operation:
            e.outcome === 'running'
              ? { job_id: e.job_id, kind: 'increase', user_id: e.user_id, progress: e.progress, priority: d.operation?.priority ?? 'low' }
              : null,
        },
  );
}

/** Totals for the summary: disks' used and total bytes. */
export function totals(list: TStorageDisk[]) {
  return list.reduce((acc, d) => ({ actual: acc.actual + d.actual_size, virtual: acc.virtual + d.virtual_size }), { actual: 0, virtual: 0 });
}
