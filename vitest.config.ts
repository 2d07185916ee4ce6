import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One runner for every suite: unit rules, API tests (real server, fresh PGlite),
// engine tests (real QEMU) and web component tests. End-to-end lives in Playwright.
export default defineConfig({
  test: {
    // Two files at a time at least: most of an API or engine test's time is a guest booting or a
    // timer running out (Vitest's default on a 2-core machine would be one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        test: {
          name: 'contracts',
          root: 'contracts',
          include: ['src/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'server',
          root: 'server',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          environment: 'node',
          // Bounds for a machine that is busy (two suites side by side on two cores and more: a
          // server's start or a seed of hashed passwords took over a minute at a load of 20);
          // the tests wait on conditions, so a passing run is no slower.
          testTimeout: 120_000,
          hookTimeout: 240_000,
          pool: 'forks',
        },
      },
      'web/vitest.config.ts',
    ],
  },
});
