import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHUNK_LOAD_TIMEOUT_MS, ChunkLoadTimeout, withinChunkTime } from './chunk-timeout';

describe('chunk load timeout (spec core §9: 120 s)', () => {
  afterEach(() => vi.useRealTimers());

  it('gives up on a screen that has not arrived after 120 s', async () => {
    vi.useFakeTimers();
    expect(CHUNK_LOAD_TIMEOUT_MS).toBe(120_000);
    const never = new Promise<never>(() => undefined);
    const loading = withinChunkTime(never);
    const outcome = loading.then(() => 'loaded', (e: unknown) => e);
    await vi.advanceTimersByTimeAsync(119_999);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBeInstanceOf(ChunkLoadTimeout);
  });

  it('passes a screen that arrives in time, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    await expect(withinChunkTime(Promise.resolve('screen'))).resolves.toBe('screen');
    expect(vi.getTimerCount()).toBe(0);
    await expect(withinChunkTime(Promise.reject(new Error('404')))).rejects.toThrow('404');
  });
});
