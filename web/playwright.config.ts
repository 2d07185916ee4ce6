import { defineConfig } from '@playwright/test';
import { join } from 'node:path';
import { testBrowserPath } from '../scripts/lib/browser.mjs';

const root = join(import.meta.dirname, '..');
const port = Number(process.env.E2E_PORT ?? 18731);
// Separate ports and data directories let two runs (two people, two worktrees) go side by side.
const dataDir = process.env.E2E_DATA_DIR ?? join(root, '.tmp', 'e2e-data');
const serverLog = join(dataDir, '..', `e2e-server-${port}.log`);
export const E2E_DEMO_PASSWORD = 'e2e-demo-pass';
/** How much slower this machine is than a quiet one, measured by `npm test` when it starts (1 when unset): the time limits below stretch by it. */
const slowdown = Math.max(1, Number(process.env.TEST_SLOWDOWN ?? 1) || 1);
/** Mail goes to a loopback SMTP server the account journeys start on this port (nothing listens otherwise: sends fail). */
export const E2E_SMTP_PORT = port + 1;

/**
 * End-to-end journeys against the real server (fresh embedded database, demo data) in
 * Debian's Chromium (its headless shell: scripts/lib/browser.mjs); nothing downloads a browser.
 */
export default defineConfig({
  // The journeys (`npm test`), or with E2E_TOURS=1 the screenshot tours a person looks at (`npm run screenshots`).
  testDir: process.env.E2E_TOURS ? 'tours' : 'e2e',
  outputDir: join(root, '.tmp', `playwright-${port}`),
  // Desktops a journey left running are stopped before the server is (e2e/global-teardown.ts).
  globalTeardown: join(import.meta.dirname, 'e2e', 'global-teardown.ts'),
  workers: 1,
  fullyParallel: false,
  retries: process.env.CI ? 1 : 0,
  // Bounds for a busy machine (two suites side by side and more: a sign-in took over 10 s at a
  // load of 20), stretched by the slowdown measured at the start; every step waits on a condition,
  // so a passing run is no slower.
  timeout: Math.round(180_000 * slowdown),
  expect: { timeout: Math.round(30_000 * slowdown) },
  reporter: [['list'], ['json']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    viewport: { width: 1280, height: 800 },
    screenshot: 'only-on-failure',
    // A click or fill whose element went away (a menu that closed under it) fails within this and the
    // journey is retried, instead of waiting out the whole test's limit.
    actionTimeout: Math.round(60_000 * slowdown),
    launchOptions: {
      executablePath: testBrowserPath(),
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  webServer: {
    // The server's log goes to .tmp/e2e-server-<port>.log, to read when a journey fails.
    command: `rm -rf '${dataDir}' && mkdir -p '${dataDir}' && exec node --import tsx server/src/main.ts > '${serverLog}' 2>&1`,
    cwd: root,
    url: `http://127.0.0.1:${port}/api/v3/categories`,
    reuseExistingServer: false,
    // A stop as in production (SIGTERM): the server removes its guest network when no guest uses it.
    gracefulShutdown: { signal: 'SIGTERM', timeout: 12_000 },
    timeout: Math.round(120_000 * slowdown),
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      IMAGES_DIR: process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'test-cache', 'images'),
      START_CONCURRENCY: '1',
      DEMO_PASSWORD: E2E_DEMO_PASSWORD,
      LOG_LEVEL: 'info',
      SESSION_TOKEN_SECONDS: '300',
      // Media journeys download from a loopback server started by the test.
      MEDIA_ALLOW_PRIVATE_URLS: '1',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(port + 1),
      RDP_GATEWAY_PORT: String(port + 2),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      // A guest network range of its own per port (the server checks it against the machine's routes).
      GUEST_NETWORK: process.env.E2E_GUEST_NETWORK ?? `10.${100 + (port % 150)}.${Math.floor(port / 150) % 256}.0/24`,
      // The user VPN (UDP) and the bastion's listeners, on ports of their own per run.
      VPN_PORT: String(port + 12),
      BASTION_SSH_PORT: String(port + 13),
      BASTION_HTTP_PORT: String(port + 14),
      BASTION_HTTPS_PORT: String(port + 15),
      BASTION_DOMAIN: 'bastion.localhost',
      // A class of 30 small guests on a 2-core machine (desktop-pools-class.spec.ts by hand) needs more than 8 vCPUs per CPU.
      ...(process.env.E2E_VCPU_OVERCOMMIT ? { VCPU_OVERCOMMIT: process.env.E2E_VCPU_OVERCOMMIT } : {}),
    },
  },
});
