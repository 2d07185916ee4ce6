import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  convert, createEmpty, createOverlay, emptyArgs, info, overlayArgs, parseInfo, QemuImgError, rebaseUnsafe, remove, resize,
} from './disks';

const MiB = 1024 * 1024;

describe('qemu-img argument building', () => {
  it('overlay: absolute backing path, backing format, small clusters', () => {
    expect(overlayArgs('rel/base.qcow2', 'qcow2', '/d/ov.qcow2')).toEqual([
      'create', '-q', '-f', 'qcow2', '-o', 'cluster_size=4k,extended_l2=off',
      '-b', join(process.cwd(), 'rel/base.qcow2'), '-F', 'qcow2', '/d/ov.qcow2',
    ]);
    expect(overlayArgs('/b', 'raw', '/o', { clusterSize: '128k', extendedL2: true, sizeBytes: 10 })).toEqual([
      'create', '-q', '-f', 'qcow2', '-o', 'cluster_size=128k,extended_l2=on', '-b', '/b', '-F', 'raw', '/o', '10',
    ]);
  });

  it('a path with commas or spaces stays one argument', () => {
    expect(emptyArgs('/d/my disk,1.qcow2', 5)).toContain('/d/my disk,1.qcow2');
  });

  it('parses info and backing-chain json', () => {
    const one = parseInfo(JSON.stringify({
      filename: 'ov.qcow2', format: 'qcow2', 'virtual-size': 10, 'actual-size': 4, 'cluster-size': 4096,
      'backing-filename': 'base.qcow2', 'full-backing-filename': '/x/base.qcow2', 'backing-filename-format': 'qcow2', 'dirty-flag': false,
    }), '/x/ov.qcow2');
    expect(one).toEqual({ path: '/x/ov.qcow2', format: 'qcow2', virtualSize: 10, actualSize: 4, clusterSize: 4096,
      backingFile: '/x/base.qcow2', backingFormat: 'qcow2', dirty: false });
    const chain = parseInfo(JSON.stringify([
      { filename: 'ov.qcow2', format: 'qcow2', 'virtual-size': 10, 'backing-filename': 'base.qcow2' },
      { filename: '/x/base.qcow2', format: 'qcow2', 'virtual-size': 10 },
    ]), '/x/ov.qcow2');
    expect(chain.backingFile).toBe('/x/base.qcow2'); // relative backing names resolve against the overlay's dir
    expect(chain.chain?.map((c) => c.path)).toEqual(['/x/ov.qcow2', '/x/base.qcow2']);
  });
});

describe('disks (real qemu-img on temp files)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'disks-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates an empty disk, an overlay on it, and reads the chain', async () => {
    const base = join(dir, 'base.qcow2');
    const empty = await createEmpty(base, 64 * MiB);
    expect(empty).toMatchObject({ format: 'qcow2', virtualSize: 64 * MiB, backingFile: null, clusterSize: 4096 });

    const ov = await createOverlay(base, join(dir, 'ov.qcow2'));
    expect(ov).toMatchObject({ format: 'qcow2', virtualSize: 64 * MiB, backingFile: base, backingFormat: 'qcow2' });
    const withChain = await info(ov.path, { chain: true });
    expect(withChain.chain?.map((c) => c.path)).toEqual([ov.path, base]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]); // no temp leftovers
  });

  it('refuses to overwrite an existing disk', async () => {
    const base = join(dir, 'base2.qcow2');
    await createEmpty(base, MiB);
    await expect(createEmpty(base, MiB)).rejects.toThrow(/file exists/);
    await expect(createOverlay(base, base)).rejects.toThrow(/file exists/);
  });

  it('carries qemu-img stderr on failure', async () => {
    const err = await info(join(dir, 'missing.qcow2')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QemuImgError);
    expect((err as QemuImgError).stderr).toMatch(/No such file/);
  });

  it('grows, and refuses to shrink', async () => {
    const p = join(dir, 'grow.qcow2');
    await createEmpty(p, 16 * MiB);
    expect((await resize(p, 32 * MiB)).virtualSize).toBe(32 * MiB);
    await expect(resize(p, 16 * MiB)).rejects.toThrow(/refusing to shrink/);
    expect((await info(p)).virtualSize).toBe(32 * MiB);
  });

  it('flattens an overlay into a standalone template, and repoints an overlay after its base moved', async () => {
    const base = join(dir, 'b3.qcow2');
    await createEmpty(base, 8 * MiB);
    const ov = await createOverlay(base, join(dir, 'ov3.qcow2'));
    const tmpl = await convert(ov.path, join(dir, 'tmpl3.qcow2'), { compress: true });
    expect(tmpl.backingFile).toBeNull();
    expect(tmpl.virtualSize).toBe(8 * MiB);

    await mkdir(join(dir, 'moved'));
    const moved = join(dir, 'moved', 'b3.qcow2');
    await rename(base, moved);
    const repointed = await rebaseUnsafe(ov.path, moved);
    expect(repointed.backingFile).toBe(moved);
    expect((await info(ov.path, { chain: true })).chain).toHaveLength(2);
  });

  it('removes, and removing twice is fine', async () => {
    const p = join(dir, 'gone.qcow2');
    await createEmpty(p, MiB);
    await remove(p);
    await remove(p);
    expect(existsSync(p)).toBe(false);
  });
});
