import { and, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { LOCAL_HYPERVISOR, RUNNING_STATUSES } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import type { PreferredHypervisors } from '../../db/schema';
import { precondition } from '../../http/errors';
import type { DomainRow } from '../shared/domains';
import { disksOf } from '../desktops/machine-spec';
import { categoryPoolOf, diskHostOf, HOST_OWN_POOL, SHARED_POOL } from '../pools';
import { desktopsFitting, place, poolDemand, readingFor, START_IN_FLIGHT_MS, type HostReading, type NoHostReason, type PlacementHost, type StartInFlight } from './rules';

export { place, type NoHostReason } from './rules';


const NO_HOST_TEXT: Record<NoHostReason, string> = {
  no_hypervisor_available: 'No hypervisor is online to start this desktop',
  no_new_starts: 'No hypervisor takes new desktops now: an administrator has stopped new starts',
  pool_unreachable: 'No hypervisor that takes new desktops reaches the storage of this desktop',
  guest_network_unreachable: 'No hypervisor that takes new desktops is prepared for the private network of this desktop',
  disk_host_unavailable: 'The disk of this desktop lives on one hypervisor, which does not take new desktops now',
  gpu_not_offered: 'No hypervisor that takes new desktops offers the GPU profile of this desktop',
  no_memory: 'No hypervisor has room for this desktop',
};

const d = schema.domains;

/** vCPUs of the desktops running on each host (a desktop started before hosts were recorded is on `local`). */
async function vcpusByHost(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .select({ host: d.hypervisorId, vcpus: sql<number>`coalesce(sum((${d.hardware}->>'vcpus')::float8), 0)`.mapWith(Number) })
    .from(d)
    .where(inArray(d.status, [...RUNNING_STATUSES]))
    .groupBy(d.hypervisorId);
  const out = new Map<string, number>();
  for (const r of rows) out.set(r.host ?? LOCAL_HYPERVISOR, (out.get(r.host ?? LOCAL_HYPERVISOR) ?? 0) + r.vcpus);
  return out;
}

/**
 * The GPU profiles each host offers now: those a plan in progress gives the cards in it (a card is in
 * one hypervisor, `reservable_items.hypervisor_id`), by the bookings' clock as the start check reads it.
 */
async function gpuProfilesByHost(db: Db, now: Date): Promise<Map<string, string[]>> {
  const p = schema.reservablePlans;
  const i = schema.reservableItems;
  const rows = await db
    .selectDistinct({ host: i.hypervisorId, profile: p.subitemId })
    .from(p)
    .innerJoin(i, eq(i.id, p.itemId))
    .where(and(eq(i.enabled, true), lte(p.start, now), gt(p.end, now)));
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.host, [...(out.get(r.host) ?? []), r.profile]);
  return out;
}

/** Of the profiles a desktop may use, the one some host offers now (the start check asked that one of them is). */
function gpuProfileOf(wanted: readonly string[], offered: Map<string, string[]>): string | null {
  if (wanted.length === 0) return null;
  const now = new Set([...offered.values()].flat());
  return wanted.find((p) => now.has(p)) ?? wanted[0]!;
}

/** The desktops running on host `hostId` (ids; with those `Unknown` while it is offline), e.g. to drain it or to refuse its removal. */
export async function desktopsOn(db: Db, hostId: string): Promise<string[]> {
  const onHost = hostId === LOCAL_HYPERVISOR ? or(isNull(d.hypervisorId), eq(d.hypervisorId, hostId)) : eq(d.hypervisorId, hostId);
  const rows = await db.select({ id: d.id }).from(d).where(and(eq(d.kind, 'desktop'), inArray(d.status, [...RUNNING_STATUSES, 'Unknown']), onHost));
  return rows.map((r) => r.id);
}

/**
 * How many more desktops of `need`'s size the enabled hosts that are online and not draining hold now: on each, as
 * many as its free memory and its vCPUs left allow (the placement's rule).
 */
export async function roomForDesktops(ctx: Pick<AppContext, 'db' | 'engine' | 'config'>, need: { memoryMb: number; vcpus: number }): Promise<number> {
  const [hosts, vcpus] = await Promise.all([ctx.db.select().from(schema.hypervisors), vcpusByHost(ctx.db)]);
  let room = 0;
  for (const h of hosts) {
    if (!h.enabled || h.draining) continue;
    const s = await ctx.engine.hosts.status(h.id).catch(() => null);
    if (s?.online) room += desktopsFitting({ freeMemoryMb: s.freeMemoryMb, cpus: s.cpus, vcpusInUse: vcpus.get(h.id) ?? 0 }, need, ctx.config.vcpuOvercommit);
  }
  return room;
}

