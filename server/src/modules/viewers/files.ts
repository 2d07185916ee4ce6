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
  // eslint-disable-next-line no-control-regex
  const name = desktopName.replace(/[\\/:*?"<>|\u0000-\u001f\u007f]/g, '_').replace(/^[.\s]+|[.\s]+$/g, '').slice(0, 100);
  return name || 'desktop';
}
