import type { TAdminHypervisorTlsBundle } from '@vdi/contracts';

/** The host of a `qemu+tls://host[:port]/system` address, or null when it is not one. */
export function tlsHostOf(uri: string): string | null {
  const m = /^qemu\+tls:\/\/(\[[0-9A-Fa-f:.]+\]|[^/:@?#]+)(?::\d+)?\/system\s*$/i.exec(uri.trim());
  return m ? m[1]!.replace(/^\[|\]$/g, '') : null;
}

/**
 * A shell script for the host's root that puts the certificates where libvirtd reads them by default
 * (/etc/pki/CA/cacert.pem, /etc/pki/libvirt/servercert.pem, /etc/pki/libvirt/private/serverkey.pem).
 * PEM text holds no quote, so a quoted here-document keeps it as it is.
 */
export function tlsInstallScript(b: TAdminHypervisorTlsBundle): string {
  const file = (path: string, pem: string) => `cat > ${path} <<'PEM'\n${pem.trim()}\nPEM\n`;
  return [
    '#!/bin/sh',
    `# The libvirtd certificates of ${b.host}, issued by the VDI portal's own certificate authority.`,
    '# Run as root on that host; then set listen_tls = 1 in /etc/libvirt/libvirtd.conf (or enable',
    '# libvirtd-tls.socket) and restart libvirtd. The key below is secret: delete this file afterwards.',
    'set -eu',
    'install -d -m 755 /etc/pki/CA /etc/pki/libvirt',
    'install -d -m 700 /etc/pki/libvirt/private',
    file('/etc/pki/CA/cacert.pem', b.ca_certificate),
    file('/etc/pki/libvirt/servercert.pem', b.server_certificate),
    'umask 077',
    file('/etc/pki/libvirt/private/serverkey.pem', b.server_key),
    'echo "Certificates installed for libvirtd."',
    '',
  ].join('\n');
}
