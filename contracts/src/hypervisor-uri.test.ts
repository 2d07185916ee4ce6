import { describe, expect, it } from 'vitest';
import { normaliseHypervisorUri } from './admin-infra';

describe('hypervisor URI', () => {
  it('normalises qemu+ssh and qemu+tls URIs: case, spaces, default port', () => {
    expect(normaliseHypervisorUri(' QEMU+SSH://vdi@Host-A.example.org:22/system ')).toBe('qemu+ssh://vdi@host-a.example.org/system');
    expect(normaliseHypervisorUri('qemu+ssh://host/system')).toBe('qemu+ssh://host/system');
    expect(normaliseHypervisorUri('qemu+ssh://root@10.0.0.5:2222/system')).toBe('qemu+ssh://root@10.0.0.5:2222/system');
    expect(normaliseHypervisorUri('qemu+tls://hv1.example.org/system')).toBe('qemu+tls://hv1.example.org/system');
    expect(normaliseHypervisorUri('qemu+tls://hv1:16514/system')).toBe('qemu+tls://hv1/system');
    expect(normaliseHypervisorUri('qemu+ssh://vdi@[fd00::5]/system')).toBe('qemu+ssh://vdi@[fd00::5]/system');
  });

  it('refuses other transports, sessions, passwords, options and bad names', () => {
    for (const bad of ['', 'host', 'qemu:///system', 'qemu+tcp://h/system', 'qemu+ssh://h/session', 'qemu+ssh://h/system/', 'qemu+ssh://u:pw@h/system',
      'qemu+ssh://h/system?no_verify=1', 'qemu+ssh://h/system#x', 'qemu+tls://user@h/system', 'qemu+ssh://bad name@h/system', 'qemu+ssh://-h/system']) {
      expect(normaliseHypervisorUri(bad), bad).toBeNull();
    }
  });
});
