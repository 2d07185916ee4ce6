// qemu-img wrapper for the desktop disks: thin qcow2 overlays on template bases (the backing-chain
// model of the original engine, isard-v3.md §4.3), growth, flattening into templates, repointing.
// Always an argument array (host/programs.ts): paths come from users' names and must never meet a shell.
import { randomBytes } from 'node:crypto';
import { link, readdir, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { runProgram, type ProgramFailure } from '../host/programs';

export type DiskFormat = 'qcow2' | 'raw';

export type DiskInfo = {
  path: string;
  format: string;
  virtualSize: number;
  actualSize: number;
  clusterSize: number | null;
  /** absolute path of the backing file, or null for a standalone image */
  backingFile: string | null;
  backingFormat: string | null;
  dirty: boolean;
  /** this image first, then its backing files down to the base (only with { chain: true }) */
  chain?: DiskInfo[];
};

export type QemuImgOptions = { bin?: string };

/** Overlay layout. 4 KiB clusters without extended L2 (what the original engine uses) keep a fresh
 *  overlay tiny: after one boot of the demo guest 44 KiB instead of 516 KiB with the 64 KiB default.
 *  QEMU 7.2 accepts both options; extended_l2=on wants 32x bigger clusters (e.g. 128k) to pay off. */
export type OverlayOptions = QemuImgOptions & { clusterSize?: string; extendedL2?: boolean; sizeBytes?: number };

export const DEFAULT_OVERLAY: Required<Pick<OverlayOptions, 'clusterSize' | 'extendedL2'>> = {
  clusterSize: '4k',
  extendedL2: false,
};

/** qemu-img failed; `stderr` is its own explanation (e.g. "Could not open … No such file"). */
export class QemuImgError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`qemu-img ${args[0] ?? ''} failed: ${stderr.trim() || `exit ${exitCode}`}`);
    this.name = 'QemuImgError';
  }
}

export function runQemuImg(args: string[], opts: QemuImgOptions & { timeoutMs?: number } = {}): Promise<string> {
  return runProgram(opts.bin ?? 'qemu-img', args, { ...opts, background: true }).catch((f: ProgramFailure) => {
    throw new QemuImgError(args, f.code, f.stderr);
  });
}

// ---- argument builders (pure, unit-tested) -------------------------------------------------------

export function overlayArgs(base: string, baseFormat: string, target: string, opts: OverlayOptions = {}): string[] {
  const o = { ...DEFAULT_OVERLAY, ...opts };
  const args = ['create', '-q', '-f', 'qcow2', '-o', `cluster_size=${o.clusterSize},extended_l2=${o.extendedL2 ? 'on' : 'off'}`];
  args.push('-b', resolve(base), '-F', baseFormat, target);
  if (o.sizeBytes !== undefined) args.push(String(o.sizeBytes));
  return args;
}

export function emptyArgs(target: string, sizeBytes: number, opts: OverlayOptions = {}): string[] {
  const o = { ...DEFAULT_OVERLAY, ...opts };
  return ['create', '-q', '-f', 'qcow2', '-o', `cluster_size=${o.clusterSize},extended_l2=${o.extendedL2 ? 'on' : 'off'}`, target, String(sizeBytes)];
}

type RawInfo = {
  filename: string;
  format: string;
  'virtual-size': number;
  'actual-size'?: number;
  'cluster-size'?: number;
  'backing-filename'?: string;
  'full-backing-filename'?: string;
  'backing-filename-format'?: string;
  'dirty-flag'?: boolean;
};

/** Parses `qemu-img info --output=json` (one object) or `--backing-chain` (an array). */
export function parseInfo(json: string, path: string): DiskInfo {
  const parsed = JSON.parse(json) as RawInfo | RawInfo[];
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const infos = list.map((raw, i) => toInfo(raw, i === 0 ? resolve(path) : resolve(raw.filename)));
  const [head] = infos;
  if (!head) throw new Error(`qemu-img info returned nothing for ${path}`);
  return Array.isArray(parsed) ? { ...head, chain: infos } : head;
}

function toInfo(raw: RawInfo, path: string): DiskInfo {
  const backing = raw['full-backing-filename'] ?? raw['backing-filename'] ?? null;
  return {
    path,
    format: raw.format,
    virtualSize: raw['virtual-size'],
    actualSize: raw['actual-size'] ?? 0,
    clusterSize: raw['cluster-size'] ?? null,
    backingFile: backing ? resolve(dirname(path), backing) : null,
    backingFormat: raw['backing-filename-format'] ?? null,
    dirty: raw['dirty-flag'] ?? false,
  };
}

// ---- operations ------------------------------------------------------------------------------------

/** Reads the image header. `-U` (force-share) lets us read images a running VM holds locked. */
export async function info(path: string, opts: QemuImgOptions & { chain?: boolean } = {}): Promise<DiskInfo> {
  const args = ['info', '-U', '--output=json'];
  if (opts.chain) args.push('--backing-chain');
  args.push(path);
  return parseInfo(await runQemuImg(args, { ...opts, timeoutMs: 60_000 }), path);
}

/** A new thin qcow2 whose backing file is `basePath` (stored as an absolute path, so the overlay
 *  can live anywhere). Refuses to overwrite an existing file. */
