// `file-rdpvpn` (reference §2.6): a plain .rdp file with the guest's address on the private
// network and the guest credentials; it opens through the user's WireGuard VPN.
import type { TViewerAnswer } from '@vdi/contracts';
import { notFound } from '../../http/errors';
import type { DomainRow } from '../shared/domains';
import { viewerFileName } from './files';

/** A value of an .rdp line: no line breaks. */
const rdpValue = (v: string) => v.replace(/[\r\n]/g, ' ');

export function rdpVpnFile(o: { guestIp: string; username: string; password: string; fullscreen: boolean }): string {
  return [
    `full address:s:${rdpValue(o.guestIp)}`,
    `username:s:${rdpValue(o.username)}`,
    `password:s:${rdpValue(o.password)}`,
    `screen mode id:i:${o.fullscreen ? 2 : 1}`,
    'redirectclipboard:i:1',
    'authentication level:i:2',
    'prompt for credentials:i:0',
    'smart sizing:i:1',
    'dynamic resolution:i:1',
    'audiomode:i:0',
    '',
  ].join('\r\n');
}

export function rdpVpnViewer(row: Pick<DomainRow, 'name' | 'guestIp' | 'guestProperties'>): TViewerAnswer {
  if (!row.guestIp) throw notFound('unable_to_get_viewer', 'The desktop has no address on the private network yet');
  const { username, password } = row.guestProperties.credentials;
  return {
    kind: 'file',
    protocol: 'rdpvpn',
    name: viewerFileName(row.name),
    ext: 'rdp',
    mime: 'application/x-rdp',
    content: rdpVpnFile({ guestIp: row.guestIp, username, password, fullscreen: row.guestProperties.fullscreen }),
  };
}
