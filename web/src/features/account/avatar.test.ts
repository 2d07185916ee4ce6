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
    expect(avatarColor('user')).toMatch(/^hsl\(\d+(\.\d+)?, 55%, 45%\)$/);
    expect(initials('Sara  Student Extra')).toBe('SS');
  });
});
