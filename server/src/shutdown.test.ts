import { scaled } from '../test/helpers/slowdown';
import { describe, expect, it } from 'vitest';
import { createStopper } from './shutdown';

const recordingLog = () => {
  const lines: { level: string; args: unknown[] }[] = [];
  const at = (level: string) => (...args: unknown[]) => void lines.push({ level, args });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } as never };
};

describe('the server stop', () => {
  it('runs its steps in order and exits 0', async () => {
    const { log } = recordingLog();
    const order: string[] = [];
    const codes: number[] = [];
    const stop = createStopper({
      log,
      exit: (c) => void codes.push(c),
      steps: [['a', async () => void order.push('a')], ['b', async () => void order.push('b')]],
    });
    await stop('SIGTERM');
    expect(order).toEqual(['a', 'b']);
    expect(codes).toEqual([0]);
  });

  it('exits anyway after its bound, naming what it waited on', async () => {
    const { log, lines } = recordingLog();
    const exited = new Promise<number>((resolve) => {
      const stop = createStopper({ log, exit: resolve, boundMs: 200, steps: [['the web server', () => new Promise(() => {})]] });
      void stop('SIGTERM');
    });
    const started = Date.now();
    expect(await exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(scaled(5_000));
    expect(lines.find((l) => l.level === 'error')?.args).toEqual([{ step: 'the web server' }, expect.stringContaining('exiting anyway')]);
  });

  it('exits at once on a second signal', async () => {
    const { log } = recordingLog();
    const codes: number[] = [];
    const stop = createStopper({ log, exit: (c) => void codes.push(c), boundMs: 60_000, steps: [['hang', () => new Promise(() => {})]] });
    void stop('SIGTERM');
    await stop('SIGINT');
    expect(codes).toEqual([1]);
  });
});
