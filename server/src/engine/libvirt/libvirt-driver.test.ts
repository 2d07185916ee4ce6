import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOverlay } from '../disks';
import { waitForStopped, type MachineEvent, type MachineSpec } from '../driver';
import { ensureDemoGuest } from '../guest-image';
import { startJsonLinesHelper } from '../../host/programs';
import { QemuDriver } from '../qemu/qemu-driver';
import { describeDriverSuite } from '../../../test/helpers/driver-suite';
import { startLibvirtHost, type LibvirtTestHost } from '../../../test/helpers/libvirt-host';
import { scaled } from '../../../test/helpers/slowdown';
import { until } from '../../../test/helpers/wait';
import { LIBVIRT_AGENT_MAX_COMMAND, LibvirtDriver, redact, type ConnectionState } from './libvirt-driver';

const IMAGES = process.env.VDI_TEST_IMAGES ?? fileURLToPath(new URL('../../../../data/test-cache/images', import.meta.url));
const images = () => ensureDemoGuest(IMAGES, (line) => console.log(`[demo guest] ${line}`));

// A directory both this process and the host's libvirtd see (the same /tmp).
const diskDir = mkdtempSync(join(tmpdir(), 'drv-disks-'));
let host: LibvirtTestHost;
const suiteStarted = Date.now();
beforeAll(async () => {
  host = await startLibvirtHost(1);
}, scaled(30_000));
afterAll(async () => {
  await host?.stop();
  rmSync(diskDir, { recursive: true, force: true });
}, scaled(30_000));

const open = async (keepAlive?: { intervalS: number; count: number }) => {
  // TCG as the QEMU driver's test: this machine's KVM (kvm_pvm) fails to emulate the guest
  const d = new LibvirtDriver({ uri: host.uri, graphicsAddress: host.address, accel: 'tcg', keepAlive });
  await d.ready();
  return d;
};

describeDriverSuite('libvirt (TCG, own libvirtd in a namespace)', open, { images, diskDir });

