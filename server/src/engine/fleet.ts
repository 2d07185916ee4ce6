// The fleet: one HypervisorDriver over every host the engine runs machines on — this machine's own
// driver (`local`, the QEMU driver) and one driver per connected remote hypervisor (a LibvirtDriver,
// one libvirt connection each). A start goes to the host placement chose (`spec.host`); every other
// call goes to the host the machine runs on (known from starts, lists and events; else the hosts are
// asked). Nothing above the engine sees more than one driver.
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import {
  EngineError,
  type HostCapabilities,
  type HypervisorDriver,
  type LaunchingScreen,
  type MachineEvent,
  type MachineRuntime,
  type MachineSpec,
  type MachineStatus,
} from './driver';

type Member = { driver: HypervisorDriver; off: () => void };

export class FleetDriver implements HypervisorDriver {
  readonly name = 'fleet';
  private readonly members = new Map<string, Member>();
  /** machine id → the host it runs on (or is starting on) */
  private readonly where = new Map<string, string>();
  /** machine id → host, while its start is asked of that host */
  private readonly starting = new Map<string, string>();
  private readonly listeners = new Set<(e: MachineEvent) => void>();
  /** set by close(): nobody connects new hosts into a closed fleet */
  closed = false;

  constructor(local: HypervisorDriver) {
    this.setHost(LOCAL_HYPERVISOR, local);
  }

  /** Adds (or replaces, after a reconnection) the driver of host `id`; its events are merged. */
  setHost(id: string, driver: HypervisorDriver): void {
    this.members.get(id)?.off();
    const off = driver.onEvent((e) => {
      if (e.type === 'stopped') {
        if (this.where.get(e.id) === id) this.where.delete(e.id);
      } else {
        this.where.set(e.id, id);
      }
      const named = { ...e, host: id };
      for (const cb of this.listeners) cb(named);
    });
    this.members.set(id, { driver, off });
  }

  /** Forgets host `id` (its connection is closed by whoever made it); its machines are unknown from now on. */
  removeHost(id: string): HypervisorDriver | undefined {
    if (id === LOCAL_HYPERVISOR) throw new Error('the local host stays in the fleet');
    const m = this.members.get(id);
    if (!m) return undefined;
    m.off();
    this.members.delete(id);
    for (const [machine, host] of this.where) if (host === id) this.where.delete(machine);
    return m.driver;
  }

  /** The driver of host `id`, if the fleet holds one. */
  host(id: string): HypervisorDriver | undefined {
    return this.members.get(id)?.driver;
  }

  /** Starts asked of host `id` and not yet answered. */
  startsInFlight(id: string): number {
    let n = 0;
    for (const host of this.starting.values()) if (host === id) n++;
    return n;
  }

  private get local(): HypervisorDriver {
    return this.members.get(LOCAL_HYPERVISOR)!.driver;
  }

  /** The driver `id` runs on: the one recorded, else the first host that knows it (recorded), else local. */
  private async route(id: string): Promise<HypervisorDriver> {
    const known = this.where.get(id);
    if (known) {
      const m = this.members.get(known);
      if (m) return m.driver;
      throw new EngineError('host-unreachable', `the hypervisor ${id} runs on is not connected`);
    }
    const members = [...this.members.entries()];
    const states = await Promise.all(members.map(([, m]) => m.driver.status(id).catch(() => 'absent' as MachineStatus)));
    const i = states.findIndex((s) => s !== 'absent');
    if (i < 0) return this.local;
    this.where.set(id, members[i]![0]);
    return members[i]![1].driver;
  }

  capabilities(): Promise<HostCapabilities> {
    return this.local.capabilities();
  }

  async start(spec: MachineSpec): Promise<MachineRuntime> {
    const hostId = spec.host ?? LOCAL_HYPERVISOR;
    const m = this.members.get(hostId);
    if (!m) throw new EngineError('host-unreachable', `the hypervisor chosen for ${spec.id} is not connected`);
    const other = this.where.get(spec.id);
    if (other && other !== hostId) throw new EngineError('already-running', `${spec.id} is already running on another hypervisor`);
    this.starting.set(spec.id, hostId);
    this.where.set(spec.id, hostId);
    try {
      // The host's driver gets the spec without the fleet's field (guest credentials included: a
      // remote host hands them over by libvirt's fw_cfg entry, as QEMU here does from a file).
      const { host: _host, ...own } = spec;
      const runtime = await m.driver.start(own);
      return { ...runtime, host: hostId };
    } catch (err) {
      if (!(err instanceof EngineError && err.code === 'already-running') && this.where.get(spec.id) === hostId) this.where.delete(spec.id);
      throw err;
    } finally {
      this.starting.delete(spec.id);
    }
  }

  async shutdown(id: string): Promise<void> {
    return (await this.route(id)).shutdown(id);
  }

  async destroy(id: string, host?: string): Promise<void> {
    if (host === undefined) return (await this.route(id)).destroy(id);
    const m = this.members.get(host);
    if (!m) throw new EngineError('host-unreachable', `the hypervisor of ${id} is not connected`);
    await m.driver.destroy(id);
    if (this.where.get(id) === host) this.where.delete(id);
  }

  async reset(id: string): Promise<void> {
    return (await this.route(id)).reset(id);
  }

  async status(id: string): Promise<MachineStatus> {
    return (await this.route(id)).status(id);
  }

  async setViewerPassword(id: string, protocol: 'vnc' | 'spice', password: string, expiresInSeconds?: number): Promise<void> {
    return (await this.route(id)).setViewerPassword(id, protocol, password, expiresInSeconds);
  }

  async screenshot(id: string): Promise<Buffer> {
    return (await this.route(id)).screenshot(id);
  }

  async waitForSerial(id: string, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return (await this.route(id)).waitForSerial(id, pattern, timeoutMs);
  }

  async guestAgent(id: string, command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    return (await this.route(id)).guestAgent(id, command, args, timeoutMs);
  }

  /** The machines of every connected host, each with its host. A remote host that fails to answer
   *  (its connection lost) lists nothing: callers that must tell "stopped" from "not known now" ask
   *  the host directory whether it is online. The local driver's failure rejects. */
  async list(): Promise<MachineRuntime[]> {
    const members = [...this.members.entries()];
    const lists = await Promise.all(
      members.map(([host, m]) =>
        m.driver.list().then(
          (l) => l.map((r) => ({ ...r, host })),
          (err: unknown) => {
            if (host === LOCAL_HYPERVISOR) throw err;
            return [] as MachineRuntime[];
          },
        ),
      ),
    );
    const out = lists.flat();
    for (const r of out) this.where.set(r.id, r.host!);
    return out;
  }

  launchingScreen(id: string): LaunchingScreen | undefined {
    const host = this.starting.get(id);
    return host === undefined ? undefined : this.members.get(host)?.driver.launchingScreen?.(id);
  }

  /** Whether machines may run on other hosts than this one: one lists some, or cannot be asked. */
  async runsOnOtherHosts(): Promise<boolean> {
    const others = [...this.members.entries()].filter(([host]) => host !== LOCAL_HYPERVISOR);
    const answers = await Promise.all(others.map(([, m]) => m.driver.list().then((l) => l.length > 0, () => true)));
    return answers.some(Boolean);
  }

  onEvent(cb: (e: MachineEvent) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Detaches from every host (machines keep running; a later fleet adopts them). */
  async close(): Promise<void> {
    this.closed = true;
    const members = [...this.members.values()];
    for (const m of members) m.off();
    await Promise.all(members.map((m) => m.driver.close().catch(() => undefined)));
  }
}
