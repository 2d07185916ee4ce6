import { describe, expect, it } from 'vitest';
import { viewerFileName } from './open';

describe('viewer file names', () => {
  it('name the desktop, and the RDP files by their kind', () => {
    expect(viewerFileName({ name: 'My desk', ext: 'vv', protocol: 'spice' })).toBe('My desk.vv');
    expect(viewerFileName({ name: 'My desk', ext: 'rdp', protocol: 'rdpgw' })).toBe('My desk-rdpgw.rdp');
    expect(viewerFileName({ name: 'My desk', ext: 'rdp', protocol: 'rdpvpn' })).toBe('My desk-rdpvpn.rdp');
  });
  it('replace what file systems refuse', () => {
    expect(viewerFileName({ name: 'a/b:c*?', ext: 'vv', protocol: 'spice' })).toBe('a_b_c_.vv');
    expect(viewerFileName({ name: ' / ', ext: 'vv', protocol: 'spice' })).toBe('_.vv');
    expect(viewerFileName({ name: '', ext: 'vv', protocol: 'spice' })).toBe('desktop.vv');
  });
});
