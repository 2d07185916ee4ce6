// The cluster rows' lab and raw baselines: three lab hypervisors (server/src/host/lab.ts) sharing the
// portal's storage folder as their `default` pool, and what a person does by hand on them — `virsh
// create` of the same domain XML, `qemu-img create -b` on a host — timed beside the portal.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decideAccel } from '../src/engine/accel';
import { startLab, type Lab, type LabHost } from '../src/host/lab';
import { ensureSshIdentity, publicKey } from '../src/host/ssh-identity';
import { firstFrameOverTcp } from './rfb';

const run = promisify(execFile);
const now = () => performance.now();

/** The bench's lab: its own /24 of 10.238.0.0/16 and a `bn…` tag. */
export async function startBenchLab(dataDir: string): Promise<Lab & { removeDir(): void }> {
  await ensureSshIdentity(dataDir);
  const dir = mkdtempSync(join(tmpdir(), 'vbl-'));
  const lab = await startLab({
    dir,
    subnet: '10.238.1.0/24',
    hosts: 3,
    tag: `bn${Math.floor(Math.random() * 0xffff).toString(36)}`.slice(0, 6),
    authorizedKeys: [await publicKey(dataDir)],
    sharedPool: { name: 'default', path: join(dataDir, 'storage') },
    kvm: decideAccel('auto').accel === 'kvm',
    timeoutMs: 120_000,
  });
  return { ...lab, removeDir: () => rmSync(dir, { recursive: true, force: true }) };
}

const socketUri = (h: LabHost) => `qemu:///system?socket=${h.socket}`;
export const virsh = async (h: LabHost, ...args: string[]) => (await run('virsh', ['-q', '-c', socketUri(h), ...args], { timeout: 120_000 })).stdout.trim();

/** The domains a host runs now (asked on its own socket). */
export const domainsOn = async (h: LabHost) => (await virsh(h, 'list', '--name')).split('\n').map((l) => l.trim()).filter(Boolean);

/** A domain's definition as libvirt holds it (the XML the driver sent, expanded), without our metadata element
 *  (the portal's driver then leaves it alone: it is not one of its machines) and with a VNC password we know, for good. */
export async function domainXmlByHand(h: LabHost, id: string, vncPassword: string): Promise<string> {
  const xml = await virsh(h, 'dumpxml', '--inactive', '--security-info', id);
  return xml
    .replace(/<metadata>[\s\S]*?<\/metadata>/, '')
    .replace(/(<graphics type='vnc'[^>]*?)\s+passwd='[^']*'/, '$1')
    .replace(/(<graphics type='vnc'[^>]*?)\s+passwdValidTo='[^']*'/, '$1') // the portal's expiry: long past by now, maybe
    .replace(/<graphics type='vnc'/, `<graphics type='vnc' passwd='${vncPassword}'`);
}

/**
 * The raw boot storm: every domain `virsh create`d on its host at once, each until its VNC server sent
 * the first framebuffer update; answers the time until the last one (ms). The domains are destroyed after.
 */
export async function stormByHand(work: string, domains: { host: LabHost; id: string; xml: string; vncPassword: string }[]): Promise<{ ms: number; each: number[] }> {
  const files = domains.map((d, i) => {
    const file = join(work, `storm-${i}.xml`);
    writeFileSync(file, d.xml);
    return file;
  });
  const t0 = now();
  try {
    const each = await Promise.all(
      domains.map(async (d, i) => {
        await virsh(d.host, 'create', files[i]!);
        const display = await virsh(d.host, 'vncdisplay', d.id);
        const port = 5900 + Number(/:(\d+)$/.exec(display)![1]);
        await firstFrameOverTcp(d.host.address, port, d.vncPassword);
        return now() - t0;
      }),
    );
    return { ms: Math.max(...each), each };
  } finally {
    await Promise.all(domains.map((d) => virsh(d.host, 'destroy', d.id).catch(() => undefined)));
  }
}

/** The first process of a lab host (its `sh`): `nsenter` into its namespaces runs a program on that host. */
function hostProcess(h: LabHost): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd[0] === 'sh' && cmd.some((a) => a.endsWith('lab-host.sh')) && cmd.includes(h.name)) return Number(entry);
    } catch {
      // ended meanwhile
    }
  }
  throw new Error(`no process of lab host ${h.name}`);
}

/** `qemu-img` run on a lab host (its mount, host-name and network namespaces): ms it took. */
export async function qemuImgOnHost(h: LabHost, args: string[]): Promise<number> {
  const pid = hostProcess(h);
  const t0 = now();
  await run('nsenter', ['-t', String(pid), '-m', '-u', '-n', 'qemu-img', ...args], { timeout: 120_000 });
  return now() - t0;
}
