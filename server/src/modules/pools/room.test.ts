import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors';
import { assertRoom, OVERLAY_RESERVE_BYTES, roomNeeded } from './room';

const MiB = 1024 ** 2;

describe('a full pool is refused before anything is made', () => {
  it('a copy needs its whole size; an overlay at least the reserve', () => {
    expect(roomNeeded([])).toBe(0);
    expect(roomNeeded([{ bytes: 16 * MiB, overlay: false }])).toBe(16 * MiB);
    expect(roomNeeded([{ bytes: 200 * 1024, overlay: true }])).toBe(OVERLAY_RESERVE_BYTES);
    expect(roomNeeded([{ bytes: 16 * MiB, overlay: false }, { bytes: 3 * OVERLAY_RESERVE_BYTES, overlay: true }])).toBe(16 * MiB + 3 * OVERLAY_RESERVE_BYTES);
  });

  it('room enough passes, one byte short is storage_pool_full with the numbers', () => {
    const files = [{ bytes: 16 * MiB, overlay: false }, { bytes: MiB, overlay: true }];
    const needed = 16 * MiB + OVERLAY_RESERVE_BYTES;
    expect(() => assertRoom('local', needed, files)).not.toThrow();
    let err: unknown;
    try {
      assertRoom('local', needed - 1, files);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'storage_pool_full', params: { pool: 'local', needed_bytes: needed, free_bytes: needed - 1 } });
  });
});
