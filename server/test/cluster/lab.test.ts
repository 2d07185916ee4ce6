// The lab (server/src/host/lab.ts): three simulated hypervisors on this machine, each its own
// network namespace, libvirtd and sshd, reached by libvirt over SSH with the installation's key and
// each host's key checked against the lab's (never accepted unseen). One lab for the whole file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureSshIdentity, privateKeyFile, publicKey, readKnownHost, writeKnownHost, knownHostsFile } from '../../src/host/ssh-identity';
import { describeIf, firstMissing, missingFile, missingNetAdmin } from '../helpers/can-run';
import { labProgramsMissing, labTag, startTestLab, type TestLab } from '../helpers/lab';
import { testImagesDir } from '../helpers/server';
import { scaled } from '../helpers/slowdown';

const images = testImagesDir();
const missing = firstMissing(
  missingNetAdmin(),
  labProgramsMissing(),
  missingFile(join(images, 'vmlinuz'), "the demo guest's kernel"),
);

describeIf(missing)('the lab: three hosts, each its own libvirtd and sshd', () => {
  let dir: string;
  let lab: TestLab;
  const tag = labTag('t');

  /** A host's URI as the server would use it (installation key, the host's confirmed key). libvirt 9's
   *  `ssh` transport passes no `known_hosts` to the ssh program (it would read root's own file), so the
   *  checked connection goes through libssh, which checks the key against the given file only. */
  const uriOf = (i: number, knownHosts = knownHostsFile(dir, `h${i}`)) =>
    `${lab.hosts[i]!.uri.replace('qemu+ssh://', 'qemu+libssh://')}?keyfile=${privateKeyFile(dir)}&known_hosts=${knownHosts}&known_hosts_verify=normal&sshauth=privkey`;
  const virsh = (i: number, ...args: string[]) => execFileSync('virsh', ['-q', '-c', uriOf(i), ...args], { encoding: 'utf8', timeout: scaled(30_000) }).trim();

  beforeAll(async () => {
    dir = mkdtempSync('/tmp/lab-test-');
    await ensureSshIdentity(dir);
    const started = Date.now();
    lab = await startTestLab({ dir, subnet: '10.231.1.0/24', hosts: 3, authorizedKeys: [await publicKey(dir)], tag });
    console.log(`lab of 3 hosts up in ${Date.now() - started} ms`);
    for (const [i, h] of lab.hosts.entries()) await writeKnownHost(dir, `h${i}`, { name: h.address }, h.hostKey);
  }, scaled(60_000));

  afterAll(async () => {
    await lab?.close();
  });

  it('has three hosts, each answering its own name over SSH with its key checked', () => {
    expect(lab.hosts.map((h) => h.address)).toEqual(['10.231.1.11', '10.231.1.12', '10.231.1.13']);
    for (const [i, h] of lab.hosts.entries()) {
      expect(h.uri).toBe(`qemu+ssh://root@${h.address}/system`);
      expect(virsh(i, 'hostname')).toBe(h.name);
    }
  });

  it("routes nothing further than the lab's /24, and listens only with sshd (libvirtd on its unix socket)", () => {
    for (let i = 1; i <= 3; i++) {
      const ns = `vdilab-${tag}-${i}`;
      expect(execFileSync('ip', ['-n', ns, 'route', 'show'], { encoding: 'utf8' }).trim()).toMatch(/^10\.231\.1\.0\/24 dev eth0 [^\n]*$/);
      const listening = execFileSync('ip', ['netns', 'exec', ns, 'ss', '-Hltn'], { encoding: 'utf8' }).trim().split('\n');
      expect(listening.map((l) => l.split(/\s+/)[3])).toEqual([`${lab.hosts[i - 1]!.address}:22`]);
    }
  });

  it('refuses a host whose key is not the confirmed one (never accepts it unseen)', async () => {
    // host 1's key written down for host 0's address: the connection fails.
    const wrong = join(dir, 'wrong_known_hosts');
    writeFileSync(wrong, `${lab.hosts[0]!.address} ${lab.hosts[1]!.hostKey}\n`);
    let refusal = '';
    try {
      execFileSync('virsh', ['-q', '-c', uriOf(0, wrong), 'hostname'], { encoding: 'utf8', stdio: 'pipe', timeout: scaled(30_000) });
    } catch (err) {
      refusal = String((err as { stderr?: string }).stderr);
    }
    expect(refusal).toMatch(/host key/i);
    expect(await readKnownHost(dir, 'h0')).toBe(lab.hosts[0]!.hostKey);
  });

  it('runs a domain made on host 2 there only', () => {
    const xml = `<domain type='qemu'><name>lab-probe</name><memory unit='MiB'>128</memory><vcpu>1</vcpu>
      <os><type arch='x86_64'>hvm</type><kernel>${join(images, 'vmlinuz')}</kernel><initrd>${join(images, 'initrd.img')}</initrd><cmdline>console=ttyS0</cmdline></os>
      <devices><serial type='pty'/><graphics type='vnc' autoport='yes' listen='127.0.0.1'/></devices></domain>`;
    const file = join(dir, 'probe.xml');
    writeFileSync(file, xml);
    // (the XML file is read by virsh here and sent over the connection)
    virsh(1, 'create', file);
    expect(virsh(1, 'list', '--name')).toBe('lab-probe');
    expect(virsh(0, 'list', '--name')).toBe('');
    virsh(1, 'destroy', 'lab-probe');
    expect(virsh(1, 'list', '--all', '--name')).toBe('');
  });

  it('has the shared and the local pool on every host, active, with their free space', () => {
    for (const [i, h] of lab.hosts.entries()) {
      for (const pool of [h.pools.shared, h.pools.local]) {
        // (one connection per pool: virsh runs both commands on it)
        const [info, xml] = virsh(i, `pool-info ${pool.name}; echo ---; pool-dumpxml ${pool.name}`).split('---');
        expect(info).toMatch(/State:\s+running/);
        expect(info).toMatch(/Autostart:\s+yes/);
        expect(info).toMatch(/Available:\s+[\d.]+ \w+/);
        expect(xml).toContain(`<path>${pool.path}</path>`);
      }
    }
    // The shared pool is one folder: what host 1 sees there, host 3 sees.
    writeFileSync(join(lab.hosts[0]!.pools.shared.path, 'seen.raw'), '');
    expect(virsh(2, 'pool-refresh shared; vol-list shared')).toContain('seen.raw');
  });

  it('stops: no process, no namespace, no bridge or veth left', async () => {
    await lab.stop();
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    expect(namespaces).not.toContain(`vdilab-${tag}-`);
    const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
    expect(links).not.toContain(`vdilab${tag}`);
    const ours = readdirSync('/proc').filter((p) => {
      try {
        return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    });
    expect(ours).toEqual([]);
  });
});
