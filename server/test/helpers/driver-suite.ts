// The test suite every HypervisorDriver must pass, against real machines booting the demo guest.
// Two guests at most run at once (each boot costs a core for ~10 s under TCG), and one booted
// guest is shared by the tests that only look at it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmpty, createOverlay } from '../../src/engine/disks';
import { EngineError, waitForStopped, type HypervisorDriver, type MachineEvent, type MachineRuntime, type MachineSpec } from '../../src/engine/driver';
import type { DemoGuestImages } from '../../src/engine/guest-image';
import { fetchFile, listFiles, sendFile } from '../../src/engine/guest-agent';
import { probeVnc } from './vnc-probe';
import { scaled } from './slowdown';

export type DriverSuiteOptions = {
  /** the demo guest (built once and cached by the caller) */
  images: () => Promise<DemoGuestImages>;
  /** where the suite creates its disks; a temp dir by default (a remote driver needs a shared path) */
  diskDir?: string;
  /** Why the file transfer through the guest agent is not checked with this driver (default: it is). */
  skipFileTransfer?: string;
};

/** Boot + READY under TCG takes ~10 s with one guest, more when two share the 2 cores (a
 *  backstop: the wait ends at the marker), times the machine's measured slowdown. */
const BOOT_MS = scaled(45_000);
const READY = /DEMO-DESKTOP READY ip=(\S+) boot=(\d+|no disk)/;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `makeDriver` must return a new driver instance over the same machine state on every call: the
 *  second instance plays the server after a restart. */
