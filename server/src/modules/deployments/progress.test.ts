import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createThrottle, PROGRESS_INTERVAL_MS } from './progress';

describe('creation progress throttle', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('publishes at most once per 250 ms however often the count changes, and the final count exactly', async () => {
    let count = 0;
    const published: { at: number; count: number }[] = [];
    const t = createThrottle(() => void published.push({ at: Date.now(), count }), PROGRESS_INTERVAL_MS);
    // 500 desktops made over about 2 s: one every 4 ms.
    for (let i = 0; i < 500; i++) {
      count++;
      t.touch();
      await vi.advanceTimersByTimeAsync(4);
    }
    const done = t.flush();
    await vi.advanceTimersByTimeAsync(PROGRESS_INTERVAL_MS);
    await done;
    const gaps = published.slice(1).map((p, i) => p.at - published[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(PROGRESS_INTERVAL_MS);
    // About 2 s / 250 ms reports, not 500.
    expect(published.length).toBeLessThanOrEqual(2000 / PROGRESS_INTERVAL_MS + 2);
    expect(published.length).toBeGreaterThanOrEqual(2000 / PROGRESS_INTERVAL_MS - 1);
    expect(published.at(-1)!.count).toBe(500);
  });

  it('sends a lone change at once, gathers the next ones to the end of the interval', async () => {
    const published: number[] = [];
    const t = createThrottle(() => void published.push(Date.now()), 250);
    const t0 = Date.now();
    t.touch();
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual([t0]);
    t.touch();
    t.touch();
    await vi.advanceTimersByTimeAsync(249);
    expect(published).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(published).toEqual([t0, t0 + 250]);
    // Nothing pending: no more reports.
    await vi.advanceTimersByTimeAsync(1000);
    expect(published).toHaveLength(2);
  });

  it('never runs two reports at once', async () => {
    let running = 0;
    let most = 0;
    const t = createThrottle(async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 400));
      running--;
    }, 250);
    for (let i = 0; i < 20; i++) {
      t.touch();
      await vi.advanceTimersByTimeAsync(100);
    }
    const done = t.flush();
    await vi.advanceTimersByTimeAsync(5000);
    await done;
    expect(most).toBe(1);
  });
});
