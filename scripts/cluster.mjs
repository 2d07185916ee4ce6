#!/usr/bin/env node
// `npm run cluster`: the cluster mode on one machine, in one command. Steps, each its own function:
//   1. the lab: three simulated hypervisors (server/src/host/lab.ts: each a network namespace with its
//      own libvirtd and sshd, 10.231.9.0/24) with the installation's SSH key authorised;
//   2. the database: Debian's PostgreSQL, with a role and a database of this DATA_DIR's own (its generated
//      password kept in the lab folder);
//   3. three server processes of one installation (same DATABASE_URL, DATA_DIR, secret), each on its own
//      port, all given this machine's pieces (guest network, VPN, RD Gateway; the bastion when its ports
//      are set): one of them runs them at a time, another takes them over when it dies (modules/pieces).
//      None runs a local hypervisor: desktops run on the lab hosts. The first comes up alone and the hosts are registered
//      through it as an admin adds them in the console (the host key the server reads is checked against
//      the lab's own key before it is confirmed); the other two then start and connect to the stored hosts;
//   4. HAProxy in front (the shipped deploy/haproxy/haproxy.cfg with these addresses) on PORT (8080).
// It prints the balancer's URL, the sign-ins and the hosts and stays in the foreground until Ctrl-C or
// SIGTERM, then stops the processes, HAProxy and the lab: nothing is left running (Debian's PostgreSQL, a
// system service, stays). `npm run cluster -- stop` ends what a killed run left.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import {
  CLUSTER_PACKAGES, dataDirOf, ensureDebianPackages, ensureNpmPackages, ensureSupportedNode, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, publicUrlOf, root, serverPortOf, startDebianPostgres, startServer, VPN_PACKAGES,
} from './lib/setup.mjs';
import { haproxyConfig, serverStates, startHaproxy } from './lib/haproxy.mjs';
import { addLabHost, untilOnline } from './lib/hypervisors.mjs';

const dataDir = resolve(dataDirOf());
const labDir = join(dataDir, 'cluster-lab');
/** The lab's addresses and the tag of its namespaces (CLUSTER_LAB_SUBNET, CLUSTER_LAB_TAG: two labs side by side). */
const SUBNET = process.env.CLUSTER_LAB_SUBNET ?? '10.231.9.0/24';
const TAG = process.env.CLUSTER_LAB_TAG ?? 'c';
/** The balancer on PORT (default 8080), its stats page on PORT+10 and the server processes on PORT+11… (127.0.0.1). */
const BALANCER_PORT = Number(serverPortOf());
const STATS = `127.0.0.1:${BALANCER_PORT + 10}`;
const PROCESS_PORTS = [11, 12, 13].map((d) => BALANCER_PORT + d);
/** the processes and HAProxy this run started (their pids), for `stop` after a killed run */
const PIDS = join(labDir, 'pids.json');
/** the demo accounts' password when DEMO_PASSWORD is not set: generated once, kept here (0600) */
const PASSWORD_FILE = join(labDir, 'demo-password');
/** the cluster's PostgreSQL role's password: generated once, kept here (0600) */
const PG_PASSWORD_FILE = join(labDir, 'postgres-password');

// Under a Node older than the product needs, everything below runs again under the pinned one.
await ensureSupportedNode();
ensureNpmPackages();
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', 'python3', 'openssl', 'fonts-dejavu-core', ...GUEST_NETWORK_PACKAGES, ...VPN_PACKAGES, ...CLUSTER_PACKAGES]);
if (process.getuid?.() !== 0) throw new Error('npm run cluster needs root: it makes network namespaces and starts libvirtd and sshd in them');
const { tsImport } = await import('tsx/esm/api');
const lab = await tsImport('../server/src/host/lab.ts', import.meta.url);
const identity = await tsImport('../server/src/host/ssh-identity.ts', import.meta.url);
const { fingerprintOf } = await tsImport('../server/src/engine/libvirt/hosts.ts', import.meta.url);
const { decideAccel } = await tsImport('../server/src/engine/accel.ts', import.meta.url);
const { GuestNetwork } = await tsImport('../server/src/network/guest-network.ts', import.meta.url);

