import { scaled } from '../../test/helpers/slowdown';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { runProgram, type ProgramFailure } from './programs';

type Answer = { id: number; err: { message: string; code: number | null } | null; stdout: string; stderr: string };

/** The helper started as the server starts it, spoken to in its protocol (JSON lines). */
function helper() {
  const child = spawn('python3', ['-I', '-S', join(import.meta.dirname, 'spawner.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = new Map<number, (a: Answer) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const a = JSON.parse(line) as Answer;
    answers.get(a.id)?.(a);
  });
  const run = (id: number, file: string, args: string[], extra: object = {}) =>
    new Promise<Answer>((resolve) => {
      answers.set(id, resolve);
      child.stdin!.write(`${JSON.stringify({ id, file, args, timeoutMs: 10_000, maxBuffer: 1024, ...extra })}\n`);
    });
  return { child, run };
}

describe('the program helper (spawner.py)', () => {
  it("outlives a stop signal to the process group, so the server's stop can still run programs; it ends with the server", async () => {
    const { child, run } = helper();
    expect((await run(1, 'echo', ['run 1'])).stdout).toBe('run 1\n');
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    expect(child.exitCode).toBeNull();
    expect((await run(2, 'echo', ['run 2'])).stdout).toBe('run 2\n');
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin!.end();
    expect(await exited).toBe(0);
  });

  it('runs background programs at the niceness asked (qemu-img below the server), others at its own', async () => {
    const { child, run } = helper();
    try {
      // `nice` without a command prints the niceness it runs at (read after the priority is set).
      const niceness = async (id: number, nice: number) => (await run(id, 'sh', ['-c', 'sleep 0.3; nice'], { nice })).stdout.trim();
      expect(await niceness(1, 10)).toBe('10');
      expect(await niceness(2, 0)).toBe('0');
    } finally {
      child.stdin!.end();
    }
  });

  it('gives its programs the default signal handling and an empty stdin, whatever it ignores itself', async () => {
    const { child, run } = helper();
    try {
      // SigIgn in /proc: the signals a process ignores (the helper ignores TERM, INT, HUP; Python PIPE, XFSZ).
      const ignored = await run(1, 'sh', ['-c', 'grep SigIgn /proc/self/status; cat']);
      expect(ignored.err).toBeNull();
      const mask = BigInt(`0x${/^SigIgn:\s+([0-9a-f]+)\n$/.exec(ignored.stdout)![1]}`);
      for (const signal of [1, 2, 13, 15, 25]) expect(mask & (1n << BigInt(signal - 1))).toBe(0n); // HUP INT PIPE TERM XFSZ
    } finally {
      child.stdin!.end();
    }
  });
});

describe('runProgram through the helper', () => {
  const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable('it succeeded'), (f: ProgramFailure) => f);

  it("answers a program's stdout, and its exit code and stderr when it fails", async () => {
    expect(await runProgram('printf', ['%s|%s', 'a b', "c'd"])).toBe("a b|c'd");
    expect(await failure(runProgram('sh', ['-c', 'echo broken >&2; exit 3']))).toEqual({ code: 3, stderr: 'broken\n' });
  });

  it('a program that is not there fails without an exit code', async () => {
    const f = await failure(runProgram('no-such-program-here', []));
    expect(f.code).toBeNull();
    expect(f.stderr).toMatch(/no-such-program-here/);
  });

  it('a program over its time is stopped and fails without an exit code', async () => {
    const t0 = performance.now();
    const f = await failure(runProgram('sleep', ['30'], { timeoutMs: 300 }));
    expect(f.code).toBeNull();
    expect(f.stderr).toMatch(/timed out/);
    expect(performance.now() - t0).toBeLessThan(scaled(20_000));
  });

  it('many programs at once each get their own answer', async () => {
    const outs = await Promise.all(Array.from({ length: 40 }, (_, i) => runProgram('echo', [`n${i}`])));
    expect(outs).toEqual(Array.from({ length: 40 }, (_, i) => `n${i}\n`));
  });
});
