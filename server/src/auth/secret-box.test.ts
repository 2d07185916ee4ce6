import { describe, expect, it } from 'vitest';
import { openSecret, sealSecret } from './secret-box';

describe('secret box', () => {
  it('opens what it sealed, with the same server secret only', () => {
    const sealed = sealSecret('server one', 'bind password');
    expect(sealed).not.toContain('bind password');
    expect(openSecret('server one', sealed)).toBe('bind password');
    expect(() => openSecret('server two', sealed)).toThrow();
  });
  it('refuses an altered secret', () => {
    const sealed = sealSecret('k', 'x'.repeat(40));
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    bytes[bytes.length - 1] ^= 1;
    expect(() => openSecret('k', `v1.${bytes.toString('base64url')}`)).toThrow();
  });
});
