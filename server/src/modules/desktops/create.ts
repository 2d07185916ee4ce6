import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { DomainHardware } from '../../db/schema';
import type { Engine } from '../../engine';
import { createEmpty, createOverlay, info, remove as removeDiskFile, type DiskInfo } from '../../engine/disks';
import type { UserRow } from '../../auth/sessions';
import { disksOf } from './machine-spec';
import { findDomain, type DomainRow } from './view';

/** A locally administered, unicast MAC in QEMU's 52:54:00 range. */
export const randomMac = () =>
  `52:54:00:${[...randomBytes(3)].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;

export const freshInterfaces = (hw: DomainHardware) => hw.interfaces.map((i) => ({ id: i.id, mac: randomMac() }));

/** A desktop whose record exists but whose disk is still being made (spec: "creating"). */
export const CREATING_DESKTOP = 'Creating';

type StorageRow = typeof schema.storage.$inferSelect;
type NewDomain = typeof schema.domains.$inferInsert;

/**
 * Makes the file of a storage row that is being created, at the path the row planned: a thin
 * overlay on its parent, or an empty disk of its planned virtual size. A file already there is
 * complete (qemu-img writes a temporary name and links it into place) and is kept: an
 * interrupted creation resumes with the same file instead of making a second one.
 */
export async function materializeDisk(db: Db, s: StorageRow): Promise<DiskInfo> {
  if (existsSync(s.path)) return info(s.path);
  if (s.parentId) {
    const [parent] = await db.select().from(schema.storage).where(eq(schema.storage.id, s.parentId));
    if (!parent) throw new Error(`the base disk ${s.parentId} of ${s.id} is gone`);
    return createOverlay(parent.path, s.path);
  }
  return createEmpty(s.path, s.virtualSize);
}

/**
 * Crash-consistent creation, step two: the disks of a desktop in "Creating" are made (or found)
 * at their planned paths, marked ready, and the desktop takes its final status. Used by every
 * creation and, after a crash, by the startup sweep for the ones that were interrupted.
 */
export async function completeDesktop(db: Db, id: string, status: string): Promise<DomainRow> {
  for (const d of await disksOf(db, id)) {
    if (d.status !== 'creating') continue;
    const disk = await materializeDisk(db, d);
    await db
      .update(schema.storage)
      .set({ status: 'ready', actualSize: disk.actualSize, virtualSize: disk.virtualSize })
      .where(and(eq(schema.storage.id, d.id), eq(schema.storage.status, 'creating')));
  }
  const [row] = await db
    .update(schema.domains)
    .set({ status })
    .where(and(eq(schema.domains.id, id), eq(schema.domains.status, CREATING_DESKTOP)))
    .returning();
  const current = row ?? (await findDomain(db, id));
  if (!current) throw new Error(`desktop ${id} disappeared while it was created`);
  return current;
}

/** Undoes a creation that failed while the server ran: the records and the files they planned. */
async function undoCreation(db: Db, id: string) {
  const disks = await disksOf(db, id);
  await db.delete(schema.domains).where(eq(schema.domains.id, id));
  for (const d of disks) {
    await db.delete(schema.storage).where(eq(schema.storage.id, d.id));
    await removeDiskFile(d.path);
  }
}

/**
 * A new desktop, crash-consistent: first its records in one transaction — the desktop in
 * "Creating", its disks as storage rows in "creating" with the paths they will have — then the
 * files, then the final status (`completeDesktop`). A kill between the steps leaves rows that
 * say what was planned, never a file no row knows.
 */
export async function createDesktopRecords(
  db: Db,
  domain: Omit<NewDomain, 'status' | 'kind'> & { id: string },
  disks: Omit<typeof schema.storage.$inferInsert, 'status'>[],
  status: string,
  extra?: (tx: Parameters<Parameters<Db['transaction']>[0]>[0]) => Promise<void>,
): Promise<DomainRow> {
  await db.transaction(async (tx) => {
    for (const s of disks) await tx.insert(schema.storage).values({ ...s, status: 'creating' });
    await tx.insert(schema.domains).values({ ...domain, kind: 'desktop', status: CREATING_DESKTOP });
    for (const [position, s] of disks.entries()) await tx.insert(schema.domainDisks).values({ domainId: domain.id, storageId: s.id, position });
    await extra?.(tx);
  });
  try {
    return await completeDesktop(db, domain.id, status);
  } catch (err) {
    await undoCreation(db, domain.id).catch(() => undefined);
    throw err;
  }
}

/** Where a new desktop disk lives: DATA_DIR/storage/{desktops|volatile}/<storage id>.qcow2. */
export const desktopDiskPath = (engine: Engine, storageId: string, persistent = true) =>
  join(engine.dirs.storage, persistent ? 'desktops' : 'volatile', `${storageId}.qcow2`);

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
  return createDesktopRecords(
    db,
    {
      id,
      name: opts.name,
      description: opts.description ?? template.description,
      userId: owner.id,
      categoryId: owner.categoryId,
      groupId: owner.groupId,
      persistent: opts.persistent,
      templateId: template.id,
      hardware: { ...(opts.hardware ?? template.hardware), interfaces: freshInterfaces(opts.hardware ?? template.hardware) },
      guestProperties: opts.guestProperties ?? template.guestProperties,
      image: opts.image ?? template.image,
      icon: template.icon,
      tag: opts.tag ?? null,
      tagVisible: opts.tagVisible ?? true,
    },
    [{
      id: storageId,
      userId: owner.id,
      kind: opts.persistent ? 'desktop' : 'volatile',
      path: desktopDiskPath(engine, storageId, opts.persistent),
      parentId: base.id,
      virtualSize: base.virtualSize,
    }],
    opts.status,
  );
}
