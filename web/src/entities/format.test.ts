import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, formatGb } from './format';

const GiB = 1024 ** 3;

describe('formats', () => {
  it('shows sizes and memory in GB (bytes / 1024³) with at most two decimals, in the language of the reader', () => {
    expect(formatGb(6114770944)).toBe('5.69');
    expect(formatGb(2 * GiB)).toBe('2');
    expect(formatGb(1.5 * GiB, 'fr-FR')).toBe('1,5');
    expect(formatGb(1.5 * GiB, 'de-DE')).toBe('1,5');
    // Large sizes keep their decimals (a memory of 10.5 GB is not 11).
    expect(formatGb(10.5 * GiB)).toBe('10.5');
    expect(formatGb(20 * GiB + 300 * 1024 ** 2)).toBe('20.29');
    // Small ones: two decimals, and a few KB read under the smallest step, not "0".
    expect(formatGb(13631488)).toBe('0.01');
    expect(formatGb(200 * 1024, 'en-US')).toBe('< 0.01');
    expect(formatGb(0, 'en-US')).toBe('0');
  });

  it('formats bytes, throughput and time left', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(6.5 * 1024 * 1024)).toBe('6.5 MB');
    expect(formatBytes(300 * 1024)).toBe('300 KB');
    expect(formatBytes(12.34 * 1024 ** 3, 'en-US')).toBe('12 GB');
    expect(formatBytes(-5)).toBe('0 B');
    expect(formatDuration(5)).toBe('0:05');
    expect(formatDuration(125)).toBe('2:05');
    expect(formatDuration(3725)).toBe('1:02:05');
  });
});
