// The lab across runs (`npm run cluster` stops and starts it again on the same folder): a host keeps
// its SSH host key, so a server that confirmed it reconnects; and a lab host offers TCG only unless
// asked for KVM (a paravirtual KVM, kvm_pvm, is offered by libvirt and then fails ordinary guests),
// and starts domains so.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeIf, firstMissing, missingNetAdmin } from '../helpers/can-run';
import { labProgramsMissing, labTag, startTestLab, virshOn, type TestLab } from '../helpers/lab';
import { scaled } from '../helpers/slowdown';

const missing = firstMissing(missingNetAdmin(), labProgramsMissing());

describeIf(missing)('the lab started again on its folder', () => {
  const dir = mkdtempSync('/tmp/lab-restart-');
  const tag = labTag('bnr');
  let lab: TestLab | undefined;
  const up = () => startTestLab({ dir, subnet: '10.238.251.0/24', hosts: 1, authorizedKeys: [], tag });

  afterAll(async () => {
    await lab?.close();
  });

  it('keeps each host key, offers TCG only (no KVM domain) by default, and starts a domain so', async () => {
    lab = await up();
    const first = lab.hosts[0]!.hostKey;
    const caps = virshOn(lab.hosts[0]!, 'capabilities').join('\n');
    expect(caps).toContain("<domain type='qemu'");
    expect(caps).not.toContain("<domain type='kvm'");
    // A domain starts on it (TCG, with the host's /dev as it is: no /dev of its own per domain).
    const virsh = (...args: string[]) => virshOn(lab!.hosts[0]!, ...args).join('\n');
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
