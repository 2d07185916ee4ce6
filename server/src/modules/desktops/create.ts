import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { DomainHardware } from '../../db/schema';
import type { Engine } from '../../engine';
import { createOverlay } from '../../engine/disks';
import type { UserRow } from '../../auth/sessions';
import { disksOf } from './machine-spec';
import type { DomainRow } from './view';

/** A locally administered, unicast MAC in QEMU's 52:54:00 range. */
export const randomMac = () =>
  `52:54:00:${[...randomBytes(3)].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;

export const freshInterfaces = (hw: DomainHardware) => hw.interfaces.map((i) => ({ id: i.id, mac: randomMac() }));

/**
 * A desktop from a template: a thin qcow2 overlay on the template's disk, tracked as storage,
 * and the desktop record (hardware and viewers copied from the template).
 */
export async function createDesktopFromTemplate(
  db: Db,
  engine: Engine,
  template: DomainRow,
  owner: UserRow,
  opts: {
    name: string;
    description?: string;
    persistent: boolean;
    status: string;
    id?: string;
    /** What the desktop is made of, when not the template's (a deployment's create_dict). */
    hardware?: DomainHardware;
    guestProperties?: DomainRow['guestProperties'];
    image?: DomainRow['image'];
    /** The deployment it belongs to, and whether its user sees it. */
    tag?: string;
    tagVisible?: boolean;
  },
): Promise<DomainRow> {
  const [base] = await disksOf(db, template.id);
  if (!base) throw new Error(`template ${template.id} has no disk`);
  const id = opts.id ?? randomUUID();
  const storageId = randomUUID();
  const kind = opts.persistent ? 'desktop' : 'volatile';
  const path = join(engine.dirs.storage, opts.persistent ? 'desktops' : 'volatile', `${storageId}.qcow2`);
  const disk = await createOverlay(base.path, path);
  return db.transaction(async (tx) => {
    await tx.insert(schema.storage).values({
      id: storageId, userId: owner.id, kind, path, parentId: base.id, actualSize: disk.actualSize, virtualSize: disk.virtualSize,
    });
    const [row] = await tx
      .insert(schema.domains)
      .values({
        id,
        kind: 'desktop',
        name: opts.name,
        description: opts.description ?? template.description,
        userId: owner.id,
        categoryId: owner.categoryId,
        groupId: owner.groupId,
        status: opts.status,
        persistent: opts.persistent,
        templateId: template.id,
        hardware: { ...(opts.hardware ?? template.hardware), interfaces: freshInterfaces(opts.hardware ?? template.hardware) },
        guestProperties: opts.guestProperties ?? template.guestProperties,
        image: opts.image ?? template.image,
        icon: template.icon,
        tag: opts.tag ?? null,
        tagVisible: opts.tagVisible ?? true,
      })
      .returning();
    await tx.insert(schema.domainDisks).values({ domainId: id, storageId, position: 0 });
    return row!;
  });
}
