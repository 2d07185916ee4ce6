import { freemem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { availableMemoryBytes } from './memory';

describe('availableMemoryBytes', () => {
  it('adds free memory, buffers and page cache, as libvirt node memory stats do', () => {
    const meminfo = 'MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:    5000000 kB\nBuffers:           20000 kB\nCached:          4000000 kB\nSwapCached:            0 kB\n';
    expect(availableMemoryBytes(meminfo)).toBe((1_000_000 + 20_000 + 4_000_000) * 1024);
  });

  it('falls back to what Node reports when /proc/meminfo says nothing usable', () => {
    const r = availableMemoryBytes('nothing here');
    expect(Math.abs(r - freemem())).toBeLessThan(512 * 1048576);
  });

  it("reads this machine's numbers", () => {
    expect(availableMemoryBytes()).toBeGreaterThan(0);
  });
});
