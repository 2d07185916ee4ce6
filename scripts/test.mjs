#!/usr/bin/env node
// `npm test`: installs what is missing, then runs every suite — type checks, unit and API
// tests (Vitest, PGlite), the database suite again on PostgreSQL when one can be started,
// and the end-to-end journeys (Playwright driving Debian's Chromium). Ends with one line:
// "N passed, N failed, N skipped", after the list of what was skipped and why, what did not run
// (counted as failed) and what the tests left running (ended, and counted as failed).
//
// The runners inherit TEST_SLOWDOWN (how slow this machine is now, measured here: the tests'
// time limits scale with it) and VDI_TEST_RUN (the mark by which this run finds its processes).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CLUSTER_PACKAGES, dropPostgresRole, ensureDebianPackages, ensureNpmPackages, ensureSupportedNode, ensurePostgres, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, RDP_GUEST_PACKAGES, RDP_TEST_PACKAGES, root, VPN_PACKAGES, LDAP_PACKAGES } from './lib/setup.mjs';
import { describeSlowdown, measureSlowdown } from './lib/slowdown.mjs';
import { TEST_BROWSER_PACKAGES } from './lib/browser.mjs';
import { endTestRun, ensureTestRun, registerNamespace, sweepLeftovers } from './lib/test-run.mjs';

// Under a Node older than the product needs, everything below runs again under the pinned one.
await ensureSupportedNode();

const reports = join(root, '.tmp', 'reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

ensureNpmPackages();
// virt-viewer and xvfb: a real SPICE client opens the .vv files in a test. fonts-dejavu-core and fonts-noto-cjk: the
// credentials sheet's PDF; poppler-utils: its tests read it back; qemu-guest-agent: copied into the demo guests (files panel).
ensureDebianPackages([...TEST_BROWSER_PACKAGES, 'fonts-noto-cjk', 'fonts-dejavu-core', 'poppler-utils', 'qemu-system-x86', 'qemu-utils', 'qemu-guest-agent', 'python3', 'virt-viewer', 'xvfb', 'openssh-client', 'curl', ...GUEST_NETWORK_PACKAGES, ...RDP_GUEST_PACKAGES, ...RDP_TEST_PACKAGES, ...VPN_PACKAGES, ...CLUSTER_PACKAGES, ...LDAP_PACKAGES]);
const postgresUrl = ensurePostgres();
// The demo guest that test desktops boot, built once here rather than by parallel suites.
const testImages = process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'test-cache', 'images');
log('Demo guest image for the tests');
if (spawnSync('bash', [join(root, 'scripts', 'guest', 'build-demo-guest.sh'), testImages], { cwd: root, stdio: 'inherit' }).status !== 0) {
  throw new Error('could not build the demo guest image');
}
// The "Debian desktop (RDP)" guest (xrdp), built once too (about a minute) and cached beside it.
log('RDP guest image for the tests');
if (spawnSync('bash', [join(root, 'scripts', 'guest', 'build-demo-guest.sh'), testImages], { cwd: root, stdio: 'inherit', env: { ...process.env, GUEST_VARIANT: 'rdp' } }).status !== 0) {
  throw new Error('could not build the RDP guest image');
}

const totals = { passed: 0, failed: 0, skipped: 0 };
const bin = (name) => join(root, 'node_modules', '.bin', name);

const began = Date.now();
const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;

/** A suite run whose output goes straight through, leaving the event loop free (the runners beside it go on printing). */
function stepBeside(title, cmd, args, env = {}) {
  log(title);
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('close', (code) => {
      log(`${title}: ${code === 0 ? 'done' : 'failed'} in ${minutes(Date.now() - t0)}`);
      resolve(code === 0);
    });
  });
}

/**
 * A runner beside others: each line it prints goes out whole, after its tag. `nice`: it runs at
 * that lower priority, on the time the others leave idle.
 */
