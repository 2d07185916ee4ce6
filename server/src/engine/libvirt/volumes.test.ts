// The helper's storage protocol against a real libvirtd (its own network namespace): a file of this
// machine uploaded into a host's pool in chunks with progress, found again by name and size,
// replaced, cancelled half-way (nothing left), deleted by path (twice is fine); and an overlay sent
// pointed at its base's path on the host (the copy's header changed, the original untouched), and
// back (a volume downloaded into a file here pointed at its base here; none left on a failure); a pool's free bytes.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeIf, firstMissing, missingNetAdmin, missingPrograms } from '../../../test/helpers/can-run';
import { startLibvirtHost, type LibvirtTestHost } from '../../../test/helpers/libvirt-host';
import { scaled } from '../../../test/helpers/slowdown';
import { createEmpty, createOverlay, info } from '../disks';
import { EngineError } from '../driver';
import { HostDisks } from '../host-disks';
import { LibvirtDriver, type VolumeProgress } from './libvirt-driver';

const missing = firstMissing(missingNetAdmin(), missingPrograms('libvirtd', 'virsh', 'qemu-img'));
const MiB = 1 << 20;

describeIf(missing)('libvirt storage volumes through the helper', () => {
  let host: LibvirtTestHost;
  let driver: LibvirtDriver;
  // the host's pool and this machine's files (the same /tmp: the namespace shares it)
  const pool = mkdtempSync('/tmp/i25pools2-vol-pool-');
  const here = mkdtempSync('/tmp/i25pools2-vol-here-');

  beforeAll(async () => {
    host = await startLibvirtHost(3, '10.237');
    host.virsh('pool-create-as', 'local', 'dir', '--target', pool);
    driver = new LibvirtDriver({ uri: host.uri, graphicsAddress: host.address });
    await driver.ready();
  }, scaled(30_000));
  afterAll(async () => {
    await driver?.close();
    await host?.stop();
    for (const d of [pool, here]) rmSync(d, { recursive: true, force: true });
  }, scaled(30_000));

  it('uploads a file in 1 MiB chunks with progress, finds it by name and size, replaces it, deletes it by path', async () => {
    const file = join(here, 'base.img');
    const bytes = randomBytes(5 * MiB + 123);
    writeFileSync(file, bytes);
    expect(await driver.volume('local', 'base.img')).toBeNull();
    const steps: VolumeProgress[] = [];
    const vol = await driver.uploadVolume('local', 'base.img', file, { onProgress: (p) => steps.push(p) });
    expect(vol).toMatchObject({ path: join(pool, 'base.img'), capacity: bytes.length, physical: bytes.length });
    expect(steps.map((s) => s.done)).toEqual([1, 2, 3, 4, 5].map((n) => n * MiB).concat(bytes.length));
    expect(steps.every((s) => s.total === bytes.length)).toBe(true);
    expect(readFileSync(vol.path).equals(bytes)).toBe(true);
    expect(await driver.volume('local', 'base.img')).toEqual(vol);

    // Again under the same name: replaced (a copy cut short before is made whole this way).
    writeFileSync(file, bytes.subarray(0, MiB));
    expect((await driver.uploadVolume('local', 'base.img', file)).physical).toBe(MiB);

    await driver.deleteVolume(vol.path);
    expect(await driver.volume('local', 'base.img')).toBeNull();
    await driver.deleteVolume(vol.path); // gone already: fine
  }, scaled(30_000));

  it('stops an upload when its signal is aborted: cancelled, no volume left', async () => {
    const file = join(here, 'big.img');
    writeFileSync(file, '');
    truncateSync(file, 256 * MiB); // sparse: read fast, sent in 256 chunks
    const stop = new AbortController();
    const upload = driver.uploadVolume('local', 'big.img', file, { signal: stop.signal, onProgress: () => stop.abort() });
    await expect(upload).rejects.toMatchObject({ code: 'cancelled' });
    expect(await driver.volume('local', 'big.img')).toBeNull();
  }, scaled(30_000));

  it('sends an overlay pointed at its base on the host; the original keeps its own base', async () => {
    const disks = new HostDisks({ host: () => driver }, join(here, 'tmp'));
    const base = join(here, 'tpl.qcow2');
    const overlay = join(here, 'desk.qcow2');
    await createEmpty(base, 64 * MiB);
    await createOverlay(base, overlay);
    const onHost = await disks.upload('h1', 'local', 'tpl.qcow2', base, null);
    const sent = await disks.upload('h1', 'local', 'desk.qcow2', overlay, { path: onHost.path, format: 'qcow2' });
    expect((await info(sent.path)).backingFile).toBe(onHost.path);
    expect((await info(overlay)).backingFile).toBe(base);
    expect(await disks.exists('h1', sent.path)).toBe(true);
    // Found by its path in whichever pool, with that pool's name.
    expect(await disks.at('h1', sent.path)).toMatchObject({ path: sent.path, pool: 'local', physical: statSync(sent.path).size });
    // Back here (a template made of a desktop on the host): the same bytes but its header, pointed at the base here.
    const back = join(here, 'back.qcow2');
    await disks.download('h1', sent.path, back, { path: base, format: 'qcow2' });
    expect((await info(back)).backingFile).toBe(base);
    expect(statSync(back).size).toBe(statSync(sent.path).size);
    await expect(disks.download('h1', join(pool, 'none.qcow2'), join(here, 'none.qcow2'), null)).rejects.toThrow(/not on the hypervisor/);
    expect(existsSync(join(here, 'none.qcow2'))).toBe(false);
    expect(readdirSync(here).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    // The pool's free bytes as libvirt measures its file system now (its blocks free, root's reserve included:
    // statfs here, the same /tmp; others write meanwhile).
    const fsNow = statfsSync(pool);
    expect(Math.abs((await disks.free('h1', 'local')) - fsNow.bfree * fsNow.bsize)).toBeLessThan(256 * MiB);
    // Grown there (the host's qemu-img through libvirt), never shrunk.
    expect((await disks.grow('h1', sent.path, 96 * MiB)).virtualSize).toBe(96 * MiB);
    expect((await info(sent.path)).virtualSize).toBe(96 * MiB);
    await expect(disks.grow('h1', sent.path, 32 * MiB)).rejects.toThrow(/shrink/);
    await disks.remove('h1', sent.path);
    expect(await disks.exists('h1', sent.path)).toBe(false);
    expect(await disks.at('h1', sent.path)).toBeNull();
    // The local host keeps its disks in the storage folder: nothing to do here.
    expect(() => disks.volume('local', 'local', 'x')).toThrow(EngineError);
  }, scaled(30_000));
});

describe('storage volumes without a connected host', () => {
  it('answers host-unreachable when the host is not in the fleet', () => {
    const disks = new HostDisks({ host: () => undefined }, '/tmp/none');
    expect(() => disks.volume('h9', 'local', 'x')).toThrow(expect.objectContaining({ code: 'host-unreachable' }));
  });
});
