#!/usr/bin/env node
// `npm test`: installs what is missing, then runs every suite — type checks, unit and API
// tests (Vitest, PGlite), the database suite again on PostgreSQL when one can be started,
// and the end-to-end journeys (Playwright driving Debian's Chromium). Ends with one line:
// "N passed, N failed, N skipped".
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { dropPostgresRole, ensureDebianPackages, ensureNpmPackages, ensurePostgres, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, RDP_GUEST_PACKAGES, RDP_TEST_PACKAGES, root, VPN_PACKAGES } from './lib/setup.mjs';

const reports = join(root, '.tmp', 'reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

ensureNpmPackages();
// virt-viewer and xvfb: a real SPICE client opens the .vv files in a test.
ensureDebianPackages(['chromium', 'fonts-noto-cjk', 'qemu-system-x86', 'qemu-utils', 'python3', 'virt-viewer', 'xvfb', 'openssh-client', 'curl', ...GUEST_NETWORK_PACKAGES, ...RDP_GUEST_PACKAGES, ...RDP_TEST_PACKAGES, ...VPN_PACKAGES]);
ensureWebBuild();
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

function step(title, cmd, args, env = {}) {
  log(title);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  log(`${title}: ${r.status === 0 ? 'done' : 'failed'} in ${minutes(Date.now() - t0)}`);
  return r.status === 0;
}

/** A runner beside others: each line it prints goes out whole, after its tag. */
function side(tag, cmd, args, env = {}) {
  const t0 = Date.now();
  log(`${tag}: started`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${tag}] ${line}\n`));
    }
    child.on('close', (code) => {
      log(`${tag}: ${code === 0 ? 'done' : 'failed'} in ${minutes(Date.now() - t0)}`);
      resolve(code === 0);
    });
  });
}

function countVitest(file) {
  if (!existsSync(file)) return false;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  totals.passed += r.numPassedTests;
  totals.failed += r.numFailedTests;
  // A file that fails before its tests run (an error in set-up or import) has no failed test: count it.
  totals.failed += r.testResults.filter((f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed')).length;
  totals.skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  return true;
}

function countPlaywright(file) {
  if (!existsSync(file)) return false;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const s = r.stats;
  totals.passed += s.expected + (s.flaky ?? 0);
  // Errors outside any test (the web server did not start, a spec did not load) count as failures.
  totals.failed += s.unexpected + (r.errors?.length ?? 0);
  totals.skipped += s.skipped;
  return true;
}

let broken = false;

// Type checks: a failure counts as one failed test.
// (side by side: each is one process on one core)
for (const ok of await Promise.all(['contracts', 'server', 'web'].map((p) => side(`Type check: ${p}`, bin('tsc'), ['-p', p, '--noEmit'])))) {
  if (ok) totals.passed++;
  else totals.failed++;
}

const vitestJson = join(reports, 'vitest.json');
step('Unit, API and engine tests (Vitest, embedded PGlite)', bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`]);
if (!countVitest(vitestJson)) broken = true;

if (postgresUrl) {
  const pgJson = join(reports, 'vitest-postgres.json');
  step('Database suite on PostgreSQL', bin('vitest'), ['run', '--project', 'server', 'test/db', '--reporter=default', '--reporter=json', `--outputFile.json=${pgJson}`], {
    TEST_DATABASE_URL: postgresUrl,
  });
  if (!countVitest(pgJson)) broken = true;
  dropPostgresRole(postgresUrl);
}

// The journeys in shards side by side, each against a server, database and guest network of
// its own (ports 20 apart): most of a journey's time is waiting on a guest or a timer, so two
// shards take little more than half the time of one.
const e2eFiles = readdirSync(join(root, 'web', 'e2e')).filter((f) => f.endsWith('.spec.ts')).sort();
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
const e2eRuns = bins.map((bin, i) => {
  const port = basePort + 20 * i;
  const tag = shards > 1 ? `e2e ${i + 1}/${shards}` : 'e2e';
  // Within a shard the files keep their usual (name) order.
  return { port, files: bin.files.sort().map((f) => `e2e/${f}`), tag, json: join(reports, `playwright-${i + 1}.json`) };
});
log(`End-to-end journeys (Playwright, Chromium): ${e2eFiles.length} files in ${shards} shard(s)`);
const e2eDone = await Promise.all(
  e2eRuns.map((r) =>
    side(r.tag, bin('playwright'), ['test', '-c', 'web/playwright.config.ts', ...r.files], {
      PLAYWRIGHT_JSON_OUTPUT_NAME: r.json,
      E2E_PORT: String(r.port),
      E2E_DATA_DIR: join(root, '.tmp', `e2e-data-${r.port}`),
    }),
  ),
);
for (const r of e2eRuns) if (!countPlaywright(r.json)) broken = true;
if (e2eDone.some((ok) => !ok)) log('End-to-end journeys: a shard failed (its list above)');

if (broken) {
  log('A runner ended without a report: counted as a failure');
  totals.failed++;
}
log(`Everything in ${minutes(Date.now() - began)}`);
process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(totals.failed > 0 ? 1 : 0);
