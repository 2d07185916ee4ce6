// Follows a serial log file (QEMU's `-serial file:`) until a pattern shows up.
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../driver';

const POLL_MS = 100;
/** text kept from earlier reads, so a match split across two reads is still found */
const CARRY = 8192;

export async function waitForPattern(
  file: string,
  pattern: RegExp,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<RegExpMatchArray> {
  // a 'g' or 'y' flag would make exec() stateful between polls
  const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  const deadline = Date.now() + timeoutMs;
  let offset = 0;
  let text = '';
  for (;;) {
    signal?.throwIfAborted();
    const chunk = await readFrom(file, offset);
    if (chunk.length > 0) {
      offset += chunk.length;
      text = (text + chunk.toString('utf8')).slice(-(CARRY + chunk.length));
      const m = re.exec(text);
      if (m) return m;
      text = text.slice(-CARRY);
    }
    if (Date.now() >= deadline) {
      throw new EngineError('timeout', `no serial output matching ${re} within ${timeoutMs} ms`);
    }
    await sleep(POLL_MS, undefined, { signal }).catch(() => signal?.throwIfAborted());
  }
}

async function readFrom(file: string, offset: number): Promise<Buffer> {
  try {
    const fh = await open(file, 'r');
    try {
      const { size } = await fh.stat();
      if (size <= offset) return Buffer.alloc(0);
      const buf = Buffer.alloc(size - offset);
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0); // not created yet
    throw err;
  }
}
