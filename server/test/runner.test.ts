// The test runner's own rules (scripts/lib): what a run left running is found by its mark and
// ended, never another run's; a test its set-up took down is not a skip; limits scale.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { markedProcesses, registerLink, sweepLeftovers } from '../../scripts/lib/test-run.mjs';
import { EMULATED_GUESTS_SLOWDOWN, guestsEmulated, measureSlowdown, MAX_SLOWDOWN } from '../../scripts/lib/slowdown.mjs';
import { detectAccel } from '../src/engine/accel';
import { isAlive } from './helpers/process';
import { until } from './helpers/wait';

const root = join(import.meta.dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'runner-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sleeper = (env: Record<string, string>) => {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
  child.unref();
  return child.pid!;
};

describe('what a test run left running', () => {
  it('is found by its mark and ended; a process of another run is left alone', async () => {
    const mark = `probe-${process.pid}`;
    const ours = sleeper({ VDI_TEST_FILE: mark });
    const theirs = sleeper({ VDI_TEST_FILE: `${mark}-other` });
    try {
      await until('both to run', async () => isAlive(ours) && isAlive(theirs));
      expect(markedProcesses('VDI_TEST_FILE', mark).map((p) => p.pid)).toEqual([ours]);
      const left = sweepLeftovers({ file: mark });
      expect(left).toEqual([expect.stringMatching(new RegExp(`^process ${ours}: sleep 300`))]);
      await until('ours to end', async () => !markedProcesses('VDI_TEST_FILE', mark).length);
      expect(isAlive(theirs)).toBe(true);
    } finally {
      process.kill(theirs, 'SIGKILL');
      try {
        process.kill(ours, 'SIGKILL');
      } catch {
        // ended by the sweep
      }
    }
  });

  it("removes a lab's bridge its file noted and left (a run killed before its clean-up), not another file's", () => {
    const linkOf = (name: string) => spawnSync('ip', ['-o', 'link', 'show', 'dev', name], { encoding: 'utf8' }).stdout.trim();
    const [ours, theirs] = [`vdiswp${process.pid % 10000}a`, `vdiswp${process.pid % 10000}b`];
    for (const name of [ours, theirs]) expect(spawnSync('ip', ['link', 'add', name, 'type', 'bridge']).status, `ip link add ${name} (as root, as the labs)`).toBe(0);
    const saved = { dir: process.env.VDI_TEST_RUN_DIR, file: process.env.VDI_TEST_FILE };
    const mark = `probe-link-${process.pid}`;
    try {
      process.env.VDI_TEST_RUN_DIR = join(work, 'run');
      process.env.VDI_TEST_FILE = mark;
      registerLink(ours);
      process.env.VDI_TEST_FILE = `${mark}-other`;
      registerLink(theirs);
      expect(sweepLeftovers({ file: mark })).toEqual([`network link ${ours}`]);
      expect(linkOf(ours)).toBe('');
      expect(linkOf(theirs)).not.toBe('');
      // Gone: not reported again.
      expect(sweepLeftovers({ file: mark })).toEqual([]);
    } finally {
      process.env.VDI_TEST_RUN_DIR = saved.dir;
      process.env.VDI_TEST_FILE = saved.file;
      if (saved.dir === undefined) delete process.env.VDI_TEST_RUN_DIR;
      spawnSync('ip', ['link', 'delete', ours]);
      spawnSync('ip', ['link', 'delete', theirs]);
    }
  });
});

describe('the outcomes npm test counts', () => {
  it('tells tests a timed-out set-up took down (failures) from skips, with their reasons', () => {
    const out = join(work, 'outcomes.json');
    const fixture = join(import.meta.dirname, 'fixtures', 'runner');
    const r = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(fixture, 'vitest.config.mjs'), '--reporter=dot', `--reporter=${join(root, 'scripts', 'lib', 'vitest-outcomes.mjs')}`], {
      cwd: fixture,
      env: { ...process.env, VITEST_OUTCOMES: out, VDI_TEST_RUN: process.env.VDI_TEST_RUN ?? 'runner-test' },
      encoding: 'utf8',
    });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    const o = JSON.parse(readFileSync(out, 'utf8'));
    expect(o.passed).toBe(1);
    expect(o.notRun.map((t: { name: string; error: string }) => [t.name, t.error])).toEqual([
      ['a set-up that times out › first', 'Hook timed out in 50ms.'],
      ['a set-up that times out › second', 'Hook timed out in 50ms.'],
    ]);
    expect(o.skipped.map((t: { name: string; reason?: string }) => [t.name, t.reason])).toEqual([
      ['cannot run here', 'needs a thing'],
      ['says nothing', undefined],
    ]);
  });
});

describe('the slowdown factor', () => {
  it('is measured between 1 and the cap', () => {
    const m = measureSlowdown();
    expect(m.factor).toBeGreaterThanOrEqual(1);
    expect(m.factor).toBeLessThanOrEqual(MAX_SLOWDOWN);
    expect(m.cores).toBeGreaterThan(0);
  });

  it("counts the guests' emulation as the server decides it (no usable KVM: TCG)", () => {
    expect(guestsEmulated()).toBe(detectAccel('auto') === 'tcg');
    if (guestsEmulated()) expect(measureSlowdown().factor).toBeGreaterThanOrEqual(EMULATED_GUESTS_SLOWDOWN);
  });
});
