import { describe, expect, it } from 'vitest';
import { dailyTimePassed, localClock, targetPrepared, waitSeconds } from './schedule';

// Local times (the pool's timetable is the server's local time).
const at = (y: number, m: number, d: number, h: number, min = 0) => new Date(y, m - 1, d, h, min);
// 2026-11-30 is a Monday.
const monday = (h: number, min = 0) => at(2026, 11, 30, h, min);

describe('a pool’s prepared count', () => {
  const pool = { prepared: 2, maxDesktops: 40, schedule: [{ days: [1, 2, 3, 4, 5], from: '08:45', to: '14:00', prepared: 30 }] };

  it('follows the timetable on school days, its own number otherwise', () => {
    expect(localClock(monday(9))).toEqual({ day: 1, minutes: 540 });
    expect(targetPrepared(pool, monday(8, 44))).toBe(2);
    expect(targetPrepared(pool, monday(8, 45))).toBe(30);
    expect(targetPrepared(pool, monday(13, 59))).toBe(30);
    expect(targetPrepared(pool, monday(14, 0))).toBe(2);
    expect(targetPrepared(pool, at(2026, 12, 5, 10))).toBe(2); // Saturday
  });

  it('takes the largest of overlapping rows, and never more than the pool holds', () => {
    const two = { ...pool, maxDesktops: 25, schedule: [...pool.schedule, { days: [1], from: '09:00', to: '10:00', prepared: 5 }] };
    expect(targetPrepared(two, monday(9, 30))).toBe(25);
    expect(targetPrepared({ ...pool, prepared: 50, schedule: [] }, monday(20))).toBe(40);
  });
});

describe('the daily give-back time', () => {
  it('passed once between two moments, across midnight too', () => {
    expect(dailyTimePassed({ at: '15:00' }, monday(14, 59), monday(15))).toBe(true);
    expect(dailyTimePassed({ at: '15:00' }, monday(15), monday(15, 1))).toBe(false);
    expect(dailyTimePassed({ at: '00:30' }, monday(23), at(2026, 12, 1, 1))).toBe(true);
    expect(dailyTimePassed({ at: null }, monday(1), monday(23))).toBe(false);
  });
});

describe('the wait a person is told', () => {
  it('is the median preparation times the place', () => {
    expect(waitSeconds(1, [])).toBe(20);
    expect(waitSeconds(3, [10, 40, 12])).toBe(36);
  });
});
