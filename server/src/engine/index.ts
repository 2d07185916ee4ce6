import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HypervisorDriver } from './driver';
import type { AccelSetting } from './accel';
import { QemuDriver } from './qemu/qemu-driver';
import { StartQueue } from './start-queue';
import { LocalDiskStore, type DiskStore } from './storage';
import { GuestNetwork, type GuestNetworkOptions } from '../network/guest-network';
import { LocalHostDirectory, type HostDirectory } from './hosts';
import { FleetDriver } from './fleet';
import { FleetHostDirectory } from './libvirt/hosts';
import { HostDisks } from './host-disks';
import { LOCAL_OFF_REASON, LocalOffDriver } from './local-off';

/** What the modules use of the engine: one driver, one start queue, the disks, the storage folders. */
export type Engine = {
  /** every host's machines behind one driver (fleet.ts): this machine's QEMU and each connected hypervisor */
  driver: HypervisorDriver;
  /** the installation's start queue (a table every server process shares; the desktops' lifecycle opens it) */
  queue: StartQueue;
  /** Every disk operation (modules never run qemu-img nor build a disk's path themselves). */
  disks: DiskStore;
  /** `quarantine`: where the startup sweep moves files under `storage` that no record owns. */
  dirs: { storage: string; images: string; quarantine: string };
  /** the guests' private network (the `wireguard` interface); `available` false on hosts that cannot */
  network: GuestNetwork;
  /** the hosts' live status (CPU, memory, running, starts in flight, pools) for the console and placement */
  hosts: HostDirectory;
  /** disks on remote hosts' own pools (template bases copied there, desktops bound there): host-disks.ts */
  hostDisks: HostDisks;
  /**
   * The server's stop: the hosts are left with their machines running and the guest network stays
   * while guests use it, here or on another host (the next start adopts both).
   */
  detach: () => Promise<void>;
};

export function storageDirs(dataDir: string) {
  const dirs = {
    storage: join(dataDir, 'storage'),
    images: join(dataDir, 'images'),
    run: join(dataDir, 'run'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  for (const kind of ['templates', 'desktops', 'volatile']) mkdirSync(join(dirs.storage, kind), { recursive: true });
  return { ...dirs, quarantine: join(dataDir, 'quarantine') };
}

export type EngineNetworkOptions = Omit<GuestNetworkOptions, 'dataDir' | 'stateDir'>;

/**
 * The default engine: QEMU on this machine, in a fleet that remote hypervisors join when an admin
 * adds them (or the server resumes the stored ones): no libvirt process runs until one exists.
 * Machines left running by a previous process are adopted. `network`: the guest network's configuration (GUEST_NETWORK…); without it the engine
 * has none (machines with a `private` NIC are refused).
 */
export async function createLocalEngine(opts: {
  dataDir: string;
  accel: AccelSetting;
  concurrency?: number;
  network?: EngineNetworkOptions;
  /** remote hypervisors' libvirt keepalive (default 5 s × 2: a lost host is noticed within ~15 s) */
  keepAlive?: { intervalS: number; count: number };
  /** false: this process runs no QEMU of its own (LOCAL_HYPERVISOR=off; another process or none owns this machine) */
  localHypervisor?: boolean;
  /** false: the guest network is not set up now but by the process of the installation that holds this
   *  machine's pieces (modules/pieces: `network.take()` or `network.follow()`); default: set up now */
  networkNow?: boolean;
}): Promise<Engine> {
  const dirs = storageDirs(opts.dataDir);
  const networkOpts = opts.network && { ...opts.network, dataDir: opts.dataDir, stateDir: join(opts.dataDir, 'network') };
  const network = !networkOpts
    ? GuestNetwork.unavailable(opts.dataDir, 'no guest network configured')
    : (opts.networkNow ?? true)
      ? await GuestNetwork.open(networkOpts)
      : GuestNetwork.dormant(networkOpts);
  const localOn = opts.localHypervisor ?? true;
  const local = localOn ? new QemuDriver({ runDir: dirs.run, accel: opts.accel, network }) : new LocalOffDriver();
  if (local instanceof QemuDriver) await local.ready();
  const driver = new FleetDriver(local);
  const disks = new LocalDiskStore(dirs.storage, dirs.quarantine);
  const queue = new StartQueue({ concurrency: opts.concurrency });
  const hosts = new FleetHostDirectory({
    fleet: driver,
    queue,
    local: new LocalHostDirectory({ driver: local, queue, disks, storageDir: dirs.storage, guestNetwork: network.available, off: localOn ? undefined : LOCAL_OFF_REASON }),
    dataDir: opts.dataDir,
    network,
    keepAlive: opts.keepAlive,
    log: opts.network?.log,
  });
  // Available later (taken over, or followed): the hosts connected meanwhile are reached too.
  network.on('available', () => void hosts.spanToConnected());
  const hostDisks = new HostDisks(driver, join(opts.dataDir, 'upload-tmp'));
  const detach = async () => {
    // Asked before the hosts are left: the tunnel to them alone is no guest.
    const remoteGuests = await driver.runsOnOtherHosts();
    await driver.close();
    await network.close({ remoteGuests });
  };
  return { driver, queue, disks, dirs, network, hosts, hostDisks, detach };
}
