import { readdir, readFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { availableMemoryBytes } from '../../../host/memory';
import { join } from 'node:path';
import { and, asc, count, eq, isNotNull } from 'drizzle-orm';
import type { TAdminHypervisor } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { runningByHost } from '../../quotas/usage';
import { hostWatchers } from '../../desktops/host-watch';
import { acceptsStarts, domainHostIdSql, LOCAL_HYPERVISOR } from '../../shared/hypervisor-state';

type HypervisorRow = typeof schema.hypervisors.$inferSelect;
type Gpu = TAdminHypervisor['gpus'][number];

const PCI_VENDORS: Record<string, string> = { '0x10de': 'NVIDIA', '0x1002': 'AMD', '0x8086': 'Intel', '0x1af4': 'Virtio', '0x1234': 'QEMU', '0x1b36': 'Red Hat', '0x15ad': 'VMware', '0x1013': 'Cirrus' };

/** Display controllers (PCI class 0x03…) of this host, read from sysfs; none where sysfs has no PCI bus. */
async function hostGpus(root = '/sys/bus/pci/devices'): Promise<Gpu[]> {
  const out: Gpu[] = [];
  for (const address of await readdir(root).catch(() => [] as string[])) {
    const read = (f: string) => readFile(join(root, address, f), 'utf8').then((s) => s.trim()).catch(() => '');
    if (!(await read('class')).startsWith('0x03')) continue;
    const vendor = await read('vendor');
    out.push({ address, vendor: PCI_VENDORS[vendor] ?? vendor, device: await read('device') });
  }
  return out;
}
let gpuCache: { at: number; gpus: Promise<Gpu[]> } | null = null;
const gpus = () => {
  if (!gpuCache || Date.now() - gpuCache.at > 60_000) gpuCache = { at: Date.now(), gpus: hostGpus() };
  return gpuCache.gpus;
};

/** CPU busy share since the previous sample (at most one sample a second; the first: since the host booted). */
let lastCpu: { idle: number; total: number; at: number; percent: number } | null = null;
function cpuUsedPercent(): number {
  if (lastCpu && Date.now() - lastCpu.at < 1000) return lastCpu.percent;
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle;
  }
  const dIdle = lastCpu ? idle - lastCpu.idle : idle;
  const dTotal = lastCpu ? total - lastCpu.total : total;
  const percent = dTotal <= 0 ? (lastCpu?.percent ?? 0) : Math.round(Math.max(0, Math.min(100, (1 - dIdle / dTotal) * 100)) * 10) / 10;
  lastCpu = { idle, total, at: Date.now(), percent };
  return percent;
}

/**
 * The hypervisors as rows: the stored state (enabled, only forced) with what the engine and the OS
 * report now for this server's host (accelerator, GPUs, CPUs, memory, load) and the desktops
 * running on it. Another host's row (none yet) would be Offline until its engine reports.
 */
export async function hypervisorViews(ctx: AppContext, rows?: HypervisorRow[]): Promise<TAdminHypervisor[]> {
  const list = rows ?? (await ctx.db.select().from(schema.hypervisors).orderBy(asc(schema.hypervisors.name), asc(schema.hypervisors.id)));
  const now = new Date().toISOString();
  const local = list.some((r) => r.id === LOCAL_HYPERVISOR) ? await Promise.all([ctx.engine.driver.capabilities().catch(() => null), gpus()]) : null;
  const [statuses, unknownRows, watchers, runningOn] = await Promise.all([
    Promise.all(list.map((r) => ctx.engine.hosts.status(r.id).catch(() => null))),
    ctx.db
      .select({ host: schema.domains.hypervisorId, n: count() })
      .from(schema.domains)
      .where(and(eq(schema.domains.status, 'Unknown'), isNotNull(schema.domains.hypervisorId)))
      .groupBy(schema.domains.hypervisorId),
    hostWatchers(ctx, list.map((r) => r.id)).catch(() => list.map(() => null)),
    runningByHost(ctx.db, domainHostIdSql()),
  ]);
  const unknown = new Map(unknownRows.map((u) => [u.host!, u.n]));
  return list.map((r, i) => {
    const host = statuses[i];
    const base = {
      id: r.id,
      name: r.name,
      enabled: r.enabled,
      only_forced: r.onlyForced,
      accepts_starts: acceptsStarts(r),
      draining: r.draining,
      uri: r.uri,
      cpu_model: host?.cpuModel ?? '',
      memory_free_mb: host?.online ? host.freeMemoryMb : 0,
      starts_in_flight: host?.startsInFlight ?? 0,
      pools: (host?.pools ?? []).map((p) => ({ name: p.name, path: p.path, capacity_bytes: p.capacityBytes, free_bytes: p.freeBytes })),
      last_error: r.id === LOCAL_HYPERVISOR && !ctx.config.localHypervisor ? null : (host?.lastError ?? null),
      off_by_configuration: r.id === LOCAL_HYPERVISOR && !ctx.config.localHypervisor,
      watched_by: watchers[i] ?? null,
      desktops_unknown: unknown.get(r.id) ?? 0,
      updated: now,
    };
    const [caps, cards] = local ?? [null, []];
    // What the desktops running there were given (the database's), beside what the host reports.
    const given = runningOn.get(r.id) ?? { count: 0, memoryGb: 0, vcpus: 0 };
    if (r.id !== LOCAL_HYPERVISOR && host?.online) {
      // Another host: what its engine connection reports (its CPU's busy share from libvirt's node CPU stats; its load average and GPUs are not read yet).
      return {
        ...base, state: 'Online' as const, accel: null, gpus: [], cpus: host.cpus, cpu_used_percent: host.cpuUsedPercent ?? 0, load: [0, 0, 0], memory_total_mb: host.memoryMb,
        memory_used_mb: host.memoryMb - host.freeMemoryMb, desktops_memory_mb: Math.round(given.memoryGb * 1024), desktops_vcpus: given.vcpus, desktops_running: host.running,
      };
    }
    if (r.id !== LOCAL_HYPERVISOR || !caps) {
      return { ...base, state: 'Offline' as const, accel: null, gpus: [], cpus: 0, cpu_used_percent: 0, load: [0, 0, 0], memory_total_mb: 0, memory_used_mb: 0, desktops_memory_mb: 0, desktops_vcpus: 0, desktops_running: 0 };
    }
    return {
      ...base,
      state: 'Online' as const,
      accel: caps.accel,
      gpus: cards,
      cpus: caps.cpus,
      cpu_used_percent: cpuUsedPercent(),
      load: loadavg().map((l) => Math.round(l * 100) / 100),
      memory_total_mb: Math.floor(totalmem() / 1048576),
      memory_used_mb: Math.floor((totalmem() - availableMemoryBytes()) / 1048576),
      desktops_memory_mb: Math.round(given.memoryGb * 1024),
      desktops_vcpus: given.vcpus,
      desktops_running: given.count,
    };
  });
}
