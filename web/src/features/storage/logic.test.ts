import { describe, expect, it } from 'vitest';
import type { TStorageDisk, TStorageEvent } from '@vdi/contracts';
import { applyStorageEvent, incrementOf, usagePercent } from './logic';

const GiB = 1024 ** 3;
const disk = (over: Partial<TStorageDisk> = {}): TStorageDisk => ({
  id: 'd1', user_id: 'u', user_name: 'U', category: 'default', type: 'desktop', domains: [], actual_size: GiB, virtual_size: 4 * GiB,
  last: null, status: 'ready', parent: null, format: 'qcow2', path: 'desktops/d1.qcow2', operation: null, ...over,
});

describe('storage sizes', () => {
  it('computes the quota percent as actual divided by virtual', () => {
    expect(usagePercent(GiB, 4 * GiB)).toBe(25);
    expect(usagePercent(5, 0)).toBe(0);
    expect(usagePercent(5 * GiB, 4 * GiB)).toBe(100);
  });

  it('takes whole GB to add, at least 1', () => {
    expect(incrementOf(5)).toBe(5);
    expect(incrementOf('3')).toBe(3);
    expect(incrementOf(0)).toBeNull();
    expect(incrementOf(1.5)).toBeNull();
    expect(incrementOf('')).toBeNull();
  });
});

describe('storage live events', () => {
  const event = (over: Partial<TStorageEvent>): TStorageEvent => ({
    id: 'd1', status: 'maintenance', operation: 'increase', job_id: 'j', user_id: 'm', progress: 30, outcome: 'running', actual_size: GiB, virtual_size: 4 * GiB, error: null, ...over,
  });

  it('shows the progress while running, and the new size without an operation when done', () => {
    const running = applyStorageEvent([disk(), disk({ id: 'd2' })], event({}))!;
    expect(running[0]).toMatchObject({ status: 'maintenance', operation: { job_id: 'j', user_id: 'm', progress: 30 } });
    expect(running[1]!.operation).toBeNull();
    const done = applyStorageEvent(running, event({ status: 'ready', outcome: 'done', progress: 100, virtual_size: 5 * GiB }))!;
    expect(done[0]).toMatchObject({ status: 'ready', virtual_size: 5 * GiB, operation: null });
    expect(applyStorageEvent(undefined, event({}))).toBeUndefined();
  });
});
