// The lab: simulated hypervisors on this one machine, for the tests and for a person trying the
// cluster mode (`npm run cluster`). Each host is a network namespace with an address on a bridge of
// the lab's own (the server reaches each host; nothing is routed further, no NAT), its own host name,
// and one mount namespace where its own folders stand over libvirt's paths, running its own libvirtd
// and its own sshd (lab-host.sh). Real libvirtd and sshd: the server reaches them by `qemu+ssh://`.
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { detectAccel } from '../engine/accel';
import { DEFAULT_VNI, hostRecipe } from '../network/tunnel';
import { runProgram, startDaemon } from './programs';

/** A storage pool of a lab host: its libvirt name and its path on that host. */
export type LabPool = { name: string; path: string };
export type LabHost = {
  name: string;
  address: string;
  /** How the server reaches it: `qemu+ssh://root@<address>/system`. */
  uri: string;
  /** Its SSH host key, `ssh-ed25519 AAAA…` (for known_hosts). */
  hostKey: string;
  /** `shared`: one folder all hosts see at the same path (stands for NFS); `local`: this host's own. */
  pools: { shared: LabPool; local: LabPool };
  /** Its libvirtd's socket as seen from this machine (for set-up and checks without SSH). */
  socket: string;
  /** `qemu+tls://<address>/system` when the lab was given certificates for it (its libvirtd also listens for TLS). */
  tlsUri?: string;
};
export type Lab = { dir: string; hosts: LabHost[]; stop: () => Promise<void> };
export type LabOptions = {
  /** The lab's folder (its hosts' folders, the shared pool, its state for `stopLab`). */
  dir: string;
  /** A /24 of its own, e.g. `10.231.1.0/24`: the bridge takes .1, the hosts .11, .12, … */
  subnet: string;
  hosts?: number;
  /** Public keys allowed to log in as root on every host (the installation's). */
  authorizedKeys: string[];
  /** Up to 6 letters or digits, unique on this machine: names the bridge, the namespaces and the hosts. */
  tag: string;
  /** How long the hosts may take to come up. */
  timeoutMs?: number;
  /** Whether the hosts' libvirtd may use this machine's KVM (default false: TCG, the machine's /dev/kvm
   *  hidden in each host). Pass true only where this machine's own engine would use KVM (engine/accel.ts):
   *  a paravirtual KVM (kvm_pvm) is offered by libvirt and then fails ordinary guests. */
  kvm?: boolean;
  /** The pool every host shares (stands for the NFS mount at the same path on every host): by
   *  default `shared` at `<dir>/shared`; the portal's hosts declare `default` at its storage folder. */
  sharedPool?: LabPool;
  /** The server certificate of a host's libvirtd, for `qemu+tls://` (as an admin installs the bundle the
   *  console issues): asked for each host; a host without one listens on its unix socket only. */
  tls?: (host: { name: string; address: string }) => Promise<{ caCert: string; cert: string; key: string } | null>;
  /** Each host prepared for the guest network as README's recipe says (its `vdi-guests` bridge with
   *  a VXLAN port to the server at the lab bridge's .1): the network id (default tunnel.ts's), or false. */
  guestNetworkVni?: number | false;
};

/** What `stopLab` needs to end a lab from another process. */
type LabState = { bridge: string; hosts: { name: string; namespace: string; veth: string }[] };

const STATE = 'lab.json';
const HOST_SCRIPT = join(import.meta.dirname, 'lab-host.sh');

const LIBVIRTD_CONF = `# A lab host's libvirtd: its unix socket only (no TCP, no TLS); root reaches it through sshd.
listen_tls = 0
listen_tcp = 0
unix_sock_group = "root"
unix_sock_ro_perms = "0700"
unix_sock_rw_perms = "0700"
auth_unix_ro = "none"
auth_unix_rw = "none"
`;
/** A lab host's libvirtd with a certificate: TLS on 16514 too, client certificates checked against the CA. */
const LIBVIRTD_TLS = `listen_tls = 1
ca_file = "/etc/libvirt/pki/cacert.pem"
cert_file = "/etc/libvirt/pki/servercert.pem"
key_file = "/etc/libvirt/pki/serverkey.pem"`;
const QEMU_CONF = `# A lab host's QEMU: as root, no security driver, no cgroups, no virtlogd (none of them is per host here),
# no /dev of its own per domain (the host's /dev has the file standing over /dev/kvm: lab-host.sh).
user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
cgroup_controllers = [ ]
stdio_handler = "file"
namespaces = [ ]
`;