export function describeDriverSuite(
  name: string,
  makeDriver: () => HypervisorDriver | Promise<HypervisorDriver>,
  opts: DriverSuiteOptions,
): void {
  describe(`hypervisor driver: ${name}`, () => {
    const suffix = randomBytes(3).toString('hex');
    const diskId = `suite-disk-${suffix}`;
    const isoId = `suite-iso-${suffix}`;
    let diskDir: string;
    let ownDiskDir = false;
    let images: DemoGuestImages;
    let driver: HypervisorDriver;
    const drivers: HypervisorDriver[] = [];
    const events: MachineEvent[] = [];
    let diskSpec: MachineSpec;
    let isoSpec: MachineSpec;
    let diskRuntime: MachineRuntime;
    let isoRuntime: MachineRuntime;

    // Starts still under way: a test that ran out of time goes on in the background, and a start
    // that ends after the clean-up would leave its machine running with nobody to end it.
    const starting = new Set<Promise<unknown>>();
    const open = async () => {
      const d = await makeDriver();
      const start = d.start.bind(d);
      d.start = (spec) => {
        const p = start(spec);
        starting.add(p);
        void p.then(() => starting.delete(p), () => starting.delete(p));
        return p;
      };
      drivers.push(d);
      d.onEvent((e) => events.push(e));
      return d;
    };
    const eventsOf = (id: string, type?: MachineEvent['type']) =>
      events.filter((e) => e.id === id && (type === undefined || e.type === type));

    beforeAll(async () => {
      images = await opts.images();
      ownDiskDir = !opts.diskDir;
      diskDir = opts.diskDir ?? mkdtempSync(join(tmpdir(), 'driver-suite-'));
      const overlay = await createOverlay(images.disk, join(diskDir, `${diskId}.qcow2`));
      const blank = await createEmpty(join(diskDir, `${isoId}.qcow2`), 1024 ** 3);
      diskSpec = {
        id: diskId,
        name: 'Suite desktop (disk)',
        memoryMb: 256,
        vcpus: 1,
        disks: [{ path: overlay.path, bus: 'default' }],
        isos: [],
        bootOrder: ['disk'],
        nics: [{ id: 'default', mac: '52:54:00:5a:00:01' }],
        video: 'default',
        graphics: { vnc: true, spice: false },
      };
      // The "media" flow: boot an ISO on a CD-ROM with a blank disk, on the non-virtio buses.
      isoSpec = {
        id: isoId,
        name: 'Suite desktop (iso)',
        memoryMb: 256,
        vcpus: 1,
        disks: [{ path: blank.path, bus: 'sata' }],
        isos: [{ path: images.iso }],
        bootOrder: ['iso', 'disk'],
        nics: [{ id: 'default', mac: '52:54:00:5a:00:02', model: 'e1000' }],
        video: 'default',
        graphics: { vnc: true, spice: true },
      };
      driver = await open();
      // Both boots overlap: the tests below look at them one after the other.
      [diskRuntime, isoRuntime] = await Promise.all([driver.start(diskSpec), driver.start(isoSpec)]);
    }, scaled(120_000));

    afterAll(async () => {
      // Leave nothing running, whatever failed above: once the starts under way have ended, the
      // drivers close, and a fresh one (as after a restart: the last may be closed, by a test that
      // ran out of time) destroys both machines and whatever else it finds.
      await Promise.allSettled([...starting]);
      for (const d of drivers) await d.close().catch(() => {});
      if (drivers.length > 0) {
        const sweeper = await makeDriver();
        for (const id of [diskId, isoId]) await sweeper.destroy(id).catch(() => {});
        for (const m of await sweeper.list().catch(() => [])) await sweeper.destroy(m.id).catch(() => {});
        await sweeper.close().catch(() => {});
      }
      if (ownDiskDir && diskDir) rmSync(diskDir, { recursive: true, force: true });
    }, scaled(60_000));

    it('reports host capabilities', async () => {
      const caps = await driver.capabilities();
      expect(['kvm', 'tcg']).toContain(caps.accel);
      expect(caps.cpus).toBeGreaterThan(0);
      expect(caps.memoryMb).toBeGreaterThan(0);
      expect(caps.freeMemoryMb).toBeLessThanOrEqual(caps.memoryMb);
    });

    it('starts a machine from an overlay: running, listed, with a VNC endpoint', async () => {
      expect(diskRuntime.id).toBe(diskId);
      expect(diskRuntime.vnc).toBeDefined();
      expect(diskRuntime.spice).toBeUndefined();
      expect(await driver.status(diskId)).toBe('running');
      expect((await driver.list()).map((m) => m.id).sort()).toEqual([diskId, isoId].sort());
      expect(eventsOf(diskId, 'started')).toHaveLength(1);
    });

    it('refuses a second start of the same machine and answers for unknown ones', async () => {
      await expect(driver.start(diskSpec)).rejects.toMatchObject({ code: 'already-running' });
      expect(await driver.status('no-such-machine')).toBe('absent');
      await expect(driver.reset('no-such-machine')).rejects.toBeInstanceOf(EngineError);
      await expect(driver.destroy('no-such-machine')).resolves.toBeUndefined();
    });

    it('boots the guest to its READY marker on the serial port', async () => {
      const m = await driver.waitForSerial(diskId, READY, BOOT_MS);
      expect(m[1]).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/); // DHCP worked: the NIC is there
      expect(m[2]).toBe('1'); // first boot of this overlay
    }, BOOT_MS + scaled(5000));

    it('lets a viewer in with the password set through the driver, and only with it', async () => {
      const endpoint = diskRuntime.vnc!;
      expect((await probeVnc(endpoint, 'whatever')).ok).toBe(false); // no password set yet: nobody
      await driver.setViewerPassword(diskId, 'vnc', 'pw123456', 60);
      const good = await probeVnc(endpoint, 'pw123456');
      expect(good).toMatchObject({ ok: true, securityTypes: [2] });
      if (good.ok) expect(good.width).toBeGreaterThan(0);
      expect(await probeVnc(endpoint, 'wrong')).toMatchObject({ ok: false, reason: 'authentication failed' });
      await expect(driver.setViewerPassword(diskId, 'vnc', 'longer-than-8')).rejects.toMatchObject({ code: 'unsupported' });
      await expect(driver.setViewerPassword(diskId, 'spice', 'x')).rejects.toMatchObject({ code: 'unsupported' });
    });

    it('takes a PNG screenshot of the screen', async () => {
      // The guest clears the screen just before READY and getty draws the banner a moment later:
      // a blank 720x400 screen compresses to under 1 KB, the banner does not.
      let png = await driver.screenshot(diskId);
      for (let i = 0; i < 20 && png.length <= 1024; i++) {
        await sleep(250);
        png = await driver.screenshot(diskId);
      }
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      expect(png.length).toBeGreaterThan(1024);
    });

    // A driver that cannot yet carry files says why in the title (`npm test` counts a skip without its reason as a failure).
    const fileTitle = `sends a file into the guest through its agent, lists it and fetches it back, bytes equal${opts.skipFileTransfer ? ` [skipped: ${opts.skipFileTransfer}]` : ''}`;
    it.skipIf(Boolean(opts.skipFileTransfer))(fileTitle, async () => {
      // the agent starts right after the boot script that prints READY: wait until it answers
      const deadline = Date.now() + scaled(60_000);
      for (;;) {
        const ok = await driver.guestAgent(diskId, 'guest-ping', undefined, scaled(3000)).then(() => true, (e: unknown) => {
          if (Date.now() > deadline) throw e;
          return false;
        });
        if (ok) break;
        await sleep(250); // libvirt refuses at once while the agent is not connected: poll, do not spin
      }
      const bytes = randomBytes(2 * 1024 * 1024 + 12_345); // more than one chunk each way
      const pieces = async function* () {
        for (let off = 0; off < bytes.length; off += 300_000) yield bytes.subarray(off, off + 300_000);
      };
      expect(await sendFile(driver, diskId, '/srv/Transfer', 'report 1.bin', pieces())).toBe(bytes.length);
      expect(await listFiles(driver, diskId, '/srv/Transfer')).toEqual([{ name: 'report 1.bin', size: bytes.length, modified: expect.any(String) }]);
      const back: Buffer[] = [];
      for await (const b of fetchFile(driver, diskId, '/srv/Transfer', 'report 1.bin')) back.push(b);
      expect(Buffer.concat(back).equals(bytes)).toBe(true);
      await expect(driver.guestAgent(diskId, 'guest-file-open', { path: '/srv/Transfer/none', mode: 'r' }, scaled(5000))).rejects.toMatchObject({ name: 'GuestAgentError' });
      await expect(driver.guestAgent('no-such-machine', 'guest-ping', undefined, 1000)).rejects.toMatchObject({ code: 'not-running' });
    }, scaled(60_000));

    it('boots an ISO on a CD-ROM with a blank SATA disk, e1000 NIC and SPICE', async () => {
      const m = await driver.waitForSerial(isoId, READY, BOOT_MS);
      expect(m[2]).toBe('no disk'); // the blank disk has no DEMOBOOT partition
      expect(isoRuntime.spice).toMatchObject({ host: expect.any(String), port: expect.any(Number) });
      const { host, port } = isoRuntime.spice!;
      await new Promise<void>((resolve, reject) => {
        const s = connect(port, host, () => {
          s.destroy();
          resolve();
        });
        s.once('error', reject);
      });
      await driver.setViewerPassword(isoId, 'spice', 'a-long-spice-password', 30);
      await driver.setViewerPassword(isoId, 'vnc', 'isopw');
      expect((await probeVnc(isoRuntime.vnc!, 'isopw')).ok).toBe(true);
    }, BOOT_MS + scaled(5000));

    it('destroys a machine: gone at once, one stopped event', async () => {
      await driver.destroy(isoId);
      expect(await driver.status(isoId)).toBe('absent');
      expect((await driver.list()).map((m) => m.id)).toEqual([diskId]);
      expect(eventsOf(isoId, 'stopped')).toEqual([{ id: isoId, type: 'stopped', reason: 'destroyed' }]);
      await expect(driver.screenshot(isoId)).rejects.toMatchObject({ code: 'not-running' });
    });

    it('resets the machine: the guest boots again from the same overlay', async () => {
      await driver.reset(diskId);
      const m = await driver.waitForSerial(diskId, /DEMO-DESKTOP READY ip=\S+ boot=2 /, BOOT_MS);
      expect(m[0]).toContain('boot=2'); // the first boot wrote its counter into the overlay
      // QMP's reset, then SeaBIOS on q35 resets once more itself (reason guest-reset)
      expect(eventsOf(diskId, 'reset')[0]).toEqual({ id: diskId, type: 'reset', reason: 'host-qmp-system-reset' });
      expect(await driver.status(diskId)).toBe('running');
    }, BOOT_MS + scaled(5000));

    it('shuts down through ACPI: the machine exits and stops exactly once', async () => {
      await driver.shutdown(diskId);
      const reason = await waitForStopped(driver, diskId, scaled(20_000));
      expect(reason).toBe('guest-shutdown');
      expect(await driver.status(diskId)).toBe('absent');
      await sleep(1500); // longer than a poll interval: a second detection must not emit again
      expect(eventsOf(diskId, 'stopped')).toHaveLength(1);
      expect(eventsOf(diskId, 'crashed')).toHaveLength(0);
    }, scaled(30_000));

    it('starts again, and a new driver instance (after a restart) adopts and destroys it', async () => {
      const again = await driver.start(diskSpec);
      expect(await driver.status(diskId)).toBe('running');
      await driver.close(); // the server goes away; the machine keeps running

      const restarted = await open();
      const listed = await restarted.list();
      expect(listed.map((m) => m.id)).toEqual([diskId]);
      expect(listed[0]!.pid).toBe(again.pid);
      expect(listed[0]!.startedAt.getTime()).toBe(again.startedAt.getTime());
      expect(await restarted.status(diskId)).toBe('running');
      // the adopted machine is fully controllable: display and serial output still reachable
      await restarted.setViewerPassword(diskId, 'vnc', 'again');
      expect((await probeVnc(again.vnc!, 'again')).ok).toBe(true);

      const stopped = waitForStopped(restarted, diskId, scaled(15_000));
      await restarted.destroy(diskId);
      expect(await stopped).toBe('destroyed');
      expect(await restarted.status(diskId)).toBe('absent');
      expect(await restarted.list()).toEqual([]);
      driver = restarted;
    }, scaled(30_000));
  });
}
