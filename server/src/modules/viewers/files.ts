/** The .vv connection file remote-viewer opens (reference §2.6, stack-notes §6). */
export function spiceFile(opts: { proxy: string; host: string; port: number; password: string; title: string; fullscreen: boolean }) {
  return [
    '[virt-viewer]',
    'type=spice',
    `proxy=${opts.proxy}`,
    `host=${opts.host}`,
    `port=${opts.port}`,
    `password=${opts.password}`,
    `title=${opts.title.replace(/[\r\n]/g, ' ')} - SHIFT+F12 releases the cursor`,
    `fullscreen=${opts.fullscreen ? 1 : 0}`,
    'enable-smartcard=0',
    'enable-usb-autoshare=1',
    'delete-this-file=1',
    'usb-filter=-1,-1,-1,-1,0',
    'toggle-fullscreen=shift+f11',
    'release-cursor=shift+f12',
    'secure-attention=ctrl+alt+end',
    '',
  ].join('\n');
}

/** A downloaded viewer file is named after its desktop (characters no file system takes become "_"). */
export function viewerFileName(desktopName: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
  const name = desktopName.replace(/[\\/:*?"<>|\u0000-\u001f\u007f]/g, '_').replace(/^[.\s]+|[.\s]+$/g, '').slice(0, 100);
  return name || 'desktop';
}

/** An .rdp field's value: one line, no field separators that could start another setting. */
const rdpValue = (s: string) => s.replace(/[\r\n]/g, ' ');

/**
 * The .rdp file of the RDP-gateway viewer (reference §2.6 `file-rdpgw`): the guest's address
 * reached through the portal's RD Gateway, which lets in the short-lived one-time token of
 * `gatewayaccesstoken` (the PAA cookie) and only to this desktop; the guest credentials; screen
 * options. CRLF lines, as Windows' client writes them.
 */
export function rdpGatewayFile(opts: {
  address: string;
  gateway: string;
  token: string;
  username: string;
  password: string;
  fullscreen: boolean;
}) {
  return [
    `full address:s:${rdpValue(opts.address)}`,
    `gatewayhostname:s:${rdpValue(opts.gateway)}`,
    `gatewayaccesstoken:s:${rdpValue(opts.token)}`,
    `username:s:${rdpValue(opts.username)}`,
    `password:s:${rdpValue(opts.password)}`,
    'gatewayusagemethod:i:1',
    'gatewaycredentialssource:i:5',
    'gatewayprofileusagemethod:i:1',
    'promptcredentialonce:i:0',
    'prompt for credentials:i:0',
    'authentication level:i:2',
    'redirectclipboard:i:1',
    `screen mode id:i:${opts.fullscreen ? 2 : 1}`,
    'desktopwidth:i:1280',
    'desktopheight:i:768',
    'session bpp:i:24',
    'smart sizing:i:1',
    'dynamic resolution:i:1',
    'autoreconnection enabled:i:1',
    '',
  ].join('\r\n');
}