describe('LibvirtDriver specifics', () => {
  afterAll(() => console.log(`[libvirt] suite and specifics took ${Date.now() - suiteStarted} ms`));

  const spec = async (id: string): Promise<MachineSpec> => ({
    id, name: id, memoryMb: 256, vcpus: 1,
    disks: [{ path: (await createOverlay((await images()).disk, join(diskDir, `${id}.qcow2`))).path, bus: 'default' }],
    isos: [], bootOrder: ['disk'], nics: [{ id: 'n', mac: '52:54:00:5a:01:01' }], video: 'default',
    graphics: { vnc: true, spice: false },
  });

  it('start → running beside the QEMU driver (same guest)', async () => {
    const d = await open();
    const s = await spec('timing-lv');
    let t = performance.now();
    await d.start(s);
    const libvirtMs = performance.now() - t;
    await d.destroy(s.id);
    await d.close();
    const runDir = mkdtempSync(join(tmpdir(), 'drv-q-'));
    const q = new QemuDriver({ runDir, accel: 'tcg' });
    const qs = await spec('timing-q');
    t = performance.now();
    await q.start(qs);
    const qemuMs = performance.now() - t;
    await q.destroy(qs.id);
    await q.close();
    rmSync(runDir, { recursive: true, force: true });
    console.log(`[libvirt] start→running: libvirt ${libvirtMs.toFixed(0)} ms, qemu driver ${qemuMs.toFixed(0)} ms`);
    expect(libvirtMs).toBeGreaterThan(0);
  }, scaled(60_000));

  it('a domain destroyed behind the driver\'s back (virsh destroy) is reported stopped once', async () => {
    const d = await open();
    const events: MachineEvent[] = [];
    d.onEvent((e) => events.push(e));
    const s = await spec('behind-back');
    await d.start(s);
    const stopped = waitForStopped(d, s.id, scaled(10_000));
    host.virsh('destroy', s.id);
    expect(await stopped).toBe('destroyed');
    expect(await d.status(s.id)).toBe('absent');
    expect(events.filter((e) => e.type === 'stopped')).toHaveLength(1);
    await d.close();
  }, scaled(60_000));

  it('a domain started on another connection (another server process) is adopted: started, then its stop told once', async () => {
    const starter = await open();
    const other = await open();
    const events: MachineEvent[] = [];
    other.onEvent((e) => events.push(e));
    const s = await spec('elsewhere');
    await starter.start(s);
    await until('the other connection to adopt it', async () => events.some((e) => e.id === s.id && e.type === 'started'), 10_000);
    const stopped = waitForStopped(other, s.id, scaled(10_000));
    host.virsh('destroy', s.id);
    expect(await stopped).toBe('destroyed');
    expect(events.filter((e) => e.type === 'stopped')).toHaveLength(1);
    await starter.close();
    await other.close();
  }, scaled(60_000));

  it('reads a machine\'s serial port again once another connection that took its console lets it go', async () => {
    const d = await open();
    const s = await spec('console-back');
    await d.start(s);
    // Another server process adopts the domain: its console, opened with force, takes the serial port from ours.
    const other = await open();
    expect((await other.list()).map((m) => m.id)).toContain(s.id);
    await other.close();
    // Ours opens it again (the boot goes on meanwhile): the guest's READY line arrives here.
    expect((await d.waitForSerial(s.id, /DEMO-DESKTOP READY ip=\S+ boot=1 /, scaled(45_000)))[0]).toContain('boot=1');
    await d.destroy(s.id);
    await d.close();
  }, scaled(60_000));

  it('refuses what it cannot run, and never shows the URI in an error', async () => {
    const d = await open();
    const base = await spec('refused');
    await expect(d.start({ ...base, id: '../escape' })).rejects.toMatchObject({ code: 'invalid-spec' });
    // A host not prepared for the guest network (no vdi-guests bridge): refused before anything is defined.
    await expect(d.start({ ...base, nics: [{ id: 'p', mac: '52:54:00:00:00:01', network: 'private' }] })).rejects.toMatchObject({ code: 'guest-network-missing' });
    expect(await d.status(base.id)).toBe('absent');
    // A guest agent command larger than libvirtd writes intact (LIBVIRT_AGENT_MAX_COMMAND): refused before it reaches the host.
    const big = { path: '/bin/cat', 'input-data': Buffer.alloc(LIBVIRT_AGENT_MAX_COMMAND).toString('base64') };
    await expect(d.guestAgent(base.id, 'guest-exec', big, 1000)).rejects.toMatchObject({ code: 'unsupported' });
    const err = await d.start({ ...base, id: 'broken', disks: [{ path: '/nonexistent/disk.qcow2', bus: 'default' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'start-failed' });
    expect(await d.status('broken')).toBe('absent');
    await d.close();
    await expect(d.list()).rejects.toMatchObject({ code: 'closed' });

    const bad = new LibvirtDriver({ uri: 'qemu+unix:///system?socket=/tmp/drv-none/secret-sock' });
    const e = (await bad.ready().catch((x: unknown) => x)) as { code: string; message: string; detail?: string };
    expect(e.code).toBe('host-unreachable');
    expect(`${e.message} ${e.detail}`).not.toContain('secret-sock');
    await bad.close();
    expect(redact('failed to connect to qemu+ssh://root@h/system?keyfile=/k/id: x', '')).not.toMatch(/keyfile=\/k|root@h/);
  }, scaled(30_000));

  // (Here, before the next test, which leaves the host's libvirtd frozen.)
  it('its helper answers a line that is no request (no object, no id, no op, an unknown op) with an error, and goes on', async () => {
    const answers: Record<string, unknown>[] = [];
    let exited = '';
    const helper = startJsonLinesHelper(join(import.meta.dirname, 'libvirt-helper.py'), (m) => answers.push(m as Record<string, unknown>), (reason) => (exited = reason));
    helper.hold(true);
    try {
      helper.send({ uri: host.uri, keepalive: [5, 2] });
      await until('the helper connected', async () => answers.some((a) => a.ready) || exited, 30_000);
      const lines: object[] = [[1], { op: 'list' }, { id: '1', op: 'list' }, { id: 2 }, { id: 3, op: 'nothing' }, { id: 5, op: [] }, { op: 'cancel' }, { id: 4, op: 'list' }];
      for (const line of lines) helper.send(line);
      await until('the list answered', async () => answers.some((a) => a.id === 4) || exited, 30_000);
      const errors = answers.filter((a) => a.error).map((a) => [a.id, (a.error as { code: string }).code]);
      expect(errors).toEqual([[null, 'bad-request'], [null, 'bad-request'], [null, 'bad-request'], [2, 'bad-request'], [3, 'bad-request'], [5, 'bad-request'], [null, 'bad-request']]);
      expect(answers.find((a) => a.id === 4)).toMatchObject({ result: expect.anything() });
      expect(exited).toBe('');
    } finally {
      helper.end();
    }
    await until('the helper ended with its input', async () => exited, 30_000);
    expect(exited).toBe('exit-code-0');
  }, scaled(60_000));

  it('notices a host that stops answering (its libvirtd frozen) within the keepalive bound; a new driver adopts after close', async () => {
    const d = await open();
    const s = await spec('adopted');
    const rt = await d.start(s);
    await d.close();
    // A probe every 2 s, lost after one unanswered: noticed within (1 + 1) × 2 s (the default, 5 s × 2, within 15 s).
    const again = await open({ intervalS: 2, count: 1 });
    expect((await again.list()).map((m) => m.id)).toEqual([s.id]);
    expect((await again.list())[0]!.vnc).toEqual(rt.vnc);
    const lost = new Promise<ConnectionState>((resolve) => again.onConnection((c) => c.state === 'lost' && resolve(c)));
    const t = Date.now();
    host.freezeDaemon(); // no EOF: only libvirt's keepalive can tell
    const state = await lost;
    const noticedMs = Date.now() - t;
    console.log(`[libvirt] lost host noticed after ${noticedMs} ms (${state.reason})`);
    expect(noticedMs).toBeLessThan(scaled(8_000));
    await expect(again.status(s.id)).rejects.toMatchObject({ code: 'host-unreachable' });
    await again.close();
  }, scaled(60_000));
});
