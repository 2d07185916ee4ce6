// The lab across runs (`npm run cluster` stops and starts it again on the same folder): a host keeps
// its SSH host key, so a server that confirmed it reconnects; and a lab host offers TCG only unless
// asked for KVM (a paravirtual KVM, kvm_pvm, is offered by libvirt and then fails ordinary guests),
// and starts domains so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { registerNamespace } from '../../../scripts/lib/test-run.mjs';
import { startLab, type Lab } from '../../src/host/lab';
import { describeIf, firstMissing, missingNetAdmin, missingPrograms } from '../helpers/can-run';
import { scaled } from '../helpers/slowdown';

const missing = firstMissing(missingNetAdmin(), missingPrograms('libvirtd', 'virsh', 'sshd', 'ssh-keygen', 'unshare', 'qemu-system-x86_64'));

describeIf(missing)('the lab started again on its folder', () => {
  const dir = mkdtempSync('/tmp/lab-restart-');
  const tag = `bnr${Math.floor(Math.random() * 0xfff).toString(36)}`.slice(0, 6);
  registerNamespace(`vdilab-${tag}-1`);
  let lab: Lab | undefined;
  const up = () => startLab({ dir, subnet: '10.238.251.0/24', hosts: 1, authorizedKeys: [], tag, timeoutMs: scaled(30_000) });

  afterAll(async () => {
    await lab?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps each host key, offers TCG only (no KVM domain) by default, and starts a domain so', async () => {
    lab = await up();
    const first = lab.hosts[0]!.hostKey;
    const caps = execFileSync('virsh', ['-c', `qemu:///system?socket=${lab.hosts[0]!.socket}`, 'capabilities'], { encoding: 'utf8', timeout: scaled(30_000) });
    expect(caps).toContain("<domain type='qemu'");
    expect(caps).not.toContain("<domain type='kvm'");
    // A domain starts on it (TCG, with the host's /dev as it is: no /dev of its own per domain).
    const virsh = (...args: string[]) => execFileSync('virsh', ['-q', '-c', `qemu:///system?socket=${lab!.hosts[0]!.socket}`, ...args], { encoding: 'utf8', timeout: scaled(30_000) });
    const xml = join(dir, 'probe.xml');
    writeFileSync(xml, "<domain type='qemu'><name>probe</name><memory unit='MiB'>64</memory><os><type arch='x86_64' machine='q35'>hvm</type></os><devices><graphics type='vnc' autoport='yes' listen='127.0.0.1'/></devices></domain>");
    virsh('create', xml);
    expect(virsh('domstate', 'probe').trim()).toBe('running');
    virsh('destroy', 'probe');
    await lab.stop();
    lab = await up();
    expect(lab.hosts[0]!.hostKey).toBe(first);
  }, scaled(90_000));
});
