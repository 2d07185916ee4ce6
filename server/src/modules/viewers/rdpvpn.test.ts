import { describe, expect, it } from 'vitest';
import { rdpVpnViewer } from './rdpvpn';

describe('file-rdpvpn', () => {
  const row = { name: 'My desk', guestIp: '10.2.0.20', guestProperties: { credentials: { username: 'demo', password: 'pw' }, fullscreen: false, viewers: {} } };
  it("holds the guest's private address and its credentials", () => {
    const a = rdpVpnViewer(row);
    expect(a).toMatchObject({ kind: 'file', protocol: 'rdpvpn', ext: 'rdp', mime: 'application/x-rdp', name: 'My desk' });
    const content = a.kind === 'file' ? a.content : '';
    expect(content.split('\r\n').slice(0, 3)).toEqual(['full address:s:10.2.0.20', 'username:s:demo', 'password:s:pw']);
  });
  it('is refused while the desktop has no address', () => {
    expect(() => rdpVpnViewer({ ...row, guestIp: null })).toThrow(/no address/);
  });
});
