import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { QemuProcess, QemuSpawner } from './spawner';

// QEMU's spawner (spawner.ts) with an ordinary program in QEMU's place: a process started through the helper runs
// detached and its exit comes back; with the helper gone, the next spawn is made by this process, never lost.

const dir = mkdtempSync(join(tmpdir(), 'vdi-spawner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const exited = (p: QemuProcess) => new Promise<[number | null, NodeJS.Signals | null]>((resolve) => p.once('exit', (code, sig) => resolve([code, sig])));
/** Writes its parent's pid to `file`, then ends with `code`. */
const parentOf = (spawner: QemuSpawner, file: string, code = 0) => spawner.spawn('/bin/sh', ['-c', `echo $PPID > ${file}; exit ${code}`], join(dir, 'log'));

describe('the QEMU spawner', () => {
  it('keeps an exit told before anyone listened (the helper\'s "spawned" and "exit" read in one go) for the listener that comes', async () => {
    const p = new QemuProcess(1);
    p.ended(3, null);
    p.ended(0, null); // told once
    expect(await exited(p)).toEqual([3, null]);
    expect(await exited(p)).toEqual([3, null]);
  });

  it('starts through its helper and tells the exit; with the helper gone, the server spawns itself', async () => {
    const spawner = new QemuSpawner();
    try {
      const first = await parentOf(spawner, join(dir, 'a'), 3);
      expect(await exited(first)).toEqual([3, null]);
      const helper = Number(readFileSync(join(dir, 'a'), 'utf8'));
      expect(helper).not.toBe(process.pid);

      // The helper dies (killed, crashed): the next spawn still happens, from this process.
      process.kill(helper, 'SIGKILL');
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          try {
            process.kill(helper, 0);
          } catch {
            clearInterval(poll);
            resolve();
          }
        }, 10);
      });
      const second = await parentOf(spawner, join(dir, 'b'));
      expect(await exited(second)).toEqual([0, null]);
      expect(Number(readFileSync(join(dir, 'b'), 'utf8'))).toBe(process.pid);
    } finally {
      spawner.close();
    }
  });
});
