import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHUNK_LOAD_TIMEOUT_MS, CHUNK_RETRY_DELAYS_MS, ChunkLoadTimeout, loadWithRetries, withinChunkTime } from './chunk-timeout';

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

describe('a screen whose download failed', () => {
  afterEach(() => vi.useRealTimers());

  it('is fetched again after a pause, and shows when a later try succeeds', async () => {
    vi.useFakeTimers();
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    let tries = 0;
    const load = () => (++tries < 3 ? Promise.reject(new TypeError('Failed to fetch dynamically imported module')) : Promise.resolve('screen'));
    const outcome = loadWithRetries(load);
    await vi.advanceTimersByTimeAsync(CHUNK_RETRY_DELAYS_MS[0] + CHUNK_RETRY_DELAYS_MS[1]);
    await expect(outcome).resolves.toBe('screen');
    expect(tries).toBe(3);
  });

  it('gives the last failure when every try fails', async () => {
    vi.useFakeTimers();
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    let tries = 0;
    const outcome = loadWithRetries(() => Promise.reject(new Error(`failed ${++tries}`))).then(() => 'loaded', (e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(CHUNK_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0));
    expect(await outcome).toBe(`failed ${CHUNK_RETRY_DELAYS_MS.length + 1}`);
  });
});