const sshdConfig = (address: string, sshDir: string) => `# A lab host's sshd: its own host key and authorized keys, keys only.
ListenAddress ${address}
HostKey ${join(sshDir, 'ssh_host_ed25519_key')}
AuthorizedKeysFile ${join(sshDir, 'authorized_keys')}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
LogLevel ERROR
`;

const poolXml = (name: string, path: string) =>
  `<pool type='dir'>\n  <name>${name}</name>\n  <uuid>${randomUUID()}</uuid>\n  <target>\n    <path>${path}</path>\n  </target>\n</pool>\n`;

/** The /24's first three numbers, from `a.b.c.0/24`. */
function subnetPrefix(subnet: string): string {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.0\/24$/.exec(subnet);
  if (!m || m.slice(1).some((n) => Number(n) > 255)) throw new Error(`the lab needs a /24 such as 10.231.1.0/24 (got ${subnet})`);
  return m.slice(1, 4).join('.');
}

const until = async (what: string, deadline: number, check: () => Promise<boolean>) => {
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`lab: ${what} did not come up in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

const accepts = (address: string, port: number) =>
  new Promise<boolean>((resolvePromise) => {
    const socket = connect({ host: address, port, timeout: 1000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });

/** Starts a lab (ending first what a former one in the same folder left). On a failure, nothing of it stays. */
export async function startLab(opts: LabOptions): Promise<Lab> {
  const count = opts.hosts ?? 3;
  if (!/^[a-z0-9]{1,6}$/.test(opts.tag)) throw new Error('lab: the tag is 1 to 6 lower-case letters or digits');
  if (!Number.isInteger(count) || count < 1 || count > 9) throw new Error('lab: 1 to 9 hosts');
  const prefix = subnetPrefix(opts.subnet);
  await stopLab(opts.dir);
  const state: LabState = {
    bridge: `vdilab${opts.tag}`,
    hosts: Array.from({ length: count }, (_, i) => ({ name: `${opts.tag}-host${i + 1}`, namespace: `vdilab-${opts.tag}-${i + 1}`, veth: `vdilab${opts.tag}v${i + 1}` })),
  };
  // Names of the lab's range (vdilab…) that a lab of the same tag in another folder left: ended too.
  await endHosts(state);
  await removeDeadBridges(prefix);
  const sharedPool = opts.sharedPool ?? { name: 'shared', path: join(opts.dir, 'shared') };
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(sharedPool.name) || sharedPool.name === 'local' || !/^\/[A-Za-z0-9._/-]+$/.test(sharedPool.path)) throw new Error('lab: the shared pool is a name and an absolute path');
  await mkdir(sharedPool.path, { recursive: true });
  await writeFile(join(opts.dir, STATE), JSON.stringify(state));
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  try {
    await runProgram('ip', ['link', 'add', state.bridge, 'type', 'bridge']);
    await runProgram('ip', ['addr', 'add', `${prefix}.1/24`, 'dev', state.bridge]);
    await runProgram('ip', ['link', 'set', state.bridge, 'up']);
    const hosts = await Promise.all(
      state.hosts.map(async (h, i): Promise<LabHost> => {
        const address = `${prefix}.${11 + i}`;
        const dir = join(opts.dir, h.name);
        const ssh = join(dir, 'ssh');
        // A host keeps its SSH host key from one run of the lab to the next (as a real machine does):
        // a server that confirmed it reconnects to the host; everything else of the host starts afresh.
        const keyFile = join(ssh, 'ssh_host_ed25519_key');
        const kept = await Promise.all([readFile(keyFile), readFile(`${keyFile}.pub`)]).catch(() => null);
        await rm(dir, { recursive: true, force: true });
        for (const sub of ['run', 'lib/images', 'etc/storage/autostart', 'log', 'cache', 'ssh']) await mkdir(join(dir, sub), { recursive: true, mode: 0o700 });
        const tls = await opts.tls?.({ name: h.name, address });
        if (tls) {
          // The bundle where the configuration below names it (this host's /etc/libvirt is its own folder).
          await mkdir(join(dir, 'etc', 'pki'), { recursive: true, mode: 0o700 });
          await writeFile(join(dir, 'etc', 'pki', 'cacert.pem'), tls.caCert);
          await writeFile(join(dir, 'etc', 'pki', 'servercert.pem'), tls.cert);
          await writeFile(join(dir, 'etc', 'pki', 'serverkey.pem'), tls.key, { mode: 0o600 });
        }
        await writeFile(join(dir, 'etc', 'libvirtd.conf'), tls ? LIBVIRTD_CONF.replace('listen_tls = 0', LIBVIRTD_TLS) : LIBVIRTD_CONF);
        await writeFile(join(dir, 'etc', 'qemu.conf'), QEMU_CONF);
        // The pools as libvirt keeps defined ones, started on libvirtd's start (autostart).
        const pools = { shared: sharedPool, local: { name: 'local', path: '/var/lib/libvirt/images' } };
        for (const pool of Object.values(pools)) {
          await writeFile(join(dir, 'etc', 'storage', `${pool.name}.xml`), poolXml(pool.name, pool.path));
          await symlink(`/etc/libvirt/storage/${pool.name}.xml`, join(dir, 'etc', 'storage', 'autostart', `${pool.name}.xml`));
        }
        if (kept) {
          await writeFile(keyFile, kept[0], { mode: 0o600 });
          await writeFile(`${keyFile}.pub`, kept[1]);
        } else {
          await runProgram('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', h.name, '-f', keyFile]);
        }
        await writeFile(join(ssh, 'authorized_keys'), opts.authorizedKeys.map((k) => `${k.trim()}\n`).join(''), { mode: 0o600 });
        await writeFile(join(ssh, 'sshd_config'), sshdConfig(address, ssh));
        await runProgram('ip', ['netns', 'add', h.namespace]);
        await runProgram('ip', ['link', 'add', h.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', h.namespace]);
        await runProgram('ip', ['link', 'set', h.veth, 'master', state.bridge, 'up']);
        await runProgram('ip', ['-n', h.namespace, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
        await runProgram('ip', ['-n', h.namespace, 'link', 'set', 'eth0', 'up']);
        await runProgram('ip', ['-n', h.namespace, 'link', 'set', 'lo', 'up']);
        if (opts.guestNetworkVni !== false) {
          for (const line of hostRecipe({ vni: opts.guestNetworkVni ?? DEFAULT_VNI, server: `${prefix}.1` })) {
            await runProgram('ip', ['-n', h.namespace, ...line.split(' ').slice(1)]);
          }
        }
        const unshare = ['unshare', '--mount', '--uts', '--pid', '--fork', '--mount-proc', '--kill-child', '--propagation', 'private'];
        // TCG unless asked for KVM and this machine's KVM runs ordinary guests (not kvm_pvm, see engine/accel.ts).
        const accel = opts.kvm && detectAccel('auto') === 'kvm' ? 'kvm' : 'tcg';
        const child = startDaemon('ip', ['netns', 'exec', h.namespace, ...unshare, 'sh', HOST_SCRIPT, dir, h.name, accel], { logFile: join(dir, 'host.log') });
        let ended = false;
        child.once('exit', () => (ended = true));
        child.once('error', () => (ended = true));
        const socket = join(dir, 'run', 'libvirt-sock');
        const ready = async () => {
          if (ended) throw new Error(`lab: ${h.name} ended while starting (see ${join(dir, 'host.log')})`);
          if (!existsSync(socket)) return false;
          const pools = await runProgram('virsh', ['-q', '-c', `qemu:///system?socket=${socket}`, 'pool-list', '--name'], { timeoutMs: 10_000 }).catch(() => '');
          return pools.split('\n').map((p) => p.trim()).includes(sharedPool.name) && pools.includes('local');
        };
        await until(`${h.name}'s libvirtd`, deadline, ready);
        await until(`${h.name}'s sshd`, deadline, () => accepts(address, 22));
        const hostKey = (await readFile(join(ssh, 'ssh_host_ed25519_key.pub'), 'utf8')).trim().split(/\s+/).slice(0, 2).join(' ');
        if (tls) await until(`${h.name}'s libvirtd TLS port`, deadline, () => accepts(address, 16514));
        return { name: h.name, address, uri: `qemu+ssh://root@${address}/system`, hostKey, pools, socket, ...(tls && { tlsUri: `qemu+tls://${address}/system` }) };
      }),
    );
    // Every host's key, for a person trying the lab by hand (`known_hosts=` in a URI).
    await writeFile(join(opts.dir, 'known_hosts'), hosts.map((h) => `${h.address} ${h.hostKey}\n`).join(''));
    return { dir: opts.dir, hosts, stop: () => stopLab(opts.dir) };
  } catch (err) {
    await stopLab(opts.dir);
    throw err;
  }
}

