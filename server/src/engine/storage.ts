// The engine's disk interface: every disk operation the modules need (a new disk, its sizes, its
// growth, a template made of it, its removal, the check of the files against the records, where a
// downloaded media goes). Disks are named by the product's own paths (a storage row's `path`), as
// the records hold them. The local store below serves them with qemu-img and the file system of
// this machine; a driver for other hosts (libvirt storage pools) serves the same calls there.
import { existsSync } from 'node:fs';
import { access, chmod, copyFile, mkdir, readdir, rename, rm, stat, statfs } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as qemuImg from './disks';

export type DiskInfo = qemuImg.DiskInfo;

/** What a disk is for: a template's base, a desktop's own disk, a temporary desktop's. */
export type DiskKind = 'template' | 'desktop' | 'volatile';
/** A disk's sizes, in bytes, as its record keeps them. */
export type DiskSizes = Pick<DiskInfo, 'virtualSize' | 'actualSize'>;
/** A base disk whose format and virtual size its record already says. */
export type KnownBase = { path: string; format: string; virtualSize: number };
/** A pool's file system, in bytes. */
export type PoolSpace = { total: number; free: number; used: number };

export interface DiskStore {
  /** Where a new disk of `kind` with this storage id lives. */
  pathFor(kind: DiskKind, storageId: string): string;
  /** Where a media is downloaded to (`part`, written first) and where it is kept (`file`). */
  mediaTarget(media: { id: string; kind: string }): { file: string; part: string };
  /** The pools the disks and media live in (the console's list): their folders. */
  readonly pools: { id: string; kind: 'templates' | 'desktops' | 'volatile' | 'media'; dir: string }[];
  /** A disk's path as people see it: relative to the storage folder. */
  shown(path: string): string;
  /** The reverse: the file a path relative to the storage folder names, or null when it is outside the folder. */
  fromShown(shown: string): string | null;
  /** Whether the disk's (or media's) file is there. */
  exists(path: string): Promise<boolean>;
  /** The image's header (`chain`: with its backing files down to the base); readable while a machine runs it. */
  info(path: string, opts?: { chain?: boolean }): Promise<DiskInfo>;
  /** A thin overlay at `target` on the base disk at `basePath` (refuses an existing target). */
  createOverlay(basePath: string, target: string): Promise<DiskInfo>;
  /** The same on a base its record describes: one program run, the sizes from what was asked. */
  createKnownOverlay(base: KnownBase, target: string, opts?: { sizeBytes?: number }): Promise<DiskSizes>;
  /** A new empty disk of `sizeBytes` (desktops that boot a media). */
  createEmpty(target: string, sizeBytes: number): Promise<DiskInfo>;
  /** Grows the virtual disk; shrinking is refused. */
  grow(path: string, newSizeBytes: number): Promise<DiskInfo>;
  /** Deletes a disk or media file; a missing one is fine (deleting twice is not an error). */
  remove(path: string): Promise<void>;
  /** What an interrupted creation of `target` left (partial files), removed; answers their paths. */
  removePartials(target: string): Promise<string[]>;
  /** The disk a partial file was being made for, or null when `file` is not a partial file. */
  partialTarget(file: string): string | null;
  /** Moves a file within the store (no copy): a desktop's disk becoming a template's and back, a finished download into place. */
  move(from: string, to: string): Promise<void>;
  /** A template's base is read-only (never written again); a desktop's disk writable. */
  setReadOnly(path: string, readOnly: boolean): Promise<void>;
  /** A template's base made from an image file outside the store (the seed's guests): copied, read-only. */
  importTemplate(source: string, target: string): Promise<DiskInfo>;
  /** Every file in the store (disks, media, partial files), absolute paths. */
  files(): Promise<string[]>;
  /** A file's size and last change, or null when it is gone. */
  fileFacts(path: string): Promise<{ size: number; modified: Date } | null>;
  /** Moves a file no record owns out of the store, to the quarantine folder `batch`; answers where it went. */
  quarantine(file: string, batch: string): Promise<string>;
  /** The file system of the pool `dir` (of `pools`; the store's own by default). */
  space(dir?: string): Promise<PoolSpace>;
}

const FOLDER: Record<DiskKind, string> = { template: 'templates', desktop: 'desktops', volatile: 'volatile' };

/** The disks of this machine: DATA_DIR/storage/{templates,desktops,volatile,media}, qemu-img. */
export class LocalDiskStore implements DiskStore {
  readonly pools: DiskStore['pools'];

  constructor(
    readonly root: string,
    readonly quarantineDir: string,
  ) {
    this.pools = [
      { id: 'templates', kind: 'templates', dir: join(root, 'templates') },
      { id: 'desktops', kind: 'desktops', dir: join(root, 'desktops') },
      { id: 'volatile', kind: 'volatile', dir: join(root, 'volatile') },
      { id: 'media', kind: 'media', dir: join(root, 'media') },
    ];
  }

  pathFor(kind: DiskKind, storageId: string) {
    return join(this.root, FOLDER[kind], `${storageId}.qcow2`);
  }

  mediaTarget(media: { id: string; kind: string }) {
    const file = join(this.root, 'media', `${media.id}.${media.kind === 'iso' ? 'iso' : 'img'}`);
    return { file, part: `${file}.part` };
  }

  shown(path: string) {
    return relative(this.root, path);
  }

  fromShown(shown: string) {
    const path = resolve(this.root, shown);
    return path.startsWith(this.root + sep) ? path : null;
  }

  exists(path: string) {
    return access(path).then(() => true, () => false);
  }

  info(path: string, opts: { chain?: boolean } = {}) {
    return qemuImg.info(path, opts);
  }

  createOverlay(basePath: string, target: string) {
    return qemuImg.createOverlay(basePath, target);
  }

  createKnownOverlay(base: KnownBase, target: string, opts: { sizeBytes?: number } = {}) {
    return qemuImg.createKnownOverlay(base, target, opts);
  }

  createEmpty(target: string, sizeBytes: number) {
    return qemuImg.createEmpty(target, sizeBytes);
  }

  grow(path: string, newSizeBytes: number) {
    return qemuImg.resize(path, newSizeBytes);
  }

  remove(path: string) {
    return qemuImg.remove(path);
  }

  removePartials(target: string) {
    return qemuImg.removePartials(target);
  }

  partialTarget(file: string) {
    return qemuImg.partialTarget(file);
  }

  async move(from: string, to: string) {
    await rename(from, to); // same file system: the file moves, nothing is copied
  }

  async setReadOnly(path: string, readOnly: boolean) {
    await chmod(path, readOnly ? 0o444 : 0o644);
  }

  async importTemplate(source: string, target: string) {
    await copyFile(source, target);
    await this.setReadOnly(target, true);
    return qemuImg.info(target);
  }

  files() {
    return filesUnder(this.root);
  }

  async fileFacts(path: string) {
    const st = await stat(path).catch(() => null);
    return st ? { size: st.size, modified: st.mtime } : null;
  }

  async quarantine(file: string, batch: string) {
    const to = join(this.quarantineDir, batch, relative(this.root, file));
    await moveFile(file, to);
    return to;
  }

  async space(dir = this.root): Promise<PoolSpace> {
    // A folder made on first use (media) is on the storage folder's file system until then.
    const s = await statfs(existsSync(dir) ? dir : this.root);
    return { total: s.blocks * s.bsize, free: s.bavail * s.bsize, used: (s.blocks - s.bfree) * s.bsize };
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

/** Moves a file keeping its place under the storage folder; across file systems, copies then removes. */
async function moveFile(from: string, to: string) {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await copyFile(from, to);
    await rm(from);
  }
}