/** A desktop's pinning: its deployment's when that names any host, else its template's. */
async function preferenceOf(db: Db, row: DomainRow): Promise<PreferredHypervisors> {
  const none = { forced: [], favourite: [] };
  if (row.tag) {
    const [dep] = await db.select({ p: schema.deployments.preferredHypervisors }).from(schema.deployments).where(eq(schema.deployments.id, row.tag));
    if (dep && (dep.p.forced.length > 0 || dep.p.favourite.length > 0)) return dep.p;
  }
  if (!row.templateId) return none;
  const [tpl] = await db.select({ p: d.preferredHypervisors }).from(d).where(eq(d.id, row.templateId));
  return tpl?.p ?? none;
}

/**
 * Where desktops start: gathers the facts (the hosts' stored state, their live status from the
 * engine, what runs where, the desktop's pinning) and lets the rules decide. The starts it placed in
 * the last 30 s count against their host (this server process's; each process places its own).
 */
export function createPlacement(ctx: Pick<AppContext, 'db' | 'engine' | 'clock' | 'config'>) {
  const { db } = ctx;
  let inFlight: StartInFlight[] = [];
  /** per host, the reading held at its burst's first start (see `readingFor`) */
  const held = new Map<string, HostReading>();

  /**
   * The host for `row`'s start (`need.guestNetwork`: it has a NIC on the guest network; `need.disks`: its disks when the
   * caller read them already), recorded as in flight there; or a 428 `hypervisors_not_available` with the reason.
   */
  async function hostFor(row: DomainRow, need: { guestNetwork: boolean; disks?: ReturnType<typeof disksOf> }): Promise<string> {
    const [rows, vcpus, pref, gpus, disks, categoryPool] = await Promise.all([
      db.select().from(schema.hypervisors), vcpusByHost(db), preferenceOf(db, row), gpuProfilesByHost(db, ctx.clock.now()), need.disks ?? disksOf(db, row.id), categoryPoolOf(db, row.userId),
    ]);
    // Real time, not the bookings' clock: starts in flight are about the host's own numbers catching up.
    const now = Date.now();
    const readings = new Map<string, HostReading>();
    const hosts: PlacementHost[] = await Promise.all(
      rows.map(async (h) => {
        const s = await ctx.engine.hosts.status(h.id).catch(() => null);
        const reading = readingFor({ freeMemoryMb: s?.freeMemoryMb ?? 0, at: now }, held.get(h.id), now);
        readings.set(h.id, reading);
        return {
          id: h.id,
          enabled: h.enabled,
          onlyForced: h.onlyForced,
          draining: h.draining,
          online: s?.online ?? false,
          cpus: s?.cpus ?? 0,
          vcpuOvercommit: ctx.config.vcpuOvercommit,
          freeMemoryMb: reading.freeMemoryMb,
          vcpusInUse: vcpus.get(h.id) ?? 0,
          pools: s?.pools.map((p) => p.name) ?? [],
          guestNetwork: s?.guestNetwork ?? false,
          gpuProfiles: gpus.get(h.id) ?? [],
        };
      }),
    );
    inFlight = inFlight.filter((s) => now - s.at < START_IN_FLIGHT_MS);
    // The owner's category's pool; else disks in the storage folder: hosts that reach it, or hosts with a pool of their own to copy the base to.
    const demand = {
      memoryMb: row.hardware.memoryMb, vcpus: row.hardware.vcpus, ...poolDemand(categoryPool, SHARED_POOL, HOST_OWN_POOL), diskHost: diskHostOf(disks),
      guestNetwork: need.guestNetwork, gpuProfile: gpuProfileOf(row.hardware.reservables.vgpus ?? [], gpus),
    };
    const chosen = place(hosts, demand, pref, inFlight, now);
    // The original's code stays on the wire (its clients branch on it); the reason says which rule refused.
    if (!chosen.ok) throw precondition('hypervisors_not_available', NO_HOST_TEXT[chosen.reason], { reason: chosen.reason });
    inFlight.push({ hostId: chosen.hostId, at: now, memoryMb: demand.memoryMb, vcpus: demand.vcpus });
    held.set(chosen.hostId, readings.get(chosen.hostId)!);
    return chosen.hostId;
  }

  /** A start that did not happen (refused after placement, or failed) no longer counts against its host. */
  function forget(hostId: string) {
    const i = inFlight.findLastIndex((s) => s.hostId === hostId);
    if (i >= 0) inFlight.splice(i, 1);
  }

  return { hostFor, forget };
}
