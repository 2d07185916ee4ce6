import { describe, expect, it } from 'vitest';
import { viewerFileName } from './files';

describe('viewer file name', () => {
  it('is the desktop name, with what file systems refuse replaced', () => {
    expect(viewerFileName('Demo desktop')).toBe('Demo desktop');
    expect(viewerFileName('a/b:c*d?')).toBe('a_b_c_d_');
    expect(viewerFileName('..')).toBe('desktop');
    expect(viewerFileName('x'.repeat(300))).toHaveLength(100);
  });
});
