import { describe, expect, it } from 'vitest';
import { tlsHostOf, tlsInstallScript } from './tls-bundle';

describe('qemu+tls hosts', () => {
  it('reads the host of a qemu+tls address only', () => {
    expect(tlsHostOf(' qemu+tls://hv1.example/system ')).toBe('hv1.example');
    expect(tlsHostOf('QEMU+TLS://10.0.0.5:16515/system')).toBe('10.0.0.5');
    expect(tlsHostOf('qemu+tls://[fd00::5]/system')).toBe('fd00::5');
    expect(tlsHostOf('qemu+ssh://root@hv1/system')).toBeNull();
    expect(tlsHostOf('qemu+tls://hv1/session')).toBeNull();
  });

  it('writes a script that installs the three files where libvirtd reads them, the key private', () => {
    const s = tlsInstallScript({ host: 'hv1', ca_certificate: 'CA\n', server_certificate: 'CERT', server_key: 'KEY\n' });
    expect(s.startsWith('#!/bin/sh\n')).toBe(true);
    expect(s).toContain("cat > /etc/pki/CA/cacert.pem <<'PEM'\nCA\nPEM\n");
    expect(s).toContain("cat > /etc/pki/libvirt/servercert.pem <<'PEM'\nCERT\nPEM\n");
    expect(s.indexOf('umask 077')).toBeLessThan(s.indexOf('serverkey.pem'));
  });
});
