import { eq } from 'drizzle-orm';
import type { TDomainInfo } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { canManage } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { disksOf } from '../desktops/machine-spec';
import { findDomain, type DomainRow } from '../shared/domains';
import { beyondBounds, GB, hardwareBounds, memoryGbOf, type HardwareRow } from './hardware';

const gb = (bytes: number) => Math.round((bytes / GB) * 100) / 100;

/** GET /domain/info/{id}: the domain as the edit screen shows it (memory and disks in GB). */
export async function domainInfo(db: Db, row: DomainRow, viewer: UserRow): Promise<TDomainInfo> {
  const hw = row.hardware as HardwareRow;
  const disks = await disksOf(db, row.id);
  const media = await db
    .select({ id: schema.media.id, name: schema.media.name, kind: schema.domainMedia.kind })
    .from(schema.domainMedia)
    .innerJoin(schema.media, eq(schema.media.id, schema.domainMedia.mediaId))
    .where(eq(schema.domainMedia.domainId, row.id));
  const template = row.templateId ? await findDomain(db, row.templateId) : undefined;
  const [ownerRow] = await db.select().from(schema.users).where(eq(schema.users.id, row.userId));
  const { quota } = await hardwareBounds(db, ownerRow ?? viewer);
  const diskSize = disks[0] ? gb(disks[0].virtualSize) : 0;
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    description: row.description,
    status: row.status,
    server: row.server,
    image: row.image,
    guest_properties: row.guestProperties,
    hardware: {
      vcpus: hw.vcpus,
      memory: memoryGbOf(hw),
      boot_order: hw.bootOrder,
      disk_bus: hw.diskBus,
      disk_size: diskSize,
      disks: disks.map((d) => ({ id: d.id, size: gb(d.virtualSize), used: gb(d.actualSize), parent: d.parentId })),
      interfaces: hw.interfaces,
      videos: hw.videos,
      graphics: hw.graphics,
      isos: media.filter((m) => m.kind === 'iso').map((m) => ({ id: m.id, name: m.name })),
      floppies: media.filter((m) => m.kind === 'floppy').map((m) => ({ id: m.id, name: m.name })),
      install: hw.install ?? null,
    },
    reservables: { vgpus: hw.reservables.vgpus },
    limited_hardware: beyondBounds(hw, diskSize, quota),
    editable: row.status === 'Stopped' && !row.server && canManage(await actorOf(db, viewer), row),
    template: template ? { id: template.id, name: template.name } : null,
    user: row.userId,
    user_name: ownerRow?.name ?? null,
  };
}