function side(tag, cmd, args, env = {}, { nice = 0 } = {}) {
  const t0 = Date.now();
  log(`${tag}: started`);
  return new Promise((resolve) => {
    const [c, a] = nice > 0 ? ['nice', ['-n', String(nice), cmd, ...args]] : [cmd, args];
    const child = spawn(c, a, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${tag}] ${line}\n`));
    }
    child.on('close', (code) => {
      log(`${tag}: ${code === 0 ? 'done' : 'failed'} in ${minutes(Date.now() - t0)}`);
      resolve(code === 0);
    });
  });
}

/** What the summary lists before the closing line. */
const listed = { failed: [], skipped: [], unexplained: [], notRun: [], fileErrors: [] };

/** Counts a Vitest run from its outcomes (scripts/lib/vitest-outcomes.mjs). */
function countVitest(file) {
  if (!existsSync(file)) return false;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  totals.passed += r.passed;
  totals.failed += r.failed;
  for (const t of r.failedTests ?? []) listed.failed.push(`${t.file} › ${t.name}: ${t.error}`);
  for (const t of r.skipped) {
    if (t.reason?.includes('(not installed)')) {
      // Installed above: such a skip here means the set-up is broken.
      totals.failed++;
      listed.unexplained.push(`${t.file} › ${t.name}: ${t.reason}, though npm test installs it`);
    } else if (t.reason && !t.todo) {
      totals.skipped++;
      listed.skipped.push(`${t.file} › ${t.name}: ${t.reason}`);
    } else {
      // A skip must say why (server/test/helpers/can-run.ts); a todo is not a test.
      totals.failed++;
      listed.unexplained.push(`${t.file} › ${t.name}${t.todo ? ' (todo)' : ''}`);
    }
  }
  // Taken down by a set-up of their file that failed or timed out: failures, not skips.
  for (const t of r.notRun) {
    totals.failed++;
    listed.notRun.push(`${t.file} › ${t.name}: ${t.error}`);
  }
  // A file that failed outside its tests (an import, an afterAll): one failure unless its tests already count.
  for (const e of r.fileErrors) {
    if (e.failedTests === 0) totals.failed++;
    listed.fileErrors.push(`${e.file}: ${e.error}`);
  }
  totals.failed += r.unhandled.length;
  for (const e of r.unhandled) listed.fileErrors.push(`(unhandled) ${e}`);
  return true;
}

function countPlaywright(file, tag) {
  if (!existsSync(file)) return false;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const walk = (suite, outer) => {
    // A file's own suite is named after the file, which each name starts with already.
    const path = suite.title && suite.title !== suite.file ? [...outer, suite.title] : outer;
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        const name = `${tag} ${spec.file} › ${[...path, spec.title].join(' › ')}`;
        if (t.status === 'expected' || t.status === 'flaky') totals.passed++;
        else if (t.status === 'unexpected') {
          totals.failed++;
          const error = (t.results ?? []).at(-1)?.error?.message ?? '';
          listed.failed.push(`${name}: ${error.replace(/\u001b\[[0-9;]*m/g, '').split('\n')[0].slice(0, 300)}`);
        }
        else if (t.status === 'skipped') {
          // test.skip(condition, 'reason') and test.fixme carry their reason; a test skipped
          // without one did not run because something before it failed (a hook, a serial group).
          const mark = (t.annotations ?? []).find((a) => a.type === 'skip' || a.type === 'fixme');
          if (mark?.description) {
            totals.skipped++;
            listed.skipped.push(`${name}: ${mark.description}`);
          } else if (mark) {
            totals.failed++;
            listed.unexplained.push(name);
          } else {
            totals.failed++;
            listed.notRun.push(`${name}: did not run (a hook or an earlier test of its group failed)`);
          }
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, path);
  };
  for (const suite of r.suites ?? []) walk(suite, []);
  // Errors outside any test (the web server did not start, a spec did not load) count as failures.
  for (const e of r.errors ?? []) {
    totals.failed++;
    listed.fileErrors.push(`${tag}: ${(e.message ?? String(e)).split('\n')[0]}`);
  }
  return true;
}

let broken = false;

// `TEST_ONLY=vitest,e2e` (any of types, lint, vitest, postgres, e2e) runs only those suites: for a
// person working on one part. The closing line then counts only what ran.
const only = new Set((process.env.TEST_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean));
const runs = (suite) => only.size === 0 || only.has(suite);
if (only.size > 0) log(`Only: ${[...only].join(', ')} (TEST_ONLY)`);

// This run's mark (its processes, and their children, carry it) and the machine's slowdown now.
ensureTestRun(root);
// Stopped from outside (a CI job cancelled, Ctrl-C), or left by what started it (npm and its shell end on a SIGTERM
// without passing it on): nothing the run started outlives it — its runners, their servers, machines and guest
// networks (the same sweep as at the end), then a failed exit.
function stopped(why) {
  log(`Stopped (${why}): ending what the run started`);
  const ended = sweepLeftovers();
  endTestRun();
  log(`Ended ${ended.length} process(es) of the run`);
  process.exit(1);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => stopped(signal));
const startedBy = process.ppid;
setInterval(() => process.ppid !== startedBy && stopped('the command that started it ended'), 2_000).unref();
if (!(Number(process.env.TEST_SLOWDOWN) >= 1)) {
  const slowdown = measureSlowdown();
  process.env.TEST_SLOWDOWN = String(slowdown.factor);
  log(describeSlowdown(slowdown));
} else log(`TEST_SLOWDOWN=${process.env.TEST_SLOWDOWN} (given)`);

// The web build runs beside the checks (started after the measurement, which would count it as
// load); Vitest waits for it (the RDP viewer tests open the built pages, and skip without them).
const webBuilt = ensureWebBuild({ background: true });

// Type checks and the lint (`npm run lint`: layers, cycles): a failure counts as one failed test.
// They run beside Vitest at a lower priority, on the time its waits on guests and timers leave
// idle (about a tenth of two cores over its 11 minutes: more than the checks need).
const checks = [
  ...(runs('types') ? ['contracts', 'server', 'web'].map((p) => side(`Type check: ${p}`, bin('tsc'), ['-p', p, '--noEmit'], {}, { nice: 10 })) : []),
  ...(runs('lint') ? [side('Lint', 'npm', ['run', 'lint', '--silent'], {}, { nice: 10 })] : []),
];

const webReady = await webBuilt;
if (!webReady) {
  totals.failed++;
  listed.fileErrors.push('the web portal did not build: the journeys and the browser RDP tests did not run');
}

const outcomesReporter = join(root, 'scripts', 'lib', 'vitest-outcomes.mjs');
const vitestJson = join(reports, 'vitest.json');
if (runs('vitest')) {
  await stepBeside('Unit, API and engine tests (Vitest, embedded PGlite)', bin('vitest'), ['run', '--reporter=default', `--reporter=${outcomesReporter}`], { VITEST_OUTCOMES: vitestJson });
  if (!countVitest(vitestJson)) broken = true;
}
const checkNames = [...(runs('types') ? ['type check: contracts', 'type check: server', 'type check: web'] : []), ...(runs('lint') ? ['lint'] : [])];
for (const [i, ok] of (await Promise.all(checks)).entries()) {
  if (ok) totals.passed++;
  else {
    totals.failed++;
    listed.failed.push(`${checkNames[i]} (its output above)`);
  }
}

// The journeys in shards side by side, each against a server, database and guest network of
// its own (ports 20 apart): most of a journey's time is waiting on a guest or a timer, so two
// shards take little more than half the time of one.
const e2eFiles = runs('e2e') && webReady ? readdirSync(join(root, 'web', 'e2e')).filter((f) => f.endsWith('.spec.ts')).sort() : [];
const shards = Math.max(1, Math.min(Number(process.env.E2E_SHARDS ?? 2), e2eFiles.length));
const basePort = Number(process.env.E2E_PORT ?? 18731);
// Files go to the shard with the least work so far, longest first, by the seconds each took in a
// measured run (web/e2e/durations.json: only the balance depends on it; a file not listed counts 60 s).
const seconds = JSON.parse(readFileSync(join(root, 'web', 'e2e', 'durations.json'), 'utf8'));
const bins = Array.from({ length: shards }, () => ({ load: 0, files: [] }));
for (const f of [...e2eFiles].sort((a, b) => (seconds[b] ?? 60) - (seconds[a] ?? 60) || a.localeCompare(b))) {
  const bin = bins.reduce((least, b) => (b.load < least.load ? b : least));
  bin.load += seconds[f] ?? 60;
  bin.files.push(f);
}
const e2eRuns = bins.filter((bin) => bin.files.length > 0).map((bin, i) => {
  const port = basePort + 20 * i;
  const tag = shards > 1 ? `e2e ${i + 1}/${shards}` : 'e2e';
  // Within a shard the files keep their usual (name) order.
  return { port, files: bin.files.sort().map((f) => `e2e/${f}`), tag, json: join(reports, `playwright-${i + 1}.json`) };
});
if (e2eRuns.length > 0) log(`End-to-end journeys (Playwright, Chromium): ${e2eFiles.length} files in ${e2eRuns.length} shard(s)`);
// Each shard's server names its guest network after its data directory: noted, for the final check.
const dataDirOf = (port) => join(root, '.tmp', `e2e-data-${port}`);
const names = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import('./server/src/network/plan.ts').then((m) => { for (const d of ${JSON.stringify(e2eRuns.map((r) => dataDirOf(r.port)))}) console.log(m.networkNames(d).namespace); })`], { cwd: root, encoding: 'utf8' });
for (const ns of names.stdout?.split('\n').filter(Boolean) ?? []) registerNamespace(ns);
// The database suite again on PostgreSQL (and the pools' giving, one statement that PostgreSQL plans), and the server processes sharing one PostgreSQL
// (server/test/processes: several processes, a load balancer), beside the journeys: they wait on
// processes and timers most of their time.
const pgJson = join(reports, 'vitest-postgres.json');
const pgRun =
  postgresUrl && runs('postgres')
    ? side('PostgreSQL', bin('vitest'), ['run', '--project', 'server', 'test/db', 'test/processes', 'test/api/desktop-pools.test.ts', '--passWithNoTests', '--reporter=default', `--reporter=${outcomesReporter}`], {
        TEST_DATABASE_URL: postgresUrl,
        VITEST_OUTCOMES: pgJson,
      })
    : undefined;
const e2eDone = await Promise.all(
  e2eRuns.map((r) =>
    side(r.tag, bin('playwright'), ['test', '-c', 'web/playwright.config.ts', ...r.files], {
      PLAYWRIGHT_JSON_OUTPUT_NAME: r.json,
      E2E_PORT: String(r.port),
      E2E_DATA_DIR: dataDirOf(r.port),
    }),
  ),
);
for (const r of e2eRuns) if (!countPlaywright(r.json, `[${r.tag}]`)) broken = true;
if (pgRun) {
  await pgRun;
  if (!countVitest(pgJson)) broken = true;
}
// (made at the start whatever runs: a run without the PostgreSQL suite leaves no role either)
dropPostgresRole(postgresUrl);
if (e2eDone.some((ok) => !ok)) log('End-to-end journeys: a shard failed (its list above)');

if (broken) {
  log('A runner ended without a report: counted as a failure');
  totals.failed++;
}

// Nothing of the tests may outlive them: what carries this run's mark now is a leftover.
const leftovers = sweepLeftovers();
endTestRun();
totals.failed += leftovers.length;

const section = (title, lines) => {
  if (lines.length === 0) return;
  process.stdout.write(`\n${title} (${lines.length}):\n${lines.map((l) => `  ${l}\n`).join('')}`);
};
section('Skipped: cannot run on this machine', listed.skipped);
section('FAILED', listed.failed);
section('FAILED: skipped without a reason (or for a program npm test installs)', listed.unexplained);
section('FAILED: did not run, their set-up failed or timed out', listed.notRun);
section('Failed outside a test', listed.fileErrors);
section('FAILED: left running after the tests (ended now)', leftovers);
log(`Everything in ${minutes(Date.now() - began)} (TEST_SLOWDOWN=${process.env.TEST_SLOWDOWN})`);
process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(totals.failed > 0 ? 1 : 0);
