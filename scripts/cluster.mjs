#!/usr/bin/env node
// `npm run cluster`: the cluster mode on one machine, in one command. Steps, each its own function:
//   1. the lab: three simulated hypervisors (server/src/host/lab.ts: each a network namespace with its
//      own libvirtd and sshd, 10.231.9.0/24) with the installation's SSH key authorised;
//   2. the server: the product as `npm start` runs it (demo data, same DATA_DIR);
//   3. the hosts registered as hypervisors through the admin API, as an admin adds them in the console
//      (the host key the server reads is checked against the lab's own key before it is confirmed);
//   4. the server's own host takes only the desktops pinned to it while the cluster runs (restored at the end).
// It prints the URL, the sign-ins and the hosts and stays in the foreground until Ctrl-C or SIGTERM, then
// stops the server and the lab: nothing is left running. `npm run cluster -- stop` ends what a killed run left.
// The next issue's pieces (PostgreSQL, several server processes) come in as steps beside these.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  CLUSTER_PACKAGES, dataDirOf, ensureDebianPackages, ensureNpmPackages, ensureSupportedNode, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, publicUrlOf, root, serverPortOf, startServer, VPN_PACKAGES,
} from './lib/setup.mjs';
import { addLabHost, untilOnline } from './lib/hypervisors.mjs';

const dataDir = resolve(dataDirOf());
const labDir = join(dataDir, 'cluster-lab');
const SUBNET = '10.231.9.0/24';
const TAG = 'c';
/** the server this run started (its pid), for `stop` after a killed run */
const SERVER_PID = join(labDir, 'server.pid');
/** the server's own host's switches before this run changed them (restored at the end) */
const LOCAL_BEFORE = join(labDir, 'local-host.json');
/** the demo accounts' password when DEMO_PASSWORD is not set: generated once, kept here (0600) */
const PASSWORD_FILE = join(labDir, 'demo-password');
const LOCAL = 'local';

// Under a Node older than the product needs, everything below runs again under the pinned one.
await ensureSupportedNode();
ensureNpmPackages();
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', 'python3', 'openssl', ...GUEST_NETWORK_PACKAGES, ...VPN_PACKAGES, ...CLUSTER_PACKAGES]);
if (process.getuid?.() !== 0) throw new Error('npm run cluster needs root: it makes network namespaces and starts libvirtd and sshd in them');
const { tsImport } = await import('tsx/esm/api');
const lab = await tsImport('../server/src/host/lab.ts', import.meta.url);
const identity = await tsImport('../server/src/host/ssh-identity.ts', import.meta.url);
const { fingerprintOf } = await tsImport('../server/src/engine/libvirt/hosts.ts', import.meta.url);
const { decideAccel } = await tsImport('../server/src/engine/accel.ts', import.meta.url);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the server process of a run ----

/** The pid in SERVER_PID if that process is still this DATA_DIR's server. */
function recordedServer() {
  try {
    const pid = Number(readFileSync(SERVER_PID, 'utf8').trim());
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return cmd.includes(join(root, 'server', 'src', 'main.ts')) && env.includes(`DATA_DIR=${dataDir}`) ? pid : undefined;
  } catch {
    return undefined;
  }
}

const alive = (pid) => existsSync(`/proc/${pid}`);

/** SIGTERM (the server stops gracefully), SIGKILL after `graceMs`. */
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
  const pid = recordedServer();
  if (pid) {
    await endProcess(pid);
    log(`Stopped the cluster's server (pid ${pid})`);
  }
  await rm(SERVER_PID, { force: true });
  await lab.stopLab(labDir);
  log(`Stopped the lab in ${labDir} (if one was running)`);
  if (existsSync(LOCAL_BEFORE)) {
    log("This server's own host still takes only pinned desktops (the run was killed before it switched it back): " +
      'run `npm run cluster` and stop it with Ctrl-C, or switch it back in the console (Hypervisors → This server).');
  }
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

