import { describe, expect, it } from 'vitest';
import type { TStorageDisk, TStorageEvent } from '@vdi/contracts';
import { applyStorageEvent, incrementFor, minimumNewSizeGb, usagePercent } from './logic';

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

  it('turns the new size into whole GB to add, refusing one that is not larger', () => {
    expect(incrementFor(10 * GiB, 15)).toBe(5);
    expect(incrementFor(10 * GiB, 10)).toBeNull();
    expect(incrementFor(10 * GiB, 9)).toBeNull();
    expect(incrementFor(64 * 1024 ** 2, 1)).toBe(1);
    expect(minimumNewSizeGb(64 * 1024 ** 2)).toBe(1);
    expect(minimumNewSizeGb(10 * GiB)).toBe(11);
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
