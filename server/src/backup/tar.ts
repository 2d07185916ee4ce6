// A minimal POSIX ustar writer and reader: the backup archive is a plain `.tar.gz` an operator can
// list with `tar tzf` (regular files and folders only; names up to 255 bytes through the prefix field).
import { createReadStream, type Stats } from 'node:fs';
import type { Readable, Writable } from 'node:stream';

const BLOCK = 512;

function splitName(name: string): { name: string; prefix: string } {
  if (Buffer.byteLength(name) <= 100) return { name, prefix: '' };
  // Split at a slash so that the last part fits in 100 bytes and the rest in the 155-byte prefix.
  for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return { name: rest, prefix };
  }
  throw new Error(`a path too long for the archive: ${name}`);
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** One entry's 512-byte header. */
export function tarHeader(entry: { name: string; size: number; mode: number; mtime: number; dir?: boolean }): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  const { name, prefix } = splitName(entry.dir && !entry.name.endsWith('/') ? `${entry.name}/` : entry.name);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(entry.dir ? 0 : entry.size, 12), 124, 'ascii');
  h.write(octal(Math.floor(entry.mtime / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(entry.dir ? '5' : '0', 156, 'ascii');
  h.write('ustar\u000000', 257, 'binary');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK, 0);

/** Writes entries into `out` (waiting when it is full). */
export class TarWriter {
  constructor(private readonly out: Writable) {}

  private async write(chunk: Buffer): Promise<void> {
    if (this.out.write(chunk)) return;
    if (this.out.destroyed) throw this.out.errored ?? new Error('the archive was closed');
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => {
        this.out.off('drain', onDrain);
        this.out.off('error', onError);
        this.out.off('close', onClose);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      const onError = (err: Error) => done(err);
      const onClose = () => done(this.out.errored ?? new Error('the archive was closed'));
      this.out.once('drain', onDrain);
      this.out.once('error', onError);
      this.out.once('close', onClose);
    });
  }

  async addBuffer(name: string, data: Buffer, mode = 0o600): Promise<void> {
    await this.write(tarHeader({ name, size: data.length, mode, mtime: Date.now() }));
    await this.write(data);
    await this.write(padding(data.length));
  }

  async addDir(name: string, mode = 0o700): Promise<void> {
    await this.write(tarHeader({ name, size: 0, mode, mtime: Date.now(), dir: true }));
  }

  /** A file from disk, `onChunk` told of each chunk (checksums, progress). Its size is the one `stat` saw. */
  async addFile(name: string, path: string, stat: Stats, onChunk?: (chunk: Buffer) => void): Promise<void> {
    await this.write(tarHeader({ name, size: stat.size, mode: stat.mode, mtime: stat.mtimeMs }));
    let written = 0;
    if (stat.size === 0) return;
    for await (const chunk of createReadStream(path, { end: stat.size - 1, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      const part = chunk.subarray(0, stat.size - written);
      written += part.length;
      onChunk?.(part);
      await this.write(part);
    }
    if (written !== stat.size) throw new Error(`${name} changed size while it was read`);
    await this.write(padding(stat.size));
  }

  async end(): Promise<void> {
    await this.write(Buffer.alloc(BLOCK * 2, 0));
  }
}

export type TarEntry = { name: string; size: number; mode: number; dir: boolean };

/** Reads a tar stream: `onEntry` gets each entry and its content as chunks (a truncated stream throws). */
export async function readTar(input: Readable, onEntry: (entry: TarEntry, content: AsyncIterable<Buffer>) => Promise<void>): Promise<{ ended: boolean }> {
  const iterator = (input as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let buffered: Buffer = Buffer.alloc(0);
  let done = false;
  const fill = async (n: number): Promise<boolean> => {
    while (buffered.length < n && !done) {
      const next = await iterator.next();
      if (next.done) done = true;
      else buffered = buffered.length === 0 ? next.value : Buffer.concat([buffered, next.value]);
    }
    return buffered.length >= n;
  };
  const take = (n: number) => {
    const part = buffered.subarray(0, n);
    buffered = buffered.subarray(n);
    return part;
  };
  for (;;) {
    if (!(await fill(BLOCK))) return { ended: false };
    const header = take(BLOCK);
    if (header.every((b) => b === 0)) return { ended: true };
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    const stored = parseInt(header.subarray(148, 156).toString('ascii').replace(/\0.*$/, '').trim(), 8);
    if (stored !== sum || header.subarray(257, 262).toString('ascii') !== 'ustar') throw new Error('not a tar archive');
    const str = (from: number, len: number) => header.subarray(from, from + len).toString('utf8').replace(/\0.*$/s, '');
    const prefix = str(345, 155);
    const name = (prefix ? `${prefix}/` : '') + str(0, 100);
    const size = parseInt(str(124, 12).trim() || '0', 8);
    const mode = parseInt(str(100, 8).trim() || '0', 8);
    const type = str(156, 1);
    let left = size;
    async function* content(): AsyncIterable<Buffer> {
      while (left > 0) {
        if (buffered.length === 0 && !(await fill(1))) throw new Error('the archive ends in the middle of a file');
        const part = take(Math.min(left, buffered.length));
        left -= part.length;
        yield part;
      }
    }
    await onEntry({ name: name.replace(/\/$/, ''), size, mode, dir: type === '5' }, content());
    // Whatever the reader left of this entry, and the padding.
    while (left > 0) {
      if (!(await fill(1))) throw new Error('the archive ends in the middle of a file');
      left -= take(Math.min(left, buffered.length)).length;
    }
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad && !(await fill(pad))) throw new Error('the archive ends in the middle of a file');
    take(pad);
  }
}
