import { fork } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('the program helper (spawner.mjs)', () => {
  it('outlives a stop signal to the process group, so the server\'s stop can still run programs; it ends with the server', async () => {
    const child = fork(join(import.meta.dirname, 'spawner.mjs'), [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const answer = (id: number) =>
      new Promise<{ id: number; stdout: string }>((resolve) => child.on('message', (m: { id: number; stdout: string }) => m.id === id && resolve(m)));
    const run = (id: number) => {
      const a = answer(id);
      child.send({ id, file: 'echo', args: [`run ${id}`], timeoutMs: 5000, maxBuffer: 1024 });
      return a;
    };
    expect((await run(1)).stdout).toBe('run 1\n');
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    expect(child.exitCode).toBeNull();
    expect((await run(2)).stdout).toBe('run 2\n');
    const exited = new Promise((r) => child.once('exit', r));
    child.disconnect();
    await exited;
  });

  it('runs background programs at the niceness asked (qemu-img below the server), others at its own', async () => {
    const child = fork(join(import.meta.dirname, 'spawner.mjs'), [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    try {
      const niceness = (id: number, nice: number) =>
        new Promise<string>((resolve) => {
          child.on('message', (m: { id: number; stdout: string }) => m.id === id && resolve(m.stdout.trim()));
          // `nice` without a command prints the niceness it runs at (read after the priority is set).
          child.send({ id, file: 'sh', args: ['-c', 'sleep 0.3; nice'], timeoutMs: 10_000, maxBuffer: 1024, nice });
        });
      expect(await niceness(1, 10)).toBe('10');
      expect(await niceness(2, 0)).toBe('0');
    } finally {
      child.disconnect();
    }
  });
});
