// What a test run leaves running. Every process a run starts carries VDI_TEST_RUN=<id> in its
// environment (`npm test` sets it, a Vitest started by hand sets it in its configuration; children
// inherit it, QEMU, dnsmasq and wireguard-go included), so a run finds its own processes in
// /proc/<pid>/environ and never touches another run's. Network namespaces have no environment:
// a test that makes one registers its name in the run's folder (VDI_TEST_RUN_DIR), and a
// namespace one of the run's processes is in counts too. Plain Node.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const MARK = 'VDI_TEST_RUN';

/** Gives this process (and so everything it starts) a run id and a folder, unless it has them. */
export function ensureTestRun(root) {
  if (!process.env[MARK]) {
    process.env[MARK] = `${process.pid}-${randomBytes(4).toString('hex')}`;
    process.env.VDI_TEST_RUN_OWNER = String(process.pid);
  }
  if (!process.env.VDI_TEST_RUN_DIR) {
    process.env.VDI_TEST_RUN_DIR = join(root, '.tmp', `test-run-${process.env[MARK]}`);
    mkdirSync(process.env.VDI_TEST_RUN_DIR, { recursive: true });
  }
  return process.env[MARK];
}

/** Notes a network namespace a test made (and must remove), with the test file's mark. */
export function registerNamespace(name) {
  noteOfRun('namespaces', name);
}

/**
 * Notes a network link a test made on this machine's side (a lab's bridge: its hosts' veths go with their namespaces,
 * the bridge stays), with the test file's mark: a run killed before its clean-up left one, and the next lab on the same
 * addresses could not reach its hosts.
 */
export function registerLink(name) {
  noteOfRun('links', name);
}

function noteOfRun(list, name) {
  const dir = process.env.VDI_TEST_RUN_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, list), `${process.env.VDI_TEST_FILE ?? '-'} ${name}\n`);
}

/** The names noted in the run's `list` (of one test file: `file`). */
function notedOfRun(list, file) {
  try {
    return readFileSync(join(process.env.VDI_TEST_RUN_DIR ?? '/nonexistent', list), 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .filter(([f, name]) => name && (file === undefined || f === file))
      .map(([, name]) => name);
  } catch {
    return [];
  }
}

const environOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return [];
  }
};

const statOf = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], ppid: Number(rest[1]), session: Number(rest[3]) };
  } catch {
    return undefined;
  }
};

const commandOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 160);
  } catch {
    return '?';
  }
};

/** This process and its ancestors: they carry the mark and are not left-overs. */
function lineage() {
  const ours = new Set();
  for (let pid = process.pid; pid > 1 && !ours.has(pid); pid = statOf(pid)?.ppid ?? 0) ours.add(pid);
  return ours;
}

/**
 * Live processes whose environment has `name=value`, not this process nor its ancestors. Its
 * children: `children: false` leaves them out (a runner's workers, still ending); 'detached'
 * counts only those in a session of their own (QEMU, dnsmasq: they outlive us by design), not
 * a helper of this process that ends with it (the engine's program helper).
 */
export function markedProcesses(name, value, { except = [], children = true } = {}) {
  if (!value) return [];
  const skip = lineage();
  const session = statOf(process.pid)?.session;
  for (const pid of except) skip.add(pid);
  const found = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || skip.has(pid)) continue;
    const v = environOf(pid).find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
    if (v !== value) continue;
    const st = statOf(pid);
    if (!st || st.state === 'Z' || st.state === 'X') continue;
    if (st.ppid === process.pid && (children === false || (children === 'detached' && st.session === session))) continue;
    found.push({ pid, command: commandOf(pid) });
  }
  return found;
}

const ip = (args) => {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};

/** Namespaces of this run (of one test file: `file`) still present: registered ones, and those a process of it is in. */
export function runNamespaces(processes, file) {
  const listed = ip(['netns', 'list']).split('\n').map((l) => l.split(' ')[0]).filter(Boolean);
  const registered = notedOfRun('namespaces', file);
  const pids = new Set(processes.map((p) => String(p.pid)));
  return listed.filter((ns) => registered.includes(ns) || ip(['netns', 'pids', ns]).split('\n').some((p) => pids.has(p.trim())));
}

/**
 * Ends what this run left running (SIGKILL) and removes its namespaces; answers one line per
 * thing found (empty: nothing was left). `file`: only what one test file (VDI_TEST_FILE) left.
 */
export function sweepLeftovers({ file, except = [], children = true } = {}) {
  const find = () => (file ? markedProcesses('VDI_TEST_FILE', file, { except, children }) : markedProcesses(MARK, process.env[MARK], { except, children }));
  // A helper whose parent has just ended (a runner's worker and its program helper) ends on its
  // own when it sees its pipe close: what is still there after a short grace is a leftover.
  let processes = find();
  for (const until = Date.now() + 2000; processes.length > 0 && Date.now() < until; processes = find()) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  const nss = runNamespaces(processes, file);
  for (const p of processes) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  for (const ns of nss) ip(['netns', 'delete', ns]);
  // (after the namespaces: a lab's veths went with them; its bridge is still here)
  const links = [...new Set(notedOfRun('links', file))].filter((name) => ip(['-o', 'link', 'show', 'dev', name]).trim() !== '');
  for (const name of links) ip(['link', 'delete', name]);
  return [...processes.map((p) => `process ${p.pid}: ${p.command}`), ...nss.map((ns) => `network namespace ${ns}`), ...links.map((name) => `network link ${name}`)];
}

/** True in the process that made the run's id (the one to sweep when its runners are done). */
export const ownsTestRun = () => process.env.VDI_TEST_RUN_OWNER === String(process.pid);

/** Removes the run's folder (after the sweep). */
export function endTestRun() {
  if (process.env.VDI_TEST_RUN_DIR) rmSync(process.env.VDI_TEST_RUN_DIR, { recursive: true, force: true });
}
