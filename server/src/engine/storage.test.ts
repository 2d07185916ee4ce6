import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDiskStore } from './storage';

const MiB = 1024 * 1024;

describe('the local disk store (the engine\'s disk interface on this machine)', () => {
  let data: string;
  let store: LocalDiskStore;
  beforeAll(() => {
    data = mkdtempSync(join(tmpdir(), 'disk-store-test-'));
    for (const kind of ['templates', 'desktops', 'volatile']) mkdirSync(join(data, 'storage', kind), { recursive: true });
    store = new LocalDiskStore(join(data, 'storage'), join(data, 'quarantine'));
  });
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('names where each disk and media lives, and shows paths relative to the storage folder', () => {
    const root = join(data, 'storage');
    expect(store.pathFor('template', 't1')).toBe(join(root, 'templates', 't1.qcow2'));
    expect(store.pathFor('desktop', 'd1')).toBe(join(root, 'desktops', 'd1.qcow2'));
    expect(store.pathFor('volatile', 'v1')).toBe(join(root, 'volatile', 'v1.qcow2'));
    expect(store.mediaTarget({ id: 'm1', kind: 'iso' })).toEqual({ file: join(root, 'media', 'm1.iso'), part: join(root, 'media', 'm1.iso.part') });
    expect(store.mediaTarget({ id: 'm2', kind: 'floppy' }).file).toBe(join(root, 'media', 'm2.img'));
    expect(store.shown(store.pathFor('desktop', 'd1'))).toBe('desktops/d1.qcow2');
    expect(store.fromShown('desktops/d1.qcow2')).toBe(store.pathFor('desktop', 'd1'));
    expect(store.fromShown('../quarantine/x')).toBeNull();
    expect(store.fromShown('/etc/passwd')).toBeNull();
    expect(store.pools.map((p) => p.kind)).toEqual(['templates', 'desktops', 'volatile', 'media']);
  });

  it('makes a desktop on a template, grows it, and the desktop disk becomes a read-only template and back', async () => {
    const base = store.pathFor('template', 'base');
    await store.createEmpty(base, 8 * MiB);
    const desk = store.pathFor('desktop', 'desk');
    expect(await store.createKnownOverlay({ path: base, format: 'qcow2', virtualSize: 8 * MiB }, desk, { sizeBytes: 16 * MiB })).toMatchObject({ virtualSize: 16 * MiB });
    expect((await store.grow(desk, 32 * MiB)).virtualSize).toBe(32 * MiB);
    expect(await store.exists(desk)).toBe(true);

    const tmpl = store.pathFor('template', 'desk');
    await store.move(desk, tmpl);
    await store.setReadOnly(tmpl, true);
    expect(await store.exists(desk)).toBe(false);
    expect(statSync(tmpl).mode & 0o777).toBe(0o444);
    const next = store.pathFor('desktop', 'next');
    await store.createOverlay(tmpl, next);
    expect((await store.info(next, { chain: true })).chain?.map((c) => c.path)).toEqual([next, tmpl, base]);

    await store.remove(next);
    await store.setReadOnly(tmpl, false);
    await store.move(tmpl, desk);
    expect(statSync(desk).mode & 0o777).toBe(0o644);
    expect(readdirSync(join(data, 'storage', 'desktops')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('imports an image file as a read-only template base', async () => {
    const image = join(data, 'image.qcow2');
    await store.createEmpty(image, 4 * MiB);
    const target = store.pathFor('template', 'imported');
    expect(await store.importTemplate(image, target)).toMatchObject({ path: target, virtualSize: 4 * MiB });
    expect(statSync(target).mode & 0o777).toBe(0o444);
  });

  it('knows the partial files of a disk being made, lists every file, and moves strays to quarantine keeping their place', async () => {
    const target = store.pathFor('desktop', 'half');
    const partial = join(data, 'storage', 'desktops', '.half.qcow2.0a1b2c3d.tmp');
    writeFileSync(partial, 'half');
    expect(store.partialTarget(partial)).toBe(target);
    expect(store.partialTarget(target)).toBeNull();
    expect(await store.files()).toContain(partial);
    expect(await store.fileFacts(partial)).toMatchObject({ size: 4 });
    expect(await store.fileFacts(target)).toBeNull();
    expect(await store.removePartials(target)).toEqual([partial]);

    const stray = join(data, 'storage', 'volatile', 'stray.qcow2');
    writeFileSync(stray, 'stray');
    const to = await store.quarantine(stray, 'batch-1');
    expect(relative(data, to)).toBe(join('quarantine', 'batch-1', 'volatile', 'stray.qcow2'));
    expect(existsSync(stray)).toBe(false);
    expect(readFileSync(to, 'utf8')).toBe('stray');
  });

  it("answers a pool's space, on the storage folder's file system while the pool's folder is not made yet", async () => {
    const media = store.pools.find((p) => p.kind === 'media')!;
    expect(existsSync(media.dir)).toBe(false);
    const space = await store.space(media.dir);
    expect(space.total).toBeGreaterThan(0);
    expect(space.total).toBe((await store.space()).total);
  });
});
