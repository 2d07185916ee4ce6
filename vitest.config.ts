import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { scaled, testSlowdown } from './scripts/lib/slowdown.mjs';
import { ensureTestRun } from './scripts/lib/test-run.mjs';
import { LongestFirst } from './scripts/lib/vitest-sequencer.mjs';

// Started by hand (not by `npm test`): this run's mark and the machine's slowdown factor are set
// here, before any worker starts (the workers and what they start inherit them).
ensureTestRun(import.meta.dirname);
testSlowdown();

// One runner for every suite: unit rules, API tests (real server, fresh PGlite),
// engine tests (real QEMU) and web component tests. End-to-end lives in Playwright.
export default defineConfig({
  test: {
    // Started by hand, ends and names what the run left running (npm test does that itself).
    globalSetup: ['./scripts/lib/vitest-global.mjs'],
    // Two files at a time at least: most of an API or engine test's time is a guest booting or a
    // timer running out (Vitest's default on a 2-core machine would be one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Longest files first, across the projects (scripts/lib/vitest-sequencer.mjs).
    sequence: { sequencer: LongestFirst },
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
          // Several server processes on one PostgreSQL: only with TEST_DATABASE_URL (npm test's PostgreSQL run).
          exclude: [...configDefaults.exclude, ...(process.env.TEST_DATABASE_URL ? [] : ['test/processes/**'])],
          environment: 'node',
          // Bounds of a quiet machine times the measured slowdown (a server's start or a seed of
          // hashed passwords took over a minute at a load of 20); the tests wait on conditions,
          // so a passing run is no slower.
          testTimeout: scaled(120_000),
          hookTimeout: scaled(240_000),
          pool: 'forks',
          // The embedded database migrated once for the run; each test's starts from it.
          globalSetup: ['./test/global-db.ts'],
          // What each file starts carries its mark; what it leaves running fails it (test/setup.ts).
          setupFiles: ['./test/setup.ts'],
        },
      },
      'web/vitest.config.ts',
    ],
  },
});
