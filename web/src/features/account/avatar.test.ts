import { describe, expect, it } from 'vitest';
import { avatarIndex, avatarUrl } from './avatar';

describe('avatar', () => {
  it('picks one of the 48 stock pictures, the same for the same name', () => {
    for (const name of ['a', 'user', 'student01', 'a-very-long-user-name-with-many-characters']) {
      const i = avatarIndex(name);
      expect(i).toBeGreaterThanOrEqual(1);
      expect(i).toBeLessThanOrEqual(48);
      expect(avatarIndex(name)).toBe(i);
    }
    expect(avatarUrl({ photo: '', username: 'user' })).toMatch(/^\/assets\/img\/desktops\/stock\/\d+\.jpg$/);
    expect(avatarUrl({ photo: '/p.png', username: 'user' })).toBe('/p.png');
  });
});
