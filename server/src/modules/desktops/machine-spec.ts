import { asc, eq, sql } from 'drizzle-orm';
import type { MachineSpec } from '../../engine/driver';
import type { Db } from '../../db';
import { schema } from '../../db';
import { preparedQuery } from '../../db/prepared';
import type { DomainRow } from './view';
import { attachedIsos } from '../media/attached';

/** The disks of a domain, in boot order. */
const disksQuery = preparedQuery((db) =>
  db
    .select({ storage: schema.storage })
    .from(schema.domainDisks)
    .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
    .where(eq(schema.domainDisks.domainId, sql.placeholder('domainId')))
    .orderBy(asc(schema.domainDisks.position))
    .prepare(''),
);

export async function disksOf(db: Db, domainId: string) {
  return (await disksQuery(db).execute({ domainId })).map((r) => r.storage);
}

/** What the engine needs to run a desktop: hardware, disk paths, viewers. */
export async function machineSpecOf(db: Db, row: DomainRow): Promise<MachineSpec> {
  const disks = await disksOf(db, row.id);
  const hw = row.hardware;
  const viewers = row.guestProperties.viewers;
  return {
    id: row.id,
    name: row.name,
    memoryMb: hw.memoryMb,
    vcpus: hw.vcpus,
    disks: disks.map((d) => ({ path: d.path, bus: hw.diskBus, format: d.format as 'qcow2' })),
    // Attached ISO media as CD-ROMs; bootOrder says whether they boot before the disk.
    isos: await attachedIsos(db, row.id),
    bootOrder: hw.bootOrder.length ? hw.bootOrder : ['disk'],
    nics: hw.interfaces.filter((i) => i.id === 'default').map((i) => ({ id: i.id, mac: i.mac })),
    video: viewers.file_spice ? 'qxl' : 'default',
    graphics: { vnc: true, spice: Boolean(viewers.file_spice) },
  };
}