export async function createOverlay(basePath: string, targetPath: string, opts: OverlayOptions = {}): Promise<DiskInfo> {
  const base = await info(basePath, opts);
  await createNoClobber(targetPath, (tmp) => runQemuImg(overlayArgs(basePath, base.format, tmp, opts), opts));
  return info(targetPath, opts);
}

/**
 * A thin overlay on a base whose format and virtual size the caller already knows (its storage
 * row): one `qemu-img create`, no `info` before or after. The sizes come from what was asked
 * (the base's size, or `sizeBytes` when larger) and the file's allocated blocks — what
 * `qemu-img info` reports as virtual and actual size for a fresh overlay.
 */
export async function createKnownOverlay(
  base: { path: string; format: string; virtualSize: number },
  targetPath: string,
  opts: OverlayOptions = {},
): Promise<Pick<DiskInfo, 'virtualSize' | 'actualSize'>> {
  const sizeBytes = opts.sizeBytes !== undefined && opts.sizeBytes > base.virtualSize ? opts.sizeBytes : undefined;
  await createNoClobber(targetPath, (tmp) => runQemuImg(overlayArgs(base.path, base.format, tmp, { ...opts, sizeBytes }), opts));
  const st = await stat(targetPath);
  return { virtualSize: sizeBytes ?? base.virtualSize, actualSize: st.blocks * 512 };
}

/** A new empty qcow2 (desktops created from media boot an ISO onto one of these). */
export async function createEmpty(path: string, sizeBytes: number, opts: OverlayOptions = {}): Promise<DiskInfo> {
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) throw new RangeError(`bad disk size ${sizeBytes}`);
  await createNoClobber(path, (tmp) => runQemuImg(emptyArgs(tmp, sizeBytes, opts), opts));
  return info(path, opts);
}

/** Grows the virtual disk. Shrinking is refused (it silently destroys the guest's data).
 *  qemu-img itself refuses while a VM holds the image. */
export async function resize(path: string, newSizeBytes: number, opts: QemuImgOptions = {}): Promise<DiskInfo> {
  const current = await info(path, opts);
  if (newSizeBytes < current.virtualSize) {
    throw new RangeError(`refusing to shrink ${basename(path)} from ${current.virtualSize} to ${newSizeBytes} bytes`);
  }
  if (newSizeBytes === current.virtualSize) return current;
  await runQemuImg(['resize', '-q', '-f', current.format, path, String(newSizeBytes)], { ...opts, timeoutMs: 120_000 });
  return info(path, opts);
}

/** Flattens `src` and its whole backing chain into a standalone qcow2 (template from a stopped
 *  desktop). Written under a temporary name, so `dst` never exists half-written. */
export async function convert(src: string, dst: string, opts: QemuImgOptions & { compress?: boolean } = {}): Promise<DiskInfo> {
  await createNoClobber(dst, (tmp) => {
    const args = ['convert', '-O', 'qcow2'];
    if (opts.compress) args.push('-c');
    return runQemuImg([...args, src, tmp], opts);
  });
  return info(dst, opts);
}

/** Points `path` at another backing file without copying data (`rebase -u`): for when a template
 *  file moved. The caller guarantees the new base has the same content as the old one. */
export async function rebaseUnsafe(path: string, newBase: string, opts: QemuImgOptions = {}): Promise<DiskInfo> {
  const base = await info(newBase, opts);
  await runQemuImg(['rebase', '-u', '-f', 'qcow2', '-b', resolve(newBase), '-F', base.format, path], { ...opts, timeoutMs: 60_000 });
  return info(path, opts);
}

/** Points the qcow2 `path` at `backingPath` of format `backingFormat`, a file that need not exist
 *  here (a base on another host): `rebase -u` with the format given opens no backing file. */
export async function rebasedCopy(path: string, backingPath: string, backingFormat: string, opts: QemuImgOptions = {}): Promise<void> {
  await runQemuImg(['rebase', '-u', '-f', 'qcow2', '-b', backingPath, '-F', backingFormat, path], { ...opts, timeoutMs: 60_000 });
}

/** Deletes an image file; a missing file is fine (deleting twice is not an error). */
export async function remove(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** Partial files a killed `qemu-img` left while making `target` (see createNoClobber), removed;
 *  answers their paths. Only the caller that owns `target` (its record plans it) may call this. */
export async function removePartials(target: string): Promise<string[]> {
  const prefix = `.${basename(target)}.`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  const partials = names.filter((n) => n.startsWith(prefix) && n.endsWith('.tmp')).map((n) => join(dirname(target), n));
  for (const p of partials) await rm(p, { force: true });
  return partials;
}

/** The disk a partial file (`.<name>.<hex>.tmp`, see createNoClobber) was being made for, or null. */
export function partialTarget(file: string): string | null {
  const m = /^\.(.+)\.[0-9a-f]+\.tmp$/.exec(basename(file));
  return m ? join(dirname(file), m[1]!) : null;
}

/** Runs `make(tmp)` and then publishes tmp as `target` with link(2), which fails if `target`
 *  exists: qemu-img create would otherwise silently replace a user's disk. */
async function createNoClobber(target: string, make: (tmp: string) => Promise<unknown>): Promise<void> {
  const exists = await stat(target).then(() => true, () => false);
  if (exists) throw new QemuImgError(['create'], null, `${target}: file exists`);
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await make(tmp);
    await link(tmp, target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') throw new QemuImgError(['create'], null, `${target}: file exists`);
      throw err;
    });
  } finally {
    await unlink(tmp).catch(() => {});
  }
}
