import { describe, expect, it } from 'vitest';
import { EngineError, type HypervisorDriver, type MachineEvent, type MachineRuntime, type MachineSpec, type MachineStatus } from './driver';
import { FleetDriver } from './fleet';

/** A driver double: machines in a map, every call recorded, events emitted by hand. */
function double(name: string, opts: { listFails?: boolean } = {}) {
  const machines = new Map<string, MachineRuntime>();
  const calls: string[] = [];
  const listeners = new Set<(e: MachineEvent) => void>();
  const driver: HypervisorDriver = {
    name,
    capabilities: async () => ({ accel: 'tcg', cpus: 2, memoryMb: 1024, freeMemoryMb: 512 }),
    start: async (spec: MachineSpec) => {
      calls.push(`start ${spec.id} host=${spec.host ?? '-'}`);
      const rt = { id: spec.id, startedAt: new Date(0) };
      machines.set(spec.id, rt);
      return rt;
    },
    shutdown: async (id) => void calls.push(`shutdown ${id}`),
    destroy: async (id) => {
      calls.push(`destroy ${id}`);
      machines.delete(id);
    },
    reset: async (id) => void calls.push(`reset ${id}`),
    status: async (id): Promise<MachineStatus> => (machines.has(id) ? 'running' : 'absent'),
    setViewerPassword: async (id, p) => void calls.push(`password ${id} ${p}`),
    screenshot: async () => Buffer.from(name),
    waitForSerial: async () => ['READY'] as unknown as RegExpMatchArray,
    guestAgent: async () => ({}),
    list: async () => {
      if (opts.listFails) throw new EngineError('host-unreachable', 'lost');
      return [...machines.values()];
    },
    onEvent: (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    close: async () => void calls.push('close'),
  };
  const emit = (e: MachineEvent) => listeners.forEach((cb) => cb(e));
  return { driver, machines, calls, emit };
}

const spec = (id: string, host?: string): MachineSpec => ({
  id,
  name: id,
  memoryMb: 64,
  vcpus: 1,
  disks: [],
  isos: [],
  bootOrder: ['disk'],
  nics: [],
  video: 'default',
  graphics: { vnc: true, spice: false },
  ...(host ? { host } : {}),
});

describe('FleetDriver', () => {
  it('starts on the host placement chose (local without one) and routes every later call there', async () => {
    const local = double('local');
    const a = double('a');
    const fleet = new FleetDriver(local.driver);
    fleet.setHost('a', a.driver);
    expect(await fleet.start(spec('d1', 'a'))).toMatchObject({ id: 'd1', host: 'a' });
    expect(await fleet.start(spec('d2'))).toMatchObject({ id: 'd2', host: 'local' });
    expect(a.calls).toEqual(['start d1 host=-']);
    expect(local.calls).toEqual(['start d2 host=-']);
    await fleet.setViewerPassword('d1', 'vnc', 'pw');
    await fleet.shutdown('d1');
    await fleet.destroy('d2');
    expect((await fleet.screenshot('d1')).toString()).toBe('a');
    expect(a.calls.slice(1)).toEqual(['password d1 vnc', 'shutdown d1']);
    expect(local.calls.slice(1)).toEqual(['destroy d2']);
  });

  it('refuses a start on a host it holds no connection to, with host-unreachable', async () => {
    const fleet = new FleetDriver(double('local').driver);
    await expect(fleet.start(spec('d1', 'gone'))).rejects.toMatchObject({ code: 'host-unreachable' });
  });

  it('lists the union with each machine\'s host, skipping a remote host that does not answer', async () => {
    const local = double('local');
    const a = double('a');
    const b = double('b', { listFails: true });
    a.machines.set('x', { id: 'x', startedAt: new Date(0) });
    local.machines.set('y', { id: 'y', startedAt: new Date(0) });
    const fleet = new FleetDriver(local.driver);
    fleet.setHost('a', a.driver);
    fleet.setHost('b', b.driver);
    expect((await fleet.list()).map((m) => `${m.id}@${m.host}`).sort()).toEqual(['x@a', 'y@local']);
  });

  it('tells whether machines may run on other hosts: not for machines here only, yes for one there or a host that does not answer', async () => {
    const local = double('local');
    const a = double('a');
    local.machines.set('y', { id: 'y', startedAt: new Date(0) });
    const fleet = new FleetDriver(local.driver);
    expect(await fleet.runsOnOtherHosts()).toBe(false);
    fleet.setHost('a', a.driver);
    expect(await fleet.runsOnOtherHosts()).toBe(false);
    a.machines.set('x', { id: 'x', startedAt: new Date(0) });
    expect(await fleet.runsOnOtherHosts()).toBe(true);
    a.machines.clear();
    fleet.setHost('b', double('b', { listFails: true }).driver);
    expect(await fleet.runsOnOtherHosts()).toBe(true);
  });

  it('finds a machine it never started (adopted) by asking the hosts, then remembers where', async () => {
    const local = double('local');
    const a = double('a');
    a.machines.set('old', { id: 'old', startedAt: new Date(0) });
    const fleet = new FleetDriver(local.driver);
    fleet.setHost('a', a.driver);
    expect(await fleet.status('old')).toBe('running');
    await fleet.reset('old');
    expect(a.calls).toEqual(['reset old']);
    expect(await fleet.status('nowhere')).toBe('absent');
  });

  it('merges the hosts\' events and learns from them; a removed host\'s events are no longer heard', async () => {
    const local = double('local');
    const a = double('a');
    const fleet = new FleetDriver(local.driver);
    fleet.setHost('a', a.driver);
    const seen: string[] = [];
    fleet.onEvent((e) => seen.push(`${e.id} ${e.type}@${e.host}`));
    a.emit({ id: 'z', type: 'started' });
    a.machines.set('z', { id: 'z', startedAt: new Date(0) });
    local.emit({ id: 'w', type: 'stopped' });
    await fleet.shutdown('z');
    expect(a.calls).toEqual(['shutdown z']);
    expect(fleet.removeHost('a')).toBe(a.driver);
    a.emit({ id: 'z', type: 'stopped' });
    expect(seen).toEqual(['z started@a', 'w stopped@local']);
    // Its machines are unknown now: a call about one goes to the hosts that remain.
    expect(await fleet.status('z')).toBe('absent');
  });

  it('destroys on the host named, even when the same machine was seen on another (a host marked down while away)', async () => {
    const local = double('local');
    const a = double('a');
    const b = double('b');
    const fleet = new FleetDriver(local.driver);
    fleet.setHost('a', a.driver);
    fleet.setHost('b', b.driver);
    a.machines.set('m', { id: 'm', startedAt: new Date(0) });
    b.machines.set('m', { id: 'm', startedAt: new Date(0) });
    await fleet.list();
    await fleet.destroy('m', 'a');
    expect(a.calls).toEqual(['destroy m']);
    expect(b.calls).toEqual([]);
    // The copy that remains is found again for the next call.
    await fleet.destroy('m');
    expect(b.calls).toEqual(['destroy m']);
    await expect(fleet.destroy('m', 'gone')).rejects.toMatchObject({ code: 'host-unreachable' });
  });

  it('counts the starts in flight per host and closes every host on close', async () => {
    const local = double('local');
    const a = double('a');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const start = a.driver.start;
    a.driver.start = async (s) => {
      await gate;
      return start(s);
    };
    const fleet = new FleetDriver(local.driver);
    fleet.setHost('a', a.driver);
    const pending = fleet.start(spec('d1', 'a'));
    expect(fleet.startsInFlight('a')).toBe(1);
    expect(fleet.startsInFlight('local')).toBe(0);
    release();
    await pending;
    expect(fleet.startsInFlight('a')).toBe(0);
    await fleet.close();
    expect(local.calls).toContain('close');
    expect(a.calls).toContain('close');
  });
});
