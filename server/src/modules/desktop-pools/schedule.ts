import type { TPoolGiveBack, TPoolScheduleRow } from '@vdi/contracts';

/** Weekday 1 = Monday … 7 = Sunday, and minutes since midnight, of `at` in the server's local time. */
export function localClock(at: Date): { day: number; minutes: number } {
  const js = at.getDay(); // 0 = Sunday
  return { day: js === 0 ? 7 : js, minutes: at.getHours() * 60 + at.getMinutes() };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * How many desktops a pool keeps prepared at `at`: the largest of the timetable's rows that hold then (their weekday,
 * from inclusive, to exclusive), else the pool's own number; never more than the pool may hold.
 */
export function targetPrepared(pool: { prepared: number; maxDesktops: number; schedule: readonly TPoolScheduleRow[] }, at: Date): number {
  const { day, minutes } = localClock(at);
  const rows = pool.schedule.filter((r) => r.days.includes(day) && minutes >= minutesOf(r.from) && minutes < minutesOf(r.to));
  const wanted = rows.length ? Math.max(...rows.map((r) => r.prepared)) : pool.prepared;
  return Math.max(0, Math.min(wanted, pool.maxDesktops));
}

/** Whether the daily give-back time `at` of a pool fell between `since` (exclusive) and `now` (inclusive). */
export function dailyTimePassed(giveBack: Pick<TPoolGiveBack, 'at'>, since: Date, now: Date): boolean {
  if (!giveBack.at || now <= since) return false;
  const target = minutesOf(giveBack.at);
  // Each day from since's to now's: that day's moment at `at`, local time.
  const day = new Date(since);
  day.setHours(0, 0, 0, 0);
  for (; day <= now; day.setDate(day.getDate() + 1)) {
    const moment = new Date(day);
    moment.setHours(Math.floor(target / 60), target % 60, 0, 0);
    if (moment > since && moment <= now) return true;
  }
  return false;
}

/** A realistic wait for the person at `place` in the queue: the median of the last preparations, times the place (20 s without history). */
export function waitSeconds(place: number, recent: readonly number[]): number {
  const sorted = [...recent].sort((a, b) => a - b);
  const median = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 20;
  return Math.max(1, Math.round(median * Math.max(1, place)));
}
