#!/usr/bin/env node
// `npm run cluster`: the cluster mode on one machine. Brings up three simulated hypervisors (the lab,
// server/src/host/lab.ts: each a network namespace with its own libvirtd and sshd, 10.231.9.0/24)
// with the installation's SSH key already authorised, prints how to reach them, and stays in the
// foreground until Ctrl-C or SIGTERM, then stops them. `npm run cluster -- stop` ends a lab a killed
// run left; `npm run cluster -- --own-pools` gives the hosts no shared storage. Each piece is one step below: the server in cluster mode comes after the lab.
import { join } from 'node:path';
import { CLUSTER_PACKAGES, ensureDebianPackages, ensureNpmPackages, log, root } from './lib/setup.mjs';

const dataDir = process.env.DATA_DIR ?? join(root, 'data');
const labDir = join(dataDir, 'cluster-lab');
const SUBNET = '10.231.9.0/24';
const TAG = 'c';

ensureNpmPackages();
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', 'python3', ...CLUSTER_PACKAGES]);
if (process.getuid?.() !== 0) throw new Error('npm run cluster needs root: it makes network namespaces and starts libvirtd and sshd in them');
const { tsImport } = await import('tsx/esm/api');
const lab = await tsImport('../server/src/host/lab.ts', import.meta.url);
const identity = await tsImport('../server/src/host/ssh-identity.ts', import.meta.url);

if (process.argv[2] === 'stop') {
  await lab.stopLab(labDir);
  log(`Stopped the lab in ${labDir} (if one was running)`);
  process.exit(0);
}

// Step 1: the hosts, with the key the server uses (DATA_DIR/ssh/id_ed25519) already authorised.
await identity.ensureSshIdentity(dataDir);
const started = Date.now();
// Their shared pool is `default` at the installation's storage folder (the NFS mount a real host would
// have at the same path): desktops placed on a host find their disks there. With `--own-pools` the
// hosts have no such pool, only their own `local` one: a desktop's first start on a host copies its
// template's base there (a job in the console's jobs; docs/decisions/0011-template-bases-on-hosts.md).
const ownPools = process.argv.includes('--own-pools');
const running = await lab.startLab({
  dir: labDir,
  subnet: SUBNET,
  hosts: 3,
  authorizedKeys: [await identity.publicKey(dataDir)],
  tag: TAG,
  ...(ownPools ? {} : { sharedPool: { name: 'default', path: join(dataDir, 'storage') } }),
});
log(`${running.hosts.length} hypervisors up in ${Date.now() - started} ms (folder ${labDir}):`);
for (const host of running.hosts) {
  process.stdout.write(`  ${host.name}  ${host.address}  ${host.uri}  pools: ${host.pools.shared.name} (${host.pools.shared.path}), local (${host.pools.local.path})\n`);
}
log(`Their host keys: ${join(labDir, 'known_hosts')}`);
log(`The installation's key (${identity.privateKeyFile(dataDir)}.pub) is already in every host's authorized_keys.`);
log(`Try: virsh -c 'qemu+libssh://root@${running.hosts[0].address}/system?keyfile=${identity.privateKeyFile(dataDir)}&known_hosts=${join(labDir, 'known_hosts')}&sshauth=privkey' hostname`);

log('Add them in the console (Hypervisors → Add, the URI above, confirm the host key) of a server using the same DATA_DIR (npm start).');

log('Ctrl-C stops the lab');
const keepAlive = setInterval(() => undefined, 1 << 30);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log('Stopping the lab');
    await running.stop();
    clearInterval(keepAlive);
    process.exit(0);
  });
}
