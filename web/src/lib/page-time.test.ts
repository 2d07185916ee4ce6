import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PAGE_TICK_MS, pageTimeout } from './page-time';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('a page-time limit', () => {
  it('on a page that runs, ends at its limit (a TimeoutError)', () => {
    const t = pageTimeout(25_000);
    vi.advanceTimersByTime(24_000);
    expect(t.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(t.signal.aborted).toBe(true);
    expect((t.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('does not count the time the page was frozen: ticks 10 s apart count 2 s each', () => {
    let now = 0;
    const t = pageTimeout(25_000, () => now);
    // Each tick comes 10 s after the one before (the browser ran the page once in 10 s).
    for (let i = 0; i < 12; i++) {
      now += 10_000;
      vi.advanceTimersByTime(PAGE_TICK_MS);
    }
    expect(now).toBe(120_000);
    expect(t.signal.aborted).toBe(false);
    now += 10_000;
    vi.advanceTimersByTime(PAGE_TICK_MS);
    expect(t.signal.aborted).toBe(true);
  });

  it('stops counting when cleared', () => {
    const t = pageTimeout(2_000);
    t.clear();
    vi.advanceTimersByTime(10_000);
    expect(t.signal.aborted).toBe(false);
  });
});