/** Step 2: the server, until it answers. Demo accounts get one password the run knows (DEMO_PASSWORD, else a generated one kept in the lab folder). */
async function serverUp(password) {
  const child = startServer({ ...process.env, DATA_DIR: dataDir, DEMO_PASSWORD: password });
  await writeFile(SERVER_PID, String(child.pid));
  const base = `http://127.0.0.1:${serverPortOf()}`;
  let exited = null;
  child.once('exit', (code) => (exited = code));
  for (;;) {
    if (exited !== null) throw new Error(`the server exited (code ${exited}) before it answered`);
    if (await fetch(`${base}/api/v3/categories`).then((r) => r.ok, () => false)) return { child, base };
    await sleep(250);
  }
}

/**
 * Step 3: each lab host added as an admin adds it: the first POST answers the host key the server read,
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

/**
 * Step 4: while the cluster runs, this server's own host takes only desktops pinned to it (the original's
 * `only_forced`): every other start goes to the lab, which is what a person tries here (the guest network
 * reaches the lab hosts too, so the RDP desktops run there as well). The switch is put back at the end of
 * the run (a killed run: at the end of the next one).
 */
async function localHostPinnedOnly(api) {
  const local = (await api.call('GET', '/admin/hypervisors')).body.items.find((h) => h.id === LOCAL);
  if (!existsSync(LOCAL_BEFORE)) await writeFile(LOCAL_BEFORE, JSON.stringify({ enabled: local.enabled, only_forced: local.only_forced }));
  await api.call('PUT', `/admin/hypervisors/${LOCAL}`, { only_forced: true });
}

async function localHostRestored(api) {
  if (!existsSync(LOCAL_BEFORE)) return;
  await api.call('PUT', `/admin/hypervisors/${LOCAL}`, JSON.parse(await readFile(LOCAL_BEFORE, 'utf8')));
  await rm(LOCAL_BEFORE, { force: true });
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
const leftover = recordedServer();
if (leftover) throw new Error(`a server of an earlier run is still running (pid ${leftover}): npm run cluster -- stop`);
// A WEB_DIST of its own (another checkout's build) is served as it is.
if (!process.env.WEB_DIST) ensureWebBuild();
const password = await demoPassword();
let running;
let server;
let api;
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  log('Stopping the server and the lab');
  try {
    if (api && server && server.child.exitCode === null) await localHostRestored(api).catch((err) => log(`This server's own host not switched back: ${err.message}`));
    if (server) await endProcess(server.child.pid);
    await rm(SERVER_PID, { force: true });
  } finally {
    await lab.stopLab(labDir);
  }
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stop(0));

try {
  running = await labUp();
  server = await serverUp(password);
  server.child.once('exit', (code) => {
    if (!stopping) {
      log(`The server exited (code ${code}): stopping the lab`);
      void stop(code ?? 1);
    }
  });
  api = client(server.base);
  await api.signIn('admin', password);
  const hypervisors = await registerHosts(api, running.hosts);
  await localHostPinnedOnly(api);

  const lines = [
    '',
    `  Cluster mode is running at ${publicUrlOf()}`,
    '',
    `  Sign in (category Default) as admin, manager, advanced or user with the password ${password}`,
    `  (${process.env.DEMO_PASSWORD ? 'the DEMO_PASSWORD you set' : `generated once for this DATA_DIR, kept in ${PASSWORD_FILE}; set DEMO_PASSWORD to choose one`})`,
    '',
    '  Hypervisors (console → Hypervisors):',
    ...running.hosts.map((h, i) => `    ${h.name.padEnd(9)} ${h.address.padEnd(13)} ${h.uri}  ${hypervisors[i].state}, ${hypervisors[i].cpus} CPUs, pools ${hypervisors[i].pools.map((p) => p.name).join(', ')}`),
    `    local     this server   takes only the desktops pinned to it while the cluster runs`,
    '',
    `  Desktops started in the portal run on the lab hosts (placement: most free memory, starts in flight counted).`,
    `  Their host keys: ${join(labDir, 'known_hosts')}. Ctrl-C stops the server and the lab.`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
} catch (err) {
  log(`Cluster mode did not come up: ${err.message}`);
  await stop(1);
}
