import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { waitForStopped, type LaunchingScreen, type MachineEvent, type MachineSpec } from '../driver';
import { describeDriverSuite } from '../../../test/helpers/driver-suite';
import { ensureDemoGuest } from '../guest-image';
import { QemuDriver } from './qemu-driver';
import { scaled } from '../../../test/helpers/slowdown';
import { probeVnc } from '../../../test/helpers/vnc-probe';
import { drawScreenOnce, VncRefusedError } from '../vnc-client';
import { openVnc } from '../vnc-bridge';

// Built once (~12 s) and reused by later runs; VDI_TEST_IMAGES points elsewhere if wanted.
const IMAGES = process.env.VDI_TEST_IMAGES ?? fileURLToPath(new URL('../../../../data/test-cache/images', import.meta.url));

// Short path: unix socket paths must fit in 107 bytes.
const runDir = mkdtempSync(join(tmpdir(), 'qd-'));
afterAll(() => rmSync(runDir, { recursive: true, force: true }));

describeDriverSuite('qemu (TCG)', () => new QemuDriver({ runDir, accel: 'tcg' }), {
  images: () => ensureDemoGuest(IMAGES, (line) => console.log(`[demo guest] ${line}`)),
});

describe('QemuDriver specifics', () => {
  const ownRunDir = mkdtempSync(join(tmpdir(), 'qd-x-'));
  afterAll(async () => {
    // A test that failed half-way leaves its machine running (they outlive a driver by design).
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    for (const m of await d.list()) await d.destroy(m.id);
    await d.close();
    rmSync(ownRunDir, { recursive: true, force: true });
  });

  it('reports a failed start with QEMU\'s own message and leaves no run dir behind', async () => {
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const err = await d
      .start({
        id: 'broken', name: 'broken', memoryMb: 64, vcpus: 1,
        disks: [{ path: '/nonexistent/disk.qcow2', bus: 'default' }], isos: [], bootOrder: ['disk'],
        nics: [], video: 'std', graphics: { vnc: true, spice: false },
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'start-failed' });
    expect((err as { detail?: string }).detail).toMatch(/nonexistent\/disk\.qcow2/);
    expect(readdirSync(ownRunDir)).toEqual([]);
    expect(await d.list()).toEqual([]);
    await d.close();
  });

  it('cleans run dirs of machines that died while no server watched, and leaves foreign dirs alone', async () => {
    const dead = join(ownRunDir, 'dead-one');
    mkdirSync(dead);
    writeFileSync(join(dead, 'spec.json'), '{}');
    writeFileSync(join(dead, 'runtime.json'), JSON.stringify({ id: 'dead-one', pid: 2 ** 22 + 1, startedAt: new Date().toISOString() }));
    const foreign = join(ownRunDir, 'not-ours');
    mkdirSync(foreign);
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    expect(await d.list()).toEqual([]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(foreign)).toBe(true);
    await d.close();
  });

  /**
   * A machine that outlived its SIGTERM (seen once, under a loaded suite, not reproduced alone): the failure says what
   * the process was doing (its threads' states and kernel waits) and QEMU's last words.
   */
  const withProcessState = (pid: number, id: string) => (err: unknown): never => {
    const read = (path: string) => {
      try {
        return readFileSync(path, 'utf8').trim();
      } catch {
        return '(gone)';
      }
    };
    const stateOf = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    let threads = '(gone)';
    try {
      threads = readdirSync(`/proc/${pid}/task`)
        .map((t) => `${t} ${stateOf(read(`/proc/${pid}/task/${t}/stat`))} ${read(`/proc/${pid}/task/${t}/wchan`)} ${read(`/proc/${pid}/task/${t}/comm`)}`)
        .join('; ');
    } catch {
      // the process is gone
    }
    const log = read(join(ownRunDir, id, 'qemu.log')).split('\n').slice(-5).join(' | ');
    throw new Error(`${err instanceof Error ? err.message : String(err)}; pid ${pid} threads: ${threads}; log: ${log}`);
  };

  // A machine with nothing to boot: QEMU runs, SeaBIOS idles. Enough to test process handling cheaply.
  const idle = (id: string): MachineSpec => ({
    id, name: id, memoryMb: 64, vcpus: 1, disks: [], isos: [], bootOrder: [], nics: [],
    video: 'std', graphics: { vnc: false, spice: false },
  });

  it('a machine whose guest runs no agent: agent-unavailable within the bound', async () => {
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    await d.start(idle('no-agent'));
    const t0 = Date.now();
    await expect(d.guestAgent('no-agent', 'guest-ping', undefined, 1500)).rejects.toMatchObject({ code: 'agent-unavailable' });
    expect(Date.now() - t0).toBeLessThan(scaled(5000));
    await d.destroy('no-agent');
    await d.close();
  });

  it("holds the guest agent's port while the machine runs (an agent with nobody on the host's end polls its port), lets go on close", async () => {
    // QEMU accepted a client on the port's socket: a connection whose local end is that path (ss lists it).
    const clients = (path: string) => execFileSync('ss', ['-xH', 'state', 'established'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(path)).length;
    const qga = join(ownRunDir, 'held-agent', 'qga.sock');
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    await d.start(idle('held-agent'));
    await expect.poll(() => clients(qga), { timeout: scaled(10_000) }).toBe(1);
    await expect(d.guestAgent('held-agent', 'guest-ping', undefined, 500)).rejects.toMatchObject({ code: 'agent-unavailable' });
    expect(clients(qga)).toBe(1); // (one connection for the machine's life, not one per exchange)
    await d.close();
    await expect.poll(() => clients(qga), { timeout: scaled(10_000) }).toBe(0);
    // A driver that adopts the machine holds it again.
    const again = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    expect((await again.list()).map((m) => m.id)).toContain('held-agent');
    await expect.poll(() => clients(qga), { timeout: scaled(10_000) }).toBe(1);
    await again.destroy('held-agent');
    await again.close();
  });

  it('a QEMU killed from outside is reported crashed, then stopped exactly once, and its run dir cleaned', async () => {
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const events: MachineEvent[] = [];
    d.onEvent((e) => events.push(e));
    const rt = await d.start(idle('killed'));
    process.kill(rt.pid!, 'SIGKILL');
    expect(await waitForStopped(d, 'killed', scaled(5000))).toMatch(/^signal-SIGKILL/);
    await new Promise((r) => setTimeout(r, 1200));
    expect(events.map((e) => e.type)).toEqual(['started', 'crashed', 'stopped']);
    expect(existsSync(join(ownRunDir, 'killed'))).toBe(false);
    await d.close();
  });

  it('notices the exit of a machine it adopted (not its child) by watching the pid', async () => {
    const first = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const rt = await first.start(idle('adopted'));
    await first.close();
    const second = new QemuDriver({ runDir: ownRunDir, accel: 'tcg', pollMs: 200 });
    expect((await second.list()).map((m) => m.pid)).toEqual([rt.pid]);
    try {
      const stopped = waitForStopped(second, 'adopted', scaled(15_000));
      process.kill(rt.pid!, 'SIGTERM'); // QEMU reports SIGTERM as a host-signal shutdown
      expect(await stopped.catch(withProcessState(rt.pid!, 'adopted'))).toBe('host-signal');
      expect(await second.list()).toEqual([]);
    } finally {
      await second.destroy('adopted'); // (when it failed: not left for the next case to adopt)
      await second.close();
    }
  });

  it('tells a host signal\'s stop as such when QMP could not say it (the monitor held by another client)', async () => {
    const first = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const rt = await first.start(idle('held'));
    await first.close();
    // QMP serves one client at a time: with this one connected, the next driver adopts the machine without QMP.
    const holder = connect(join(ownRunDir, 'held', 'qmp.sock'));
    await once(holder, 'data');
    const second = new QemuDriver({ runDir: ownRunDir, accel: 'tcg', pollMs: 200 });
    const events: MachineEvent[] = [];
    second.onEvent((e) => events.push(e));
    try {
      expect((await second.list()).map((m) => m.pid)).toEqual([rt.pid]);
      process.kill(rt.pid!, 'SIGTERM');
      expect(await waitForStopped(second, 'held', scaled(15_000)).catch(withProcessState(rt.pid!, 'held'))).toBe('host-signal');
      expect(events.filter((e) => e.type === 'crashed')).toEqual([]);
    } finally {
      holder.destroy();
      await second.destroy('held');
      await second.close();
    }
  }, scaled(30_000));

  it('starts with the spec\'s VNC password: a viewer gets in with it at once, and it is nowhere on disk', async () => {
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const spec: MachineSpec = {
      id: 'with-pw', name: 'with-pw', memoryMb: 64, vcpus: 1, disks: [], isos: [], bootOrder: [], nics: [], video: 'std',
      graphics: { vnc: true, spice: false }, vncPassword: 'pw123456',
    };
    try {
      const runtime = await d.start(spec);
      expect(runtime.vncPasswordSet).toBe(true);
      expect(await probeVnc(runtime.vnc!, 'pw123456')).toMatchObject({ ok: true, securityTypes: [2] });
      expect(await probeVnc(runtime.vnc!, 'wrong')).toMatchObject({ ok: false, reason: 'authentication failed' });
      // The server draws a screen itself as a first viewer would (a pool's prepared desktops): with the password only.
      await drawScreenOnce(runtime.vnc!, 'pw123456');
      await expect(drawScreenOnce(runtime.vnc!, 'wrong')).rejects.toBeInstanceOf(VncRefusedError);
      // Read once by QEMU from its own file, gone since; never in the stored spec.
      const dir = join(ownRunDir, 'with-pw');
      expect(existsSync(join(dir, 'vnc.secret'))).toBe(false);
      expect(readFileSync(join(dir, 'spec.json'), 'utf8')).not.toContain('pw123456');
      // The driver can still change it (a ticket's setting).
      await d.setViewerPassword('with-pw', 'vnc', 'other', 60);
      expect((await probeVnc(runtime.vnc!, 'other')).ok).toBe(true);
      await expect(d.start({ ...spec, id: 'long-pw', vncPassword: 'longer-than-8' })).rejects.toMatchObject({ code: 'invalid-spec' });
    } finally {
      await d.destroy('with-pw');
      await d.close();
    }
  });

  it('offers the screen of a machine coming up (launched, then started): a viewer greeted and let in with the start\'s password; a failed start ends its wait', async () => {
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const spec: MachineSpec = {
      id: 'coming-up', name: 'coming-up', memoryMb: 64, vcpus: 1, disks: [], isos: [], bootOrder: [], nics: [], video: 'std',
      graphics: { vnc: true, spice: false }, vncPassword: 'pw123456',
    };
    const events: MachineEvent['type'][] = [];
    let screen: LaunchingScreen | undefined;
    let greeted: Promise<{ greeting: string; before: boolean }> | undefined;
    let started = false;
    const off = d.onEvent((e) => {
      if (e.id !== spec.id && e.id !== 'broken-up') return;
      events.push(e.type);
      if (e.type !== 'launched') return;
      screen = d.launchingScreen(e.id);
      // Connected at once, as the viewer opened with the start is: its greeting whenever QEMU listens.
      greeted = openVnc(screen!.vnc, { launching: screen!.launched }).then(({ socket, greeting }) => {
        socket.destroy();
        return { greeting: greeting.toString(), before: !started };
      });
    });
    try {
      const runtime = await d.start(spec);
      started = true;
      expect(events.slice(0, 2)).toEqual(['launched', 'started']);
      expect(screen!.vnc).toEqual(runtime.vnc);
      expect(await screen!.launched).toBe(true);
      expect((await greeted!).greeting).toMatch(/^RFB 003\.00\d\n$/);
      expect(d.launchingScreen(spec.id)).toBeUndefined();
      // The password it was launched with is the one in force (nothing set after the launch).
      expect(await probeVnc(runtime.vnc!, 'pw123456')).toMatchObject({ ok: true, securityTypes: [2] });
      await d.destroy(spec.id);

      // A machine without a launch password offers no screen before it runs (it would be open to anyone).
      events.length = 0;
      screen = undefined;
      await d.start({ ...spec, vncPassword: undefined });
      expect(events).toEqual(['started']);
      await d.destroy(spec.id);

      // A start that fails: the viewer's wait ends with it, not at a bound.
      events.length = 0;
      greeted = undefined;
      const failing = d.start({ ...spec, id: 'broken-up', disks: [{ path: '/nonexistent/disk.qcow2', bus: 'default' }], bootOrder: ['disk'] });
      await expect(failing).rejects.toMatchObject({ code: 'start-failed' });
      if (greeted) await expect(greeted).rejects.toMatchObject({ kind: 'unreachable' });
      expect(await screen!.launched).toBe(false);
      expect(d.launchingScreen('broken-up')).toBeUndefined();
    } finally {
      off();
      await d.destroy(spec.id);
      await d.close();
    }
  });

  it('rejects specs it cannot run', async () => {
    const d = new QemuDriver({ runDir: ownRunDir, accel: 'tcg' });
    const base = { id: 'ok-id', name: 'x', memoryMb: 64, vcpus: 1, disks: [], isos: [], bootOrder: [] as [], nics: [], video: 'std' as const, graphics: { vnc: false, spice: false } };
    await expect(d.start({ ...base, id: '../escape' })).rejects.toMatchObject({ code: 'invalid-spec' });
    await expect(d.destroy('../../etc')).rejects.toMatchObject({ code: 'invalid-spec' });
    await expect(d.start({ ...base, nics: [{ id: 'n', mac: 'nope' }] })).rejects.toMatchObject({ code: 'invalid-spec' });
    await expect(d.start({ ...base, disks: [{ path: 'relative.qcow2', bus: 'virtio' }] })).rejects.toMatchObject({ code: 'invalid-spec' });
    await d.close();
    await expect(d.list()).rejects.toMatchObject({ code: 'closed' });
  });
});
