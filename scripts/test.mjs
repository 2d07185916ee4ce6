#!/usr/bin/env node
// `npm test`: installs what is missing, then runs every suite — type checks, unit and API
// tests (Vitest, PGlite), the database suite again on PostgreSQL when one can be started,
// and the end-to-end journeys (Playwright driving Debian's Chromium). Ends with one line:
// "N passed, N failed, N skipped".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { dropPostgresRole, ensureDebianPackages, ensureNpmPackages, ensurePostgres, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, RDP_GUEST_PACKAGES, RDP_TEST_PACKAGES, root, VPN_PACKAGES } from './lib/setup.mjs';

const reports = join(root, '.tmp', 'reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

ensureNpmPackages();
// virt-viewer and xvfb: a real SPICE client opens the .vv files in a test.
ensureDebianPackages(['chromium', 'qemu-system-x86', 'qemu-utils', 'virt-viewer', 'xvfb', 'openssh-client', 'curl', ...GUEST_NETWORK_PACKAGES, ...RDP_GUEST_PACKAGES, ...RDP_TEST_PACKAGES, ...VPN_PACKAGES]);
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

function step(title, cmd, args, env = {}) {
  log(title);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
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
for (const project of ['contracts', 'server', 'web']) {
  if (step(`Type check: ${project}`, bin('tsc'), ['-p', project, '--noEmit'])) totals.passed++;
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

const pwJson = join(reports, 'playwright.json');
step('End-to-end journeys (Playwright, Chromium)', bin('playwright'), ['test', '-c', 'web/playwright.config.ts'], {
  PLAYWRIGHT_JSON_OUTPUT_NAME: pwJson,
});
if (!countPlaywright(pwJson)) broken = true;

if (broken) {
  log('A runner ended without a report: counted as a failure');
  totals.failed++;
}
process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(totals.failed > 0 ? 1 : 0);
