import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, formatGb } from './format';

const GiB = 1024 ** 3;

describe('formats', () => {
  it('shows GB rounded (bytes / 1024³): whole from 10 GB, two decimals below', () => {
    expect(formatGb(1.5 * GiB, 'fr-FR')).toBe('1,5');
    expect(formatGb(200 * 1024, 'en-US')).toBe('< 0.01');
    expect(formatGb(0, 'en-US')).toBe('0');
  });

  it('formats bytes, throughput and time left', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(6.5 * 1024 * 1024)).toBe('6.5 MB');
    expect(formatBytes(300 * 1024)).toBe('300 KB');
    expect(formatDuration(5)).toBe('0:05');
    expect(formatDuration(125)).toBe('2:05');
    expect(formatDuration(3725)).toBe('1:02:05');
  });
});
