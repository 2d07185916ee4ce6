import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  blockSeconds,
  drain,
  LOGIN_ACCOUNT_SLOWDOWN,
  LOGIN_THROTTLE,
  loginAddressRule,
  normalName,
  slowdownBucket,
  slowdownMs,
  type Bucket,
} from './throttle';

const t0 = new Date('2026-06-01T10:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const failTimes = (n: number, rule = LOGIN_THROTTLE, start?: Bucket, when = t0) => {
  let b = start;
  for (let i = 0; i < n; i++) b = afterFailure(b, rule, when);
  return b!;
};

describe('sign-in throttle rules', () => {
  it('back-off is 1 min, doubling, capped at 15 min', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => blockSeconds(LOGIN_THROTTLE, n))).toEqual([60, 120, 240, 480, 900, 900]);
  });

  it('blocks on the tenth failure for a minute, not before', () => {
    expect(failTimes(9).blockedUntil).toBeNull();
    const b = failTimes(10);
    expect(b.blockedUntil).toEqual(at(60));
    expect(b.blocks).toBe(1);
  });

  it('blocks again, twice as long, on a failure after the first block', () => {
    const b = afterFailure(failTimes(10), LOGIN_THROTTLE, at(61));
    expect(b.blockedUntil).toEqual(at(61 + 120));
    expect(afterFailure(b, LOGIN_THROTTLE, at(200)).blockedUntil).toEqual(at(200 + 240));
  });

  it('drains ten failures an hour, and an empty bucket forgets its blocks', () => {
    const b = failTimes(10);
    // One failure leaks every 6 minutes.
    expect(drain(b, LOGIN_THROTTLE, at(359)).failures).toBe(10);
    expect(drain(b, LOGIN_THROTTLE, at(360)).failures).toBe(9);
    const empty = drain(b, LOGIN_THROTTLE, at(3600));
    expect(empty).toMatchObject({ failures: 0, blocks: 0, blockedUntil: null });
    // After an hour of quiet the back-off starts over: nine more failures do not block.
    expect(failTimes(9, LOGIN_THROTTLE, b, at(3600)).blockedUntil).toBeNull();
  });

  it('keeps the part of a leak not yet spent', () => {
    const b = failTimes(5);
    const later = drain(b, LOGIN_THROTTLE, at(500)); // one leaked at 360 s, 140 s towards the next
    expect(later.failures).toBe(4);
    expect(drain(later, LOGIN_THROTTLE, at(720)).failures).toBe(3);
  });

  it('the per-address rule blocks after its hourly number of failures', () => {
    const rule = loginAddressRule(30);
    expect(failTimes(29, rule).blockedUntil).toBeNull();
    expect(failTimes(30, rule).blockedUntil).toEqual(at(60));
    // A school behind one address: a failure every 2 minutes drains as fast as it fills, never a block.
    let b: Bucket | undefined;
    for (let i = 0; i < 300; i++) b = afterFailure(b, rule, at(i * 120));
    expect(b!.blockedUntil).toBeNull();
  });

  it('the per-account slow-down waits, bounded, and never blocks', () => {
    expect([0, 9, 10, 11, 12, 13, 14, 15, 50].map((n) => slowdownMs(LOGIN_ACCOUNT_SLOWDOWN, n))).toEqual([
      0, 0, 500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    const rule = slowdownBucket(LOGIN_ACCOUNT_SLOWDOWN);
    const b = failTimes(1000, rule);
    expect(b.blockedUntil).toBeNull();
    expect(b.failures).toBe(rule.maxFailures);
    expect(slowdownMs(LOGIN_ACCOUNT_SLOWDOWN, b.failures)).toBe(LOGIN_ACCOUNT_SLOWDOWN.maxDelayMs);
  });

  it('normalises names so case, spacing and width give no second allowance', () => {
    expect(normalName('  Admin ')).toBe('admin');
    expect(normalName('ＡＤＭＩＮ')).toBe('admin');
  });
});
