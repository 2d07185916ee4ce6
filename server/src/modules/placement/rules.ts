/**
 * Placement: which host starts a desktop. Pure rules, written once (the original's engine:
 * enabled and online hosts that can serve the desktop, starts still in flight counted against a
 * host for 30 s, ranked by free memory — hosts within one desktop's memory of each other by the
 * vCPUs they run; `forced_hyp` keeps only those hosts, `favourite_hyp` puts them first; Ravada's
 * base copies: a host without the shared pool takes a desktop when it can receive its template's
 * base, and the desktop's disk then binds it to that host). The start path gathers the facts; this
 * decides.
 */

/** How long a start counts against its host (its memory and vCPUs) before the host's numbers show it. */
export const START_IN_FLIGHT_MS = 30_000;

/** Why no host takes the desktop: carried in the refusal's `params.reason`. */
export type NoHostReason =
  /** no host at all is enabled, online and not draining (or none of the forced ones is) */
  | 'no_hypervisor_available'
  /** hosts exist but an administrator stopped new starts on every one (disabled, draining, only forced) */
  | 'no_new_starts'
  /** the desktop's storage pool is reachable on no candidate (nor can its template's base be copied to one) */
  | 'pool_unreachable'
  /** the desktop is on the guest network, which reaches no candidate (no `vdi-guests` bridge there) */
  | 'guest_network_unreachable'
  /** its disk lives on one host's own pool, and that host does not take it now */
  | 'disk_host_unavailable'
  /** its GPU profile is offered on no candidate */
  | 'gpu_not_offered'
  /** no candidate has the free memory (or vCPUs) it needs, counting starts in flight */
  | 'no_memory';

export type PlacementHost = {
  id: string;
  enabled: boolean;
  /** only starts that force this host (the original's `only_forced`) */
  onlyForced: boolean;
  draining: boolean;
  online: boolean;
  cpus: number;
  freeMemoryMb: number;
  /** vCPUs of the machines it runs now */
  vcpusInUse: number;
  /** vCPUs it may hand out per CPU (the installation's `VCPU_OVERCOMMIT`; VCPU_OVERCOMMIT when not said) */
  vcpuOvercommit?: number;
  /** storage pools it reaches (names) */
  pools: string[];
  /** the guest network reaches it (this machine: the network is up; a remote host: its bridge and the tunnel) */
  guestNetwork: boolean;
  /** GPU profiles it offers */
  gpuProfiles: string[];
};

/** A start asked of a host less than START_IN_FLIGHT_MS ago. */
export type StartInFlight = { hostId: string; at: number; memoryMb: number; vcpus: number };

export type PlacementDemand = {
  memoryMb: number;
  vcpus: number;
  /** the pool its disk(s) must be reached in: its category's, else the shared one (the installation's storage folder, `default`) */
  pool: string;
  /** it has a NIC on the guest network */
  guestNetwork: boolean;
  /** a host's own pool a template's base can be copied into (null: its disks must be reached where they are) */
  copyPool: string | null;
  /** the host whose own pool holds its disk(s) already: that host only (null: they are in the shared pool) */
  diskHost: string | null;
  /** its GPU profile, or null */
  gpuProfile: string | null;
};

/**
 * The pools a desktop needs (the original's pools mapped to categories): its category's pool when it has
 * one — only hosts that declare a pool of that name take it, and its disks go there — else the shared
 * pool, or a host's own pool (`ownPool`) to receive a copy of its template's base.
 */
export function poolDemand(categoryPool: string | null, sharedPool: string, ownPool: string): Pick<PlacementDemand, 'pool' | 'copyPool'> {
  return categoryPool ? { pool: categoryPool, copyPool: null } : { pool: sharedPool, copyPool: ownPool };
}

/** The template's or deployment's pinning (the original's `forced_hyp` / `favourite_hyp`): host ids. */
export type PlacementPreference = { forced: string[]; favourite: string[] };

export type Placement = { ok: true; hostId: string } | { ok: false; reason: NoHostReason };

/** How many vCPUs a host may hand out per physical CPU by default (`VCPU_OVERCOMMIT`; TCG and KVM both overcommit; the original does not cap). */
export const VCPU_OVERCOMMIT = 8;

/** How many more desktops of `demand`'s size a host holds: its free memory and its vCPUs left (`overcommit` per CPU). */
export function desktopsFitting(h: { freeMemoryMb: number; cpus: number; vcpusInUse: number }, demand: { memoryMb: number; vcpus: number }, overcommit = VCPU_OVERCOMMIT): number {
  const byMemory = Math.floor(h.freeMemoryMb / Math.max(1, demand.memoryMb));
  const byVcpus = Math.floor((h.cpus * overcommit - h.vcpusInUse) / Math.max(1, demand.vcpus));
  return Math.max(0, Math.min(byMemory, byVcpus));
}

