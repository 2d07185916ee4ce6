// A hypervisor host for tests: its own network namespace (vdidrv…, 10.232.1.0/24) with its own
// libvirtd (own config, run, state and log directories bind-mounted inside the namespace's mount
// namespace), reached over `qemu+unix:///system?socket=…`. One small piece so the lead's lab
// (full hosts with sshd, qemu+ssh) can replace it. Needs root.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type LibvirtTestHost = {
  uri: string;
  /** the host's address (its graphics listen there) */
  address: string;
  /** kills its libvirtd (SIGKILL): the host "fails"; its machines keep running until stop() */
  killDaemon: () => void;
  /** stops its libvirtd (SIGSTOP): the host stops answering, as one that vanished from the network */
  freezeDaemon: () => void;
  /** a virsh command against it */
  virsh: (...args: string[]) => string;
  /** ends everything it started: machines, libvirtd, the namespace, the directories */
  stop: () => Promise<void>;
};

const LIBVIRTD_CONF = `listen_tls = 0
listen_tcp = 0
unix_sock_group = "root"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:stderr"
`;

// root QEMU, no security driver, cgroups or virtlogd: a test host, not a hardened one
const QEMU_CONF = `user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
stdio_handler = "file"
`;

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** `subnet` is the third octet in 10.232.X.0/24 (one per host a test file runs at once); `net` another /16's first two octets. */
export async function startLibvirtHost(subnet = 1, net = '10.232'): Promise<LibvirtTestHost> {
  const tag = randomBytes(3).toString('hex');
  const ns = `vdidrv${tag}`;
  const veth = `vdidrv${tag}h`;
  const base = mkdtempSync(join(tmpdir(), 'drv-host-'));
  const dirs = ['etc', 'run', 'lib', 'cache', 'log'].map((d) => join(base, d));
  for (const d of dirs) mkdirSync(d);
  writeFileSync(join(base, 'etc', 'libvirtd.conf'), LIBVIRTD_CONF);
  writeFileSync(join(base, 'etc', 'qemu.conf'), QEMU_CONF);
  const hostSide = `${net}.${subnet}.1`;
  const address = `${net}.${subnet}.2`;
  ip('netns', 'add', ns);
  let daemon: ChildProcess | undefined;
  const stop = async () => {
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
    // libvirtd's QEMUs outlive it: everything in the namespace goes
    let pids = '';
    try {
      pids = ip('netns', 'pids', ns).trim();
    } catch {
      // no namespace
    }
    for (const p of pids.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(p), 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (let i = 0; i < 100 && pids; i++) {
      try {
        pids = ip('netns', 'pids', ns).trim();
      } catch {
        pids = '';
      }
      if (pids) await new Promise((r) => setTimeout(r, 50));
    }
    try {
      ip('netns', 'del', ns);
    } catch {
      // already gone
    }
    rmSync(base, { recursive: true, force: true });
  };
  try {
    ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
    ip('addr', 'add', `${hostSide}/24`, 'dev', veth);
    ip('link', 'set', veth, 'up');
    ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    ip('-n', ns, 'link', 'set', 'eth0', 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    // `ip netns exec` gives the command its own mount namespace: the bind mounts stay inside it
    const [etc, run, lib, cache, log] = dirs;
    const script = [
      `mount --bind ${etc} /etc/libvirt`,
      `mkdir -p /run/libvirt && mount --bind ${run} /run/libvirt`,
      `mount --bind ${lib} /var/lib/libvirt`,
      `mount --bind ${cache} /var/cache/libvirt`,
      `mount --bind ${log} /var/log/libvirt`,
      // its pid file in its own /run/libvirt: two test hosts at once (the driver's and the volumes' tests) would share /run's
      'exec libvirtd -f /etc/libvirt/libvirtd.conf -p /run/libvirt/libvirtd.pid',
    ].join(' && ');
    daemon = spawn('ip', ['netns', 'exec', ns, 'sh', '-c', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    daemon.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
    const socket = join(run!, 'libvirt-sock');
    const deadline = Date.now() + 20_000;
    while (!existsSync(socket)) {
      if (daemon.exitCode !== null || Date.now() > deadline) throw new Error(`libvirtd did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const uri = `qemu+unix:///system?socket=${socket}`;
    const d = daemon;
    return {
      uri,
      address,
      killDaemon: () => d.kill('SIGKILL'),
      freezeDaemon: () => d.kill('SIGSTOP'),
      virsh: (...args) => execFileSync('virsh', ['-c', uri, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
