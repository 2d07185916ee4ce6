import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';

// The live socket, faked: the handlers the hook subscribes, called by the test.
const handlers = new Map<string, Set<(payload: unknown) => void>>();
const ioHandlers = new Map<string, () => void>();
vi.mock('./socket', () => ({
  onEvent: (event: string, handler: (payload: unknown) => void) => {
    const set = handlers.get(event) ?? new Set();
    set.add(handler);
    handlers.set(event, set);
    return () => set.delete(handler);
  },
  currentSocket: () => ({ io: { on: (e: string, f: () => void) => ioHandlers.set(e, f), off: (e: string) => ioHandlers.delete(e) } }),
}));
const { EVENT_READ_GAP_MS, useRefetchOnEvent } = await import('./refetch-on-event');

const emit = (event: string) => handlers.get(event)?.forEach((h) => h({ pool_id: 'p' }));
const KEY = ['desktop-pools'];

function setUp() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={qc}>{children}</QueryClientProvider>;
  const view = renderHook(() => useRefetchOnEvent('desktop_pool_changed', KEY), { wrapper });
  return { qc, view };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  cleanup();
  vi.useRealTimers();
  handlers.clear();
  ioHandlers.clear();
});

describe('useRefetchOnEvent', () => {
  it('a burst of events is one invalidation, after the gap', async () => {
    const { qc } = setUp();
    const invalidate = vi.spyOn(qc, 'invalidateQueries');
    for (let i = 0; i < 30; i++) emit('desktop_pool_changed');
    expect(invalidate).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(EVENT_READ_GAP_MS);
    expect(invalidate).toHaveBeenCalledTimes(1);
    expect(invalidate).toHaveBeenCalledWith({ queryKey: KEY, exact: true });
    // Another event later: another read.
    emit('desktop_pool_changed');
    await vi.advanceTimersByTimeAsync(EVENT_READ_GAP_MS);
    expect(invalidate).toHaveBeenCalledTimes(2);
  });

  it('never cuts a read under way short: the next follows it', async () => {
    let finish: (n: number) => void = () => undefined;
    const { qc } = setUp();
    const reading = qc.fetchQuery({ queryKey: KEY, queryFn: () => new Promise<number>((resolve) => (finish = resolve)) });
    const invalidate = vi.spyOn(qc, 'invalidateQueries');
    emit('desktop_pool_changed');
    await vi.advanceTimersByTimeAsync(EVENT_READ_GAP_MS * 5);
    expect(invalidate).not.toHaveBeenCalled();
    finish(1);
    await reading;
    await vi.advanceTimersByTimeAsync(EVENT_READ_GAP_MS);
    expect(invalidate).toHaveBeenCalledTimes(1);
  });

  it('reads again after a reconnection (events may have been missed), and stops listening when unmounted', async () => {
    const { qc, view } = setUp();
    const invalidate = vi.spyOn(qc, 'invalidateQueries');
    ioHandlers.get('reconnect')?.();
    await vi.advanceTimersByTimeAsync(EVENT_READ_GAP_MS);
    expect(invalidate).toHaveBeenCalledTimes(1);
    view.unmount();
    expect(handlers.get('desktop_pool_changed')?.size ?? 0).toBe(0);
    expect(ioHandlers.has('reconnect')).toBe(false);
    emit('desktop_pool_changed');
    await vi.advanceTimersByTimeAsync(EVENT_READ_GAP_MS);
    expect(invalidate).toHaveBeenCalledTimes(1);
  });
});