/** The processes in a network namespace (by its inode): a lab host's whole process tree. */
function processesIn(namespace: string): number[] {
  let inode: number;
  try {
    inode = statSync(`/run/netns/${namespace}`).ino;
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/net`) === `net:[${inode}]`) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/**
 * Ends the lab kept in `dir` (from any process: `npm run cluster -- stop`, a test's clean-up, a former
 * run's leftovers): every process of its hosts, their namespaces, veths and the bridge. The folders stay.
 */
export async function stopLab(dir: string): Promise<void> {
  let state: LabState;
  try {
    state = JSON.parse(readFileSync(join(dir, STATE), 'utf8')) as LabState;
  } catch {
    return;
  }
  await endHosts(state);
  await rm(join(dir, STATE), { force: true });
}

/** Ends the hosts and removes the network pieces of a lab's names (those that exist). */
/**
 * The lab bridges (`vdilab<tag>`) holding `<prefix>.1` whose hosts are all gone: a lab killed before its stop (its
 * namespaces removed since, or by a test run's sweep) left its bridge, and the subnet's route with it. From
 * `ip -o -4 addr show` and `ip netns list`; a live lab's bridge (one of its namespaces still there) is not one.
 */
export function deadLabBridges(addresses: string, namespaces: string, prefix: string): string[] {
  const present = new Set(namespaces.split('\n').map((l) => l.split(' ')[0]).filter(Boolean));
  const bridges = new Set<string>();
  for (const line of addresses.split('\n')) {
    const m = /^\d+:\s+(vdilab[a-z0-9]{1,6})\s+inet\s+([\d.]+)\//.exec(line);
    if (m && m[2] === `${prefix}.1`) bridges.add(m[1]!);
  }
  return [...bridges].filter((bridge) => ![...present].some((ns) => ns.startsWith(`vdilab-${bridge.slice('vdilab'.length)}-`)));
}

async function removeDeadBridges(prefix: string): Promise<void> {
  const [addresses, namespaces] = await Promise.all([runProgram('ip', ['-o', '-4', 'addr', 'show']), runProgram('ip', ['netns', 'list'])]);
  for (const bridge of deadLabBridges(addresses, namespaces, prefix)) await runProgram('ip', ['link', 'del', bridge]).catch(() => undefined);
}

async function endHosts(state: LabState): Promise<void> {
  for (const h of state.hosts) {
    // Each host's processes all live in its PID namespace: killing them ends them at once (guests too).
    const deadline = Date.now() + 10_000;
    for (let pids = processesIn(h.namespace); pids.length > 0; pids = processesIn(h.namespace)) {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // ended meanwhile
        }
      }
      if (Date.now() > deadline) throw new Error(`lab: processes of ${h.name} do not end: ${pids.join(' ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await runProgram('ip', ['link', 'del', h.veth]).catch(() => undefined);
    await runProgram('ip', ['netns', 'del', h.namespace]).catch(() => undefined);
  }
  await runProgram('ip', ['link', 'del', state.bridge]).catch(() => undefined);
}
