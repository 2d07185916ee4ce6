import { describe, expect, it } from 'vitest';
import { avatarColor, avatarIndex, initials } from './avatar';

describe('avatar', () => {
  it('picks one of 48, the same for the same name', () => {
    for (const name of ['a', 'user', 'student01', 'a-very-long-user-name-with-many-characters']) {
      const i = avatarIndex(name);
      expect(i).toBeGreaterThanOrEqual(1);
      expect(i).toBeLessThanOrEqual(48);
      expect(avatarIndex(name)).toBe(i);
    }
    expect(new Set(['student01', 'student02', 'student03', 'student04', 'user', 'admin'].map(avatarIndex)).size).toBeGreaterThan(1);
    expect(avatarColor('user')).toMatch(/^hsl\(\d+(\.\d+)?, 55%, 30%\)$/);
    expect(initials('Sara  Student Extra')).toBe('SS');
  });

  it('carries white initials at 4.5:1 or more whatever the hue', () => {
    for (let i = 0; i < 48; i++) {
      const [r, g, b] = hslToRgb(i * 7.5, 0.55, Number(/, (\d+)%\)$/.exec(avatarColor('user'))![1]) / 100);
      const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      const l = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
      expect(1.05 / (l + 0.05)).toBeGreaterThanOrEqual(4.5);
    }
  });
});

function hslToRgb(h: number, s: number, l: number) {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [f(0), f(8), f(4)];
}