/**
 * The guest network the processes left: a stopping process leaves it to the next one (modules/pieces), so
 * once all have ended it is removed here (the lab's guests end with the lab).
 */
const removeGuestNetwork = () =>
  GuestNetwork.dormant({
    cidr: process.env.GUEST_NETWORK ?? '10.2.0.0/16',
    namespace: process.env.GUEST_NETWORK_NAMESPACE,
    linkPrefix: process.env.GUEST_NETWORK_LINK_PREFIX,
    dataDir,
    stateDir: join(dataDir, 'network'),
  }).close({ teardown: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the processes of a run ----

/** The pids in PIDS still running as this DATA_DIR's server processes or this lab's HAProxy. */
function recordedProcesses() {
  let pids = [];
  try {
    pids = JSON.parse(readFileSync(PIDS, 'utf8'));
  } catch {
    return [];
  }
  return pids.filter((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes(join(labDir, 'haproxy.cfg'))) return true;
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      return cmd.includes(join(root, 'server', 'src', 'main.ts')) && env.includes(`DATA_DIR=${dataDir}`);
    } catch {
      return false;
    }
  });
}

const alive = (pid) => existsSync(`/proc/${pid}`);

/** SIGTERM (a server drains and stops gracefully), SIGKILL after `graceMs`. */
async function endProcess(pid, graceMs = 30_000) {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

if (process.argv[2] === 'stop') {
  await mkdir(labDir, { recursive: true });
  const pids = recordedProcesses();
  await Promise.all(pids.map((pid) => endProcess(pid)));
  if (pids.length > 0) log(`Stopped the cluster's server processes and HAProxy (pids ${pids.join(', ')})`);
  await rm(PIDS, { force: true });
  await removeGuestNetwork();
  await lab.stopLab(labDir);
  log(`Stopped the lab in ${labDir} (if one was running)`);
  process.exit(0);
}

// ---- HTTP as the person's console does ----

function client(base) {
  let token;
  const call = async (method, path, body) => {
    const res = await fetch(`${base}/api/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    if (!res.ok) throw Object.assign(new Error(`${method} ${path}: ${res.status} ${json?.description_code ?? ''} ${json?.description ?? text.slice(0, 200)}`), { status: res.status, body: json });
    return { status: res.status, body: json };
  };
  return {
    call,
    async signIn(username, password) {
      const form = new FormData();
      form.append('username', username);
      form.append('password', password);
      const res = await fetch(`${base}/authentication/login?provider=form&category_id=default`, { method: 'POST', body: form });
      if (!res.ok) throw new Error(`sign-in of ${username}: ${res.status} ${await res.text()}`);
      token = await res.text();
    },
  };
}

// ---- the steps ----

/** Step 1: the hosts, with the key the server uses (DATA_DIR/ssh/id_ed25519) already authorised. */
async function labUp() {
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
    // The hosts accelerate as this machine's own engine would (ACCEL, else what /dev/kvm really allows).
    kvm: decideAccel(process.env.ACCEL ?? 'auto').accel === 'kvm',
  });
  log(`${running.hosts.length} hypervisors up in ${Date.now() - started} ms (folder ${labDir})`);
  return running;
}

/**
 * Step 2: the cluster's database on Debian's PostgreSQL: a role and a database named after this DATA_DIR
 * (two checkouts' clusters never share one), the role's password generated once and kept in the lab folder.
 */
async function databaseUp() {
  const port = startDebianPostgres();
  const name = `vdi_cluster_${createHash('sha256').update(dataDir).digest('hex').slice(0, 8)}`;
  if (!existsSync(PG_PASSWORD_FILE)) await writeFile(PG_PASSWORD_FILE, randomBytes(18).toString('hex'), { mode: 0o600 });
  const password = (await readFile(PG_PASSWORD_FILE, 'utf8')).trim();
  const psql = (sql) => execFileSync('su', ['postgres', '-c', `psql -v ON_ERROR_STOP=1 -qtA -p ${port} -c "${sql}"`], { encoding: 'utf8' }).trim();
  const verb = psql(`SELECT 1 FROM pg_roles WHERE rolname = '${name}'`) === '1' ? 'ALTER' : 'CREATE';
  psql(`${verb} ROLE ${name} LOGIN PASSWORD '${password}'`);
  if (psql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`) !== '1') psql(`CREATE DATABASE ${name} OWNER ${name}`);
  log(`PostgreSQL: database ${name} on port ${port} (its role's password in ${PG_PASSWORD_FILE})`);
  return `postgres://${name}:${password}@127.0.0.1:${port}/${name}`;
}

/**
 * Step 3: server process `i` (SERVER_ID p1…), until its health route answers. Demo accounts get one
 * password the run knows (DEMO_PASSWORD, else a generated one kept in the lab folder).
 */
async function processUp(i, password, databaseUrl) {
  const child = startServer({
    ...process.env,
    DATA_DIR: dataDir,
    DEMO_PASSWORD: password,
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: publicUrlOf(),
    PORT: String(PROCESS_PORTS[i]),
    HOST: '127.0.0.1',
    SERVER_ID: `p${i + 1}`,
    // Desktops run on the lab's hosts. This machine's pieces (GUEST_NETWORK, VPN_PORT, RDP_GATEWAY_PORT,
    // BASTION_*: as set, else their defaults) are given to all three; one runs them at a time.
    LOCAL_HYPERVISOR: 'off',
    // The balancer's forwarded client address is believed; a stop drains for longer than its checks take.
    TRUST_PROXY: 'loopback',
    SHUTDOWN_DRAIN_SECONDS: '3',
  });
  const base = `http://127.0.0.1:${PROCESS_PORTS[i]}`;
  let exited = null;
  child.once('exit', (code) => (exited = code));
  for (;;) {
    if (exited !== null) throw new Error(`server process p${i + 1} exited (code ${exited}) before it answered`);
    if (await fetch(`${base}/api/v3/health`).then((r) => r.ok, () => false)) return { child, base, id: `p${i + 1}` };
    await sleep(250);
  }
}

/**
 * Step 3 (on the first process): each lab host added as an admin adds it: the first POST answers the host key the server read,
 * which must be the lab's own (else nothing is confirmed), the second confirms it. A host already stored
 * (an earlier run: the lab keeps its keys) reconnects by itself; one stored with a key the lab no longer
 * has (its folder was removed) is removed and added again.
 */
async function registerHosts(api, hosts) {
  const stored = (await api.call('GET', '/admin/hypervisors')).body.items;
  const ids = [];
  for (const h of hosts) {
    const before = stored.find((s) => s.uri === h.uri);
    if (before && (await identity.readKnownHost(dataDir, before.id)) === h.hostKey) {
      ids.push(before.id);
      continue;
    }
    if (before) {
      log(`${h.name} was stored with another host key (the lab's folder was made anew): removed and added again`);
      await api.call('DELETE', `/admin/hypervisors/${before.id}`);
    }
    ids.push((await addLabHost(api.call, h, fingerprintOf)).id);
  }
  // Online: connected (at once for the added ones, in the background for the stored ones).
  return untilOnline(api.call, ids);
}

/** Step 4: HAProxy on the shipped configuration, until it holds every process up. */
async function balancerUp() {
  const haproxy = startHaproxy({
    dir: labDir,
    stdio: 'inherit',
    config: haproxyConfig({ bind: `:${BALANCER_PORT}`, stats: STATS, servers: PROCESS_PORTS.map((port, i) => ({ name: `p${i + 1}`, address: `127.0.0.1:${port}` })) }),
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (haproxy.child.exitCode !== null) throw new Error(`HAProxy exited (code ${haproxy.child.exitCode})`);
    const states = await serverStates(`http://${STATS}/`).catch(() => ({}));
    if (PROCESS_PORTS.every((_, i) => states[`p${i + 1}`]?.startsWith('UP'))) return haproxy;
    if (Date.now() > deadline) throw new Error(`HAProxy does not hold every process up: ${JSON.stringify(states)}`);
    await sleep(250);
  }
}

async function demoPassword() {
  if (process.env.DEMO_PASSWORD) return process.env.DEMO_PASSWORD;
  if (existsSync(PASSWORD_FILE)) return (await readFile(PASSWORD_FILE, 'utf8')).trim();
  const password = randomBytes(12).toString('base64url');
  await writeFile(PASSWORD_FILE, password, { mode: 0o600 });
  return password;
}

// ---- the run ----

await mkdir(labDir, { recursive: true });
const leftover = recordedProcesses();
if (leftover.length > 0) throw new Error(`processes of an earlier run are still running (pids ${leftover.join(', ')}): npm run cluster -- stop`);
// A WEB_DIST of its own (another checkout's build) is served as it is.
if (!process.env.WEB_DIST) ensureWebBuild();
const password = await demoPassword();
const servers = [];
let haproxy;
let stopping = false;
const recordPids = () => writeFile(PIDS, JSON.stringify([...servers.map((s) => s.child.pid), ...(haproxy ? [haproxy.child.pid] : [])]));
async function stop(code) {
  if (stopping) return;
  stopping = true;
  log('Stopping the server processes, HAProxy and the lab');
  try {
    await Promise.all(servers.map((s) => endProcess(s.child.pid)));
    await haproxy?.stop();
    await rm(PIDS, { force: true });
    await removeGuestNetwork();
  } finally {
    await lab.stopLab(labDir);
  }
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stop(0));
/** A process that ends on its own leaves the others serving (the balancer leaves it out); the last one ends the run. */
const watch = (server) =>
  server.child.once('exit', (code) => {
    if (stopping) return;
    if (servers.every((s) => s.child.exitCode !== null || s.child.signalCode !== null)) {
      log('Every server process has exited: stopping HAProxy and the lab');
      void stop(code ?? 1);
    } else log(`Server process ${server.id} exited (code ${code}): the balancer sends to the others`);
  });

try {
  const running = await labUp();
  const databaseUrl = await databaseUp();
  servers.push(await processUp(0, password, databaseUrl));
  await recordPids();
  watch(servers[0]);
  const api = client(servers[0].base);
  await api.signIn('admin', password);
  const hypervisors = await registerHosts(api, running.hosts);
  for (const server of await Promise.all([1, 2].map((i) => processUp(i, password, databaseUrl)))) {
    servers.push(server);
    watch(server);
  }
  await recordPids();
  haproxy = await balancerUp();
  await recordPids();

  const lines = [
    '',
    `  Cluster mode is running at ${publicUrlOf()} (HAProxy: deploy/haproxy/haproxy.cfg; its stats at http://${STATS}/)`,
    '',
    `  Server processes (one PostgreSQL, one DATA_DIR): ${servers.map((s) => `${s.id} ${s.base}`).join(', ')}`,
    `  Sign in (category Default) as admin, manager, advanced or user with the password ${password}`,
    `  (${process.env.DEMO_PASSWORD ? 'the DEMO_PASSWORD you set' : `generated once for this DATA_DIR, kept in ${PASSWORD_FILE}; set DEMO_PASSWORD to choose one`})`,
    '',
    '  Hypervisors (console → Hypervisors):',
    ...running.hosts.map((h, i) => `    ${h.name.padEnd(9)} ${h.address.padEnd(13)} ${h.uri}  ${hypervisors[i].state}, ${hypervisors[i].cpus} CPUs, pools ${hypervisors[i].pools.map((p) => p.name).join(', ')}`),
    `    local     offline: no server process runs desktops on this machine in cluster mode (LOCAL_HYPERVISOR=off)`,
    '',
    `  Desktops started in the portal run on the lab hosts (placement: most free memory, starts in flight counted).`,
    `  This machine's pieces (guest network, VPN, RD Gateway, bastion) run in one process at a time: the one named by`,
    `  SELECT application_name FROM pg_locks JOIN pg_stat_activity USING (pid) WHERE locktype = 'advisory' AND classid = 1986292021 AND objsubid = 2;`,
    `  Try a failover: kill -9 one of the processes; the balancer leaves it out and the others answer (and take the pieces over).`,
    `  Their host keys: ${join(labDir, 'known_hosts')}. Ctrl-C stops the processes, HAProxy and the lab.`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
} catch (err) {
  log(`Cluster mode did not come up: ${err.message}`);
  await stop(1);
}
