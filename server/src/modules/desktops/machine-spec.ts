import { asc, eq, sql } from 'drizzle-orm';
import type { MachineSpec } from '../../engine/driver';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import type { DomainRow } from '../shared/domains';
import { attachedIsos } from '../media/attached';
import { DEFAULT_INTERFACE, WIREGUARD_INTERFACE } from '@vdi/contracts';
import { stableMac } from '../../network/plan';

/**
 * The desktop's NICs: `default` is user-mode NAT, `wireguard` a TAP on the server's guest network
 * (where the guest gets the address the RDP viewers and the VPN reach). A record without a MAC
 * (a deployment's dict keeps none) gets a stable one from the desktop's id.
 */
export function nicsOf(row: Pick<DomainRow, 'id' | 'hardware'>): MachineSpec['nics'] {
  return row.hardware.interfaces
    .filter((i) => i.id === DEFAULT_INTERFACE || i.id === WIREGUARD_INTERFACE)
    .map((i) => ({
      id: i.id,
      mac: i.mac || stableMac(row.id, i.id),
      ...(i.id === WIREGUARD_INTERFACE ? { network: 'private' as const } : {}),
    }));
}

/** The MAC of the desktop's NIC on the guest network, if it has one (its DHCP lease gives the address). */
export function privateMacOf(row: Pick<DomainRow, 'id' | 'hardware'>): string | null {
  return nicsOf(row).find((n) => n.network === 'private')?.mac.toLowerCase() ?? null;
}

/** The disks of a domain, in boot order. */
const disksQuery = preparedQuery((db, name) =>
  db
    .select({ storage: schema.storage })
    .from(schema.domainDisks)
    .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
    .where(eq(schema.domainDisks.domainId, sql.placeholder('domainId')))
    .orderBy(asc(schema.domainDisks.position))
    .prepare(name),
);

export async function disksOf(db: Db, domainId: string) {
  return (await disksQuery(db).execute({ domainId })).map((r) => r.storage);
}

/** What the engine needs to run a desktop: hardware, disk paths, viewers (`known`: its disks as just read; read again without them). */
export async function machineSpecOf(db: Db, row: DomainRow, known?: Awaited<ReturnType<typeof disksOf>>): Promise<MachineSpec> {
  const [disks, isos] = await Promise.all([known ?? disksOf(db, row.id), attachedIsos(db, row.id)]);
  const hw = row.hardware;
  const viewers = row.guestProperties.viewers;
  return {
    id: row.id,
    name: row.name,
    memoryMb: hw.memoryMb,
    vcpus: hw.vcpus,
    disks: disks.map((d) => ({ path: d.path, bus: hw.diskBus, format: d.format as 'qcow2' })),
    // Attached ISO media as CD-ROMs; bootOrder says whether they boot before the disk.
    isos,
    bootOrder: hw.bootOrder.length ? hw.bootOrder : ['disk'],
    nics: nicsOf(row),
    video: viewers.file_spice ? 'qxl' : 'default',
    graphics: { vnc: true, spice: Boolean(viewers.file_spice) },
    guestCredentials: { username: row.guestProperties.credentials.username, password: row.guestProperties.credentials.password },
  };
}
