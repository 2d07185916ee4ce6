// Liveness of QEMU processes we may not be the parent of (after a server restart they belong to
// init). kill(pid, 0) alone is not enough: an unreaped zombie still "exists" (PID 1 in some
// containers never reaps), and a recycled pid may belong to someone else.
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export function isProcessAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the state letter follows the command name in parentheses, which may itself contain ')'
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X' && state !== '';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    try {
      process.kill(pid, 0); // no /proc: fall back to a signal probe
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
}

/** True when `pid` is alive and is the QEMU that serves this run dir's QMP socket. */
export function isOurQemu(pid: number, qmpSocketPath: string): boolean {
  if (!isProcessAlive(pid)) return false;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.some((a) => a.includes(qmpSocketPath));
  } catch {
    return false;
  }
}

/**
 * Polls until the process is gone; false if it is still there after `timeoutMs`. The first looks come soon (a QEMU
 * told to quit is gone in a few milliseconds), then every 50 ms.
 */
export async function waitForProcessExit(pid: number, qmpSocketPath: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 1; isOurQemu(pid, qmpSocketPath); pause = Math.min(50, pause * 2)) {
    if (Date.now() >= deadline) return false;
    await sleep(pause);
  }
  return true;
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** The last `maxBytes` of a log file (QEMU's reason for failing is at the end). */
export async function readTail(path: string, maxBytes = 4000): Promise<string> {
  try {
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      const start = Math.max(0, size - maxBytes);
      const buf = Buffer.alloc(size - start);
      await fh.read(buf, 0, buf.length, start);
      return buf.toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return '';
  }
}
