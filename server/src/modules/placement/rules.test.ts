import { describe, expect, it } from 'vitest';
import { desktopsFitting, place, poolDemand, inFlightOn, readingFor, START_IN_FLIGHT_MS, type HostReading, VCPU_OVERCOMMIT, type PlacementHost, type PlacementDemand } from './rules';

const NOW = 1_000_000;
const host = (id: string, over: Partial<PlacementHost> = {}): PlacementHost => ({
  id,
  enabled: true,
  onlyForced: false,
  draining: false,
  online: true,
  cpus: 4,
  freeMemoryMb: 8192,
  vcpusInUse: 0,
  pools: ['default'],
  guestNetwork: true,
  gpuProfiles: [],
  ...over,
});
const demand: PlacementDemand = { memoryMb: 1024, vcpus: 2, pool: 'default', copyPool: null, diskHost: null, guestNetwork: false, gpuProfile: null };
const none = { forced: [], favourite: [] };

describe('placement', () => {
  it('ranks the candidates by free memory', () => {
    expect(place([host('a', { freeMemoryMb: 2048 }), host('b', { freeMemoryMb: 6000 }), host('c', { freeMemoryMb: 4000 })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
  });

  it('breaks a tie by id, so the choice is the same every time', () => {
    expect(place([host('b'), host('a')], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });

  it('hosts within one desktop of free memory of the roomiest tie: fewer vCPUs in use takes it, starts in flight counted', () => {
    // 192 MB apart (less than the desktop's 1024): b, running fewer vCPUs, takes it.
    expect(place([host('a', { freeMemoryMb: 8192, vcpusInUse: 4 }), host('b', { freeMemoryMb: 8000, vcpusInUse: 0 })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    // A start in flight on b counts as its vCPUs (and memory): a takes the next.
    const onB = [{ hostId: 'b', at: NOW - 1000, memoryMb: 256, vcpus: 6 }];
    expect(place([host('a', { freeMemoryMb: 8192, vcpusInUse: 4 }), host('b', { freeMemoryMb: 8192, vcpusInUse: 0 })], demand, none, onB, NOW)).toEqual({ ok: true, hostId: 'a' });
    // Equal vCPUs: more free memory, then the id.
    expect(place([host('a', { freeMemoryMb: 8000, vcpusInUse: 2 }), host('b', { freeMemoryMb: 8192, vcpusInUse: 2 })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([host('b', { vcpusInUse: 2 }), host('a', { vcpusInUse: 2 })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });

  it('keeps the free memory ranking beyond one desktop of difference, and favourites and shared-pool hosts first', () => {
    // 1192 MB apart: the roomier host, however many vCPUs it runs.
    expect(place([host('a', { freeMemoryMb: 8192, vcpusInUse: 12 }), host('b', { freeMemoryMb: 7000, vcpusInUse: 0 })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
    // A favourite (or a host with the shared pool) ties with none outside its rank.
    expect(place([host('a', { vcpusInUse: 12 }), host('b')], demand, { forced: [], favourite: ['a'] }, [], NOW)).toEqual({ ok: true, hostId: 'a' });
    const copy = { ...demand, copyPool: 'local' };
    expect(place([host('a', { pools: ['default'], vcpusInUse: 12 }), host('b', { pools: ['local'] })], copy, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });

  it("spreads a pool's desktops over hosts sharing one machine's memory (the lab), read a few seconds apart", () => {
    const desk = { ...demand, memoryMb: 256, vcpus: 1 };
    // A burst of 4: host a read 266 MB higher than b (as measured in the lab), both held for the burst.
    const starts: { hostId: string; at: number; memoryMb: number; vcpus: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const p = place([host('a', { freeMemoryMb: 20_821 }), host('b', { freeMemoryMb: 20_555 })], desk, none, starts, NOW + i * 100);
      if (!p.ok) throw new Error(p.reason);
      starts.push({ hostId: p.hostId, at: NOW + i * 100, memoryMb: 256, vcpus: 1 });
    }
    expect(['a', 'b'].map((id) => starts.filter((s) => s.hostId === id).length)).toEqual([2, 2]);
    // One at a time, a minute apart: every guest lowers both hosts' readings (one memory), a reads up to 200 MB higher.
    const running = new Map([['a', 0], ['b', 0]]);
    for (let i = 0; i < 6; i++) {
      const used = 256 * (running.get('a')! + running.get('b')!);
      const hosts = ['a', 'b'].map((id) => host(id, { freeMemoryMb: 20_000 - used + (id === 'a' ? 200 : 0) - (i % 3) * 40, vcpusInUse: running.get(id)! }));
      const p = place(hosts, desk, none, [], NOW + i * 60_000);
      if (!p.ok) throw new Error(p.reason);
      running.set(p.hostId, running.get(p.hostId)! + 1);
    }
    expect([...running.values()]).toEqual([3, 3]);
  });

  it('skips a disabled, a draining, an offline and an "only forced" host', () => {
    const hosts = [host('off', { enabled: false, freeMemoryMb: 9e6 }), host('drain', { draining: true, freeMemoryMb: 9e6 }), host('down', { online: false, freeMemoryMb: 9e6 }), host('forced', { onlyForced: true, freeMemoryMb: 9e6 }), host('ok', { freeMemoryMb: 2048 })];
    expect(place(hosts, demand, none, [], NOW)).toEqual({ ok: true, hostId: 'ok' });
  });

  it('answers no_hypervisor_available when no host is online (or there is none)', () => {
    expect(place([], demand, none, [], NOW)).toEqual({ ok: false, reason: 'no_hypervisor_available' });
    expect(place([host('a', { online: false })], demand, none, [], NOW)).toEqual({ ok: false, reason: 'no_hypervisor_available' });
  });

  it('answers no_new_starts when the online hosts take none (disabled, draining, only forced)', () => {
    expect(place([host('a', { enabled: false }), host('b', { draining: true }), host('c', { onlyForced: true })], demand, none, [], NOW)).toEqual({ ok: false, reason: 'no_new_starts' });
  });

  it('needs the desktop storage pool on the host', () => {
    expect(place([host('a', { pools: ['other'], freeMemoryMb: 9e6 }), host('b', { pools: ['default', 'other'] })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([host('a', { pools: ['other'] })], demand, none, [], NOW)).toEqual({ ok: false, reason: 'pool_unreachable' });
  });

  it('needs the guest network on the host for a desktop on it, and not otherwise', () => {
    const hosts = [host('a', { guestNetwork: false, freeMemoryMb: 9000 }), host('b')];
    expect(place(hosts, { ...demand, guestNetwork: true }, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place(hosts, demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
    expect(place([hosts[0]!], { ...demand, guestNetwork: true }, none, [], NOW)).toEqual({ ok: false, reason: 'guest_network_unreachable' });
  });

  it('takes a host without the shared pool when the base can be copied to its own pool, shared hosts first', () => {
    const copy = { ...demand, copyPool: 'local' };
    expect(place([host('a', { pools: ['local'] })], copy, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
    expect(place([host('a', { pools: ['other'] })], copy, none, [], NOW)).toEqual({ ok: false, reason: 'pool_unreachable' });
    // The shared host is taken first even with less memory: no copy, and the desktop is not bound.
    expect(place([host('a', { pools: ['local'], freeMemoryMb: 9e6 }), host('b', { pools: ['default', 'local'] })], copy, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([host('a', { pools: ['local'], freeMemoryMb: 9e6 }), host('b', { pools: ['local'] })], copy, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });

  it('a desktop of a category mapped to a pool starts only on hosts with that pool, else pool_unreachable', () => {
    expect(poolDemand(null, 'default', 'local')).toEqual({ pool: 'default', copyPool: 'local' });
    const fast = { ...demand, ...poolDemand('fast', 'default', 'local') };
    expect(fast).toMatchObject({ pool: 'fast', copyPool: null });
    // Neither the shared pool nor a host's own pool stands in for it.
    const hosts = [host('a', { pools: ['default', 'local'], freeMemoryMb: 9e6 }), host('b', { pools: ['local', 'fast'] }), host('c', { pools: ['fast'], freeMemoryMb: 6000 })];
    expect(place(hosts, fast, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([hosts[0]!], fast, none, [], NOW)).toEqual({ ok: false, reason: 'pool_unreachable' });
    // Its disk already bound to a host: that host, as for any other pool.
    expect(place(hosts, { ...fast, diskHost: 'c' }, none, [], NOW)).toEqual({ ok: true, hostId: 'c' });
  });

  it('a desktop whose disk is on a host own pool starts there only, or says that host does not take it', () => {
    const bound = { ...demand, copyPool: 'local', diskHost: 'b' };
    const hosts = [host('a', { freeMemoryMb: 9e6 }), host('b', { pools: ['local'] }), host('c', { pools: ['local'], freeMemoryMb: 9e6 })];
    expect(place(hosts, bound, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([hosts[0]!, { ...hosts[1]!, draining: true }, hosts[2]!], bound, none, [], NOW)).toEqual({ ok: false, reason: 'disk_host_unavailable' });
    expect(place([hosts[0]!, { ...hosts[1]!, online: false }], bound, none, [], NOW)).toEqual({ ok: false, reason: 'disk_host_unavailable' });
    expect(place([hosts[0]!, { ...hosts[1]!, freeMemoryMb: 10 }], bound, none, [], NOW)).toEqual({ ok: false, reason: 'no_memory' });
    // Pinned elsewhere: the disk wins over nothing, the start is refused.
    expect(place(hosts, bound, { forced: ['c'], favourite: [] }, [], NOW)).toEqual({ ok: false, reason: 'disk_host_unavailable' });
  });

  it('needs the GPU profile offered on the host', () => {
    const gpu = { ...demand, gpuProfile: 'nvidia-a16-2q' };
    expect(place([host('a', { freeMemoryMb: 9e6 }), host('b', { gpuProfiles: ['nvidia-a16-2q'] })], gpu, none, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([host('a')], gpu, none, [], NOW)).toEqual({ ok: false, reason: 'gpu_not_offered' });
  });

  it('needs enough free memory', () => {
    expect(place([host('a', { freeMemoryMb: 1023 })], demand, none, [], NOW)).toEqual({ ok: false, reason: 'no_memory' });
    expect(place([host('a', { freeMemoryMb: 1024 })], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });

  it('needs vCPUs within the overcommit of the host CPUs', () => {
    const full = host('a', { cpus: 1, vcpusInUse: VCPU_OVERCOMMIT - 1 });
    expect(place([full], demand, none, [], NOW)).toEqual({ ok: false, reason: 'no_memory' });
    expect(place([{ ...full, vcpusInUse: VCPU_OVERCOMMIT - 2 }], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
    // The installation's own overcommit (VCPU_OVERCOMMIT), when said.
    expect(place([{ ...full, vcpusInUse: 0, vcpuOvercommit: 1 }], demand, none, [], NOW)).toEqual({ ok: false, reason: 'no_memory' });
    expect(place([{ ...full, vcpusInUse: 0, vcpuOvercommit: 2 }], demand, none, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });

  it('counts how many more desktops of a size a host holds: the fewer its memory and its vCPUs left allow', () => {
    expect(desktopsFitting({ freeMemoryMb: 10_000, cpus: 2, vcpusInUse: 0 }, { memoryMb: 1000, vcpus: 1 }, 8)).toBe(10);
    expect(desktopsFitting({ freeMemoryMb: 10_000, cpus: 2, vcpusInUse: 3 }, { memoryMb: 256, vcpus: 1 }, 8)).toBe(13);
    expect(desktopsFitting({ freeMemoryMb: 10_000, cpus: 2, vcpusInUse: 0 }, { memoryMb: 256, vcpus: 2 }, 1)).toBe(1);
    expect(desktopsFitting({ freeMemoryMb: 100, cpus: 2, vcpusInUse: 20 }, { memoryMb: 256, vcpus: 1 }, 8)).toBe(0);
  });

  it('counts starts of the last 30 s against their host, and forgets older ones', () => {
    const hosts = [host('a', { freeMemoryMb: 6000 }), host('b', { freeMemoryMb: 5000 })];
    const recent = [{ hostId: 'a', at: NOW - 1000, memoryMb: 2000, vcpus: 2 }];
    expect(place(hosts, demand, none, recent, NOW)).toEqual({ ok: true, hostId: 'b' });
    const old = [{ hostId: 'a', at: NOW - START_IN_FLIGHT_MS, memoryMb: 2000, vcpus: 2 }];
    expect(place(hosts, demand, none, old, NOW)).toEqual({ ok: true, hostId: 'a' });
    expect(inFlightOn('a', [...recent, ...old, { hostId: 'b', at: NOW, memoryMb: 7, vcpus: 1 }], NOW)).toEqual({ memoryMb: 2000, vcpus: 2 });
  });

  it('spreads a storm: each start placed counts, so the next goes to the emptier host', () => {
    const hosts = [host('a', { freeMemoryMb: 4096 }), host('b', { freeMemoryMb: 4096 }), host('c', { freeMemoryMb: 4096 })];
    const starts: { hostId: string; at: number; memoryMb: number; vcpus: number }[] = [];
    for (let i = 0; i < 9; i++) {
      const p = place(hosts, { ...demand, vcpus: 1 }, none, starts, NOW);
      if (!p.ok) throw new Error(p.reason);
      starts.push({ hostId: p.hostId, at: NOW, memoryMb: demand.memoryMb, vcpus: 1 });
    }
    const per = ['a', 'b', 'c'].map((id) => starts.filter((s) => s.hostId === id).length);
    expect(per).toEqual([3, 3, 3]);
  });

  it("a storm's spread survives a host read again mid-burst: its reading from before the burst is held", () => {
    // Three equal hosts; host a's numbers are read again after 6 starts, showing 1400 MB of its guests already (more than one desktop's memory: no tie).
    const spread = (hold: boolean) => {
      const held = new Map<string, HostReading>();
      const starts: { hostId: string; at: number; memoryMb: number; vcpus: number }[] = [];
      for (let i = 0; i < 30; i++) {
        const now = NOW + i * 50;
        const current = (id: string) => ({ freeMemoryMb: id === 'a' && i >= 6 ? 20_000 - 1400 : 20_000, at: now });
        const reading = (id: string) => (hold ? readingFor(current(id), held.get(id), now) : current(id));
        const hosts = ['a', 'b', 'c'].map((id) => host(id, { freeMemoryMb: reading(id).freeMemoryMb }));
        const p = place(hosts, { ...demand, memoryMb: 512, vcpus: 1 }, none, starts, now);
        if (!p.ok) throw new Error(p.reason);
        held.set(p.hostId, reading(p.hostId));
        starts.push({ hostId: p.hostId, at: now, memoryMb: 512, vcpus: 1 });
      }
      return ['a', 'b', 'c'].map((id) => starts.filter((s) => s.hostId === id).length);
    };
    expect(spread(true)).toEqual([10, 10, 10]);
    expect(spread(false)).not.toEqual([10, 10, 10]); // what the rule is for
  });

  it('a held reading counts for START_IN_FLIGHT_MS, then the current one', () => {
    const held = { freeMemoryMb: 100, at: NOW };
    const current = { freeMemoryMb: 50, at: NOW + START_IN_FLIGHT_MS };
    expect(readingFor({ ...current, at: NOW + 1 }, held, NOW + 1)).toBe(held);
    expect(readingFor(current, held, NOW + START_IN_FLIGHT_MS)).toBe(current);
    expect(readingFor(current, undefined, NOW)).toBe(current);
  });

  it('forced hosts: only those, even when they are "only forced", never another', () => {
    const hosts = [host('a', { freeMemoryMb: 9e6 }), host('b', { onlyForced: true })];
    expect(place(hosts, demand, { forced: ['b'], favourite: [] }, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([host('a'), host('b', { online: false })], demand, { forced: ['b'], favourite: [] }, [], NOW)).toEqual({ ok: false, reason: 'no_hypervisor_available' });
    expect(place([host('a'), host('b', { enabled: false })], demand, { forced: ['b'], favourite: [] }, [], NOW)).toEqual({ ok: false, reason: 'no_new_starts' });
  });

  it('favourite hosts first when they can take it, else the others', () => {
    const hosts = [host('a', { freeMemoryMb: 9000 }), host('b', { freeMemoryMb: 2048 })];
    expect(place(hosts, demand, { forced: [], favourite: ['b'] }, [], NOW)).toEqual({ ok: true, hostId: 'b' });
    expect(place([host('a'), host('b', { freeMemoryMb: 10 })], demand, { forced: [], favourite: ['b'] }, [], NOW)).toEqual({ ok: true, hostId: 'a' });
  });
});