/** Starts of the last 30 s on `hostId` (older ones are already in the host's numbers). */
export function inFlightOn(hostId: string, starts: StartInFlight[], now: number) {
  let memoryMb = 0;
  let vcpus = 0;
  for (const s of starts) {
    if (s.hostId !== hostId || now - s.at >= START_IN_FLIGHT_MS || s.at > now) continue;
    memoryMb += s.memoryMb;
    vcpus += s.vcpus;
  }
  return { memoryMb, vcpus };
}

/** A host's free memory as read at `at` (ms). */
export type HostReading = { freeMemoryMb: number; at: number };

/**
 * The reading placement ranks a host by: during a burst of starts, the one held when the burst's first
 * start went there (for START_IN_FLIGHT_MS), so that the host's later readings — which show the burst's
 * guests bit by bit as they touch their memory — are not counted on top of the starts in flight that
 * already stand for them. Without it, whichever host's numbers were read again mid-burst looked fuller
 * than its equals, and a storm of 30 over three equal hosts ended 11/10/9. Outside a burst: the current reading.
 */
export function readingFor(current: HostReading, held: HostReading | undefined, now: number): HostReading {
  return held && now - held.at < START_IN_FLIGHT_MS && held.at <= now ? held : current;
}

/** Free memory left on a host once its starts in flight are counted. */
export const freeAfterInFlight = (h: PlacementHost, starts: StartInFlight[], now: number) => h.freeMemoryMb - inFlightOn(h.id, starts, now).memoryMb;

/**
 * Picks the host for one start, or says why none can take it. The order of the filters is the
 * order of the reasons an admin reads: availability, then what the desktop needs, then room.
 */
export function place(hosts: PlacementHost[], demand: PlacementDemand, pref: PlacementPreference, starts: StartInFlight[], now: number): Placement {
  const forced = new Set(pref.forced);
  // Forced: only those hosts, and they take it even when "only forced".
  const pinned = forced.size > 0 ? hosts.filter((h) => forced.has(h.id)) : hosts;
  const up = pinned.filter((h) => h.online);
  if (up.length === 0) return { ok: false, reason: 'no_hypervisor_available' };
  const taking = up.filter((h) => h.enabled && !h.draining && (!h.onlyForced || forced.has(h.id)));
  if (taking.length === 0) return { ok: false, reason: 'no_new_starts' };
  // Where its disks are: bound to one host's own pool, or the shared pool (a host without it can take
  // the desktop when it has its own pool to receive a copy of the template's base, as Ravada does).
  const shared = (h: PlacementHost) => h.pools.includes(demand.pool);
  let withPool: PlacementHost[];
  if (demand.diskHost !== null) {
    withPool = taking.filter((h) => h.id === demand.diskHost);
    if (withPool.length === 0) return { ok: false, reason: 'disk_host_unavailable' };
  } else {
    withPool = taking.filter((h) => shared(h) || (demand.copyPool !== null && h.pools.includes(demand.copyPool)));
    if (withPool.length === 0) return { ok: false, reason: 'pool_unreachable' };
  }
  const withNet = demand.guestNetwork ? withPool.filter((h) => h.guestNetwork) : withPool;
  if (withNet.length === 0) return { ok: false, reason: 'guest_network_unreachable' };
  const withGpu = demand.gpuProfile === null ? withNet : withNet.filter((h) => h.gpuProfiles.includes(demand.gpuProfile!));
  if (withGpu.length === 0) return { ok: false, reason: 'gpu_not_offered' };
  const roomy = withGpu
    .map((h) => {
      const flight = inFlightOn(h.id, starts, now);
      return { h, free: h.freeMemoryMb - flight.memoryMb, vcpus: h.vcpusInUse + flight.vcpus };
    })
    .filter((c) => desktopsFitting({ freeMemoryMb: c.free, cpus: c.h.cpus, vcpusInUse: c.vcpus }, demand, c.h.vcpuOvercommit) >= 1);
  if (roomy.length === 0) return { ok: false, reason: 'no_memory' };
  const favourite = new Set(pref.favourite);
  // Favourites first; then hosts that reach the shared pool (no copy, the desktop stays free to move); then free memory.
  roomy.sort((a, b) => Number(favourite.has(b.h.id)) - Number(favourite.has(a.h.id)) || Number(shared(b.h)) - Number(shared(a.h)) || b.free - a.free || a.h.id.localeCompare(b.h.id));
  const first = roomy[0]!;
  // Of the first rank, the hosts within one desktop's memory of the roomiest are as roomy for it (placed on either, the
  // two stay within one desktop of each other): the one with fewer vCPUs in use, starts in flight counted, takes it. So
  // hosts whose free memory ties — equal hosts, or the lab's hosts sharing one machine's memory, read a few seconds apart —
  // share the desktops instead of whichever reading was a little higher taking them all.
  const tied = roomy.filter(
    (c) => Number(favourite.has(c.h.id)) === Number(favourite.has(first.h.id)) && shared(c.h) === shared(first.h) && first.free - c.free < Math.max(1, demand.memoryMb),
  );
  tied.sort((a, b) => a.vcpus - b.vcpus || b.free - a.free || a.h.id.localeCompare(b.h.id));
  return { ok: true, hostId: tied[0]!.h.id };
}
