import { randomBytes, randomUUID } from 'node:crypto';
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { preparedQuery } from '../../db/prepared';
import type { Db } from '../../db';
import { LOCK_CLASSES, lockKey, schema, type AdvisoryLocks } from '../../db';
import type { DomainHardware } from '../../db/schema';
import type { Engine } from '../../engine';
import type { DiskSizes, DiskStore } from '../../engine/storage';
import type { UserRow } from '../../auth/sessions';
import { disksOf } from './machine-spec';
import { findDomain, type DomainRow } from '../shared/domains';

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
 * complete (the engine writes a temporary name and links it into place) and is kept: an
 * interrupted creation resumes with the same file instead of making a second one.
 */
export async function materializeDisk(db: Db, disks: DiskStore, s: StorageRow, knownParent?: ParentDisk): Promise<DiskSizes> {
  if (await disks.exists(s.path)) return disks.info(s.path);
  if (s.parentId) {
    const parent = knownParent?.id === s.parentId ? knownParent : (await db.select().from(schema.storage).where(eq(schema.storage.id, s.parentId)))[0];
    if (!parent) throw new Error(`the base disk ${s.parentId} of ${s.id} is gone`);
    // One program run when the base's row says what it is; the sizes follow from it.
    if (parent.virtualSize > 0) return disks.createKnownOverlay(parent, s.path, { sizeBytes: s.virtualSize });
    return disks.createOverlay(parent.path, s.path);
  }
  return disks.createEmpty(s.path, s.virtualSize);
}

/** The base disk a new overlay is made on, as its storage row says. */
export type ParentDisk = Pick<StorageRow, 'id' | 'path' | 'format' | 'virtualSize'>;

/** The disks of a desktop being created, when the caller has just written them (no re-read). */
type Planned = { disks: StorageRow[]; parent?: ParentDisk };

/**
 * Crash-consistent creation, step two: the disks of a desktop in "Creating" are made (or found)
 * at their planned paths, marked ready, and the desktop takes its final status. Used by every
 * creation and, after a crash, by the startup sweep for the ones that were interrupted.
 */
export async function completeDesktop(db: Db, store: DiskStore, id: string, status: string, planned?: Planned): Promise<DomainRow> {
  const ready: { id: string; disk: DiskSizes }[] = [];
  for (const d of planned?.disks ?? (await disksOf(db, id))) {
    if (d.status !== 'creating') continue;
    ready.push({ id: d.id, disk: await materializeDisk(db, store, d, planned?.parent) });
  }
  // The disks ready and the desktop's final status in one statement.
  const marks = ready.map(({ id: diskId, disk }, i) =>
    db.$with(`ready_${i}`).as(
      db
        .update(schema.storage)
        .set({ status: 'ready', actualSize: disk.actualSize, virtualSize: disk.virtualSize })
        .where(and(eq(schema.storage.id, diskId), eq(schema.storage.status, 'creating')))
        .returning({ id: schema.storage.id }),
    ),
  );
  if (ready.length === 1 && ready[0]) {
    const [{ id: diskId, disk }] = ready as [(typeof ready)[number]];
    const [row] = await completeOneDisk(db).execute({ id, status, diskId, actualSize: disk.actualSize, virtualSize: disk.virtualSize });
    return row ?? (await currentDomain(db, id));
  }
  const [row] = await (marks.length ? db.with(...marks) : db)
    .update(schema.domains)
    .set({ status })
    .where(and(eq(schema.domains.id, id), eq(schema.domains.status, CREATING_DESKTOP)))
    .returning();
  return row ?? (await currentDomain(db, id));
}

async function currentDomain(db: Db, id: string) {
  const current = await findDomain(db, id);
  if (!current) throw new Error(`desktop ${id} disappeared while it was created`);
  return current;
}

/** `completeDesktop` of a desktop with one disk (nearly all): the same statement, prepared. */
const completeOneDisk = preparedQuery((db, name) => {
  const ready = db.$with('ready_disk').as(
    db
      .update(schema.storage)
      .set({ status: 'ready', actualSize: sql.placeholder('actualSize') as never, virtualSize: sql.placeholder('virtualSize') as never })
      .where(and(eq(schema.storage.id, sql.placeholder('diskId')), eq(schema.storage.status, 'creating')))
      .returning({ id: schema.storage.id }),
  );
  return db
    .with(ready)
    .update(schema.domains)
    .set({ status: sql.placeholder('status') as never })
    .where(and(eq(schema.domains.id, sql.placeholder('id')), eq(schema.domains.status, CREATING_DESKTOP)))
    .returning()
    .prepare(name);
});

/** The columns a desktop from a template is written with (`planDesktopFromTemplate`), and its disk's. */
const PLANNED_DESKTOP_KEYS = ['id', 'name', 'description', 'userId', 'categoryId', 'groupId', 'persistent', 'templateId', 'hardware', 'guestProperties', 'image', 'icon', 'tag', 'tagVisible', 'poolId', 'kind', 'status'] as const;
const PLANNED_DISK_KEYS = ['id', 'userId', 'kind', 'path', 'parentId', 'virtualSize', 'format', 'status', 'actualSize'] as const;
const placeholders = (keys: readonly string[], prefix: string) => Object.fromEntries(keys.map((k) => [k, sql.placeholder(`${prefix}${k}`)]));
const valuesOf = (row: Record<string, unknown>, keys: readonly string[], prefix: string) => Object.fromEntries(keys.map((k) => [`${prefix}${k}`, row[k]]));
/** The row has a value (null included) for each of `keys` and nothing else but `extra`. */
const hasExactly = (row: Record<string, unknown>, keys: readonly string[], extra: readonly string[] = []) =>
  keys.every((k) => row[k] !== undefined) && Object.keys(row).every((k) => row[k] === undefined || keys.includes(k) || extra.includes(k));

/** The records of one desktop with one disk, of the planned columns: the one-statement write below, prepared. */
const insertPlanned = preparedQuery((db, name) => {
  const storageRows = db.$with('planned_storage').as(
    db.insert(schema.storage).values(placeholders(PLANNED_DISK_KEYS, 's_') as never).returning({ id: schema.storage.id }),
  );
  const desktopRow = db.$with('planned_desktop').as(
    db.insert(schema.domains).values(placeholders(PLANNED_DESKTOP_KEYS, 'd_') as never).returning({ id: schema.domains.id }),
  );
  return db
    .with(storageRows, desktopRow)
    .insert(schema.domainDisks)
    .values({ domainId: sql.placeholder('d_id') as never, storageId: sql.placeholder('s_id') as never, position: 0 })
    .prepare(name);
});

/** The creations under way in this process, per app instance (its locks: tests run two instances in one process). */
const underWay = new WeakMap<object, Set<string>>();
const underWayIn = (locks: object) => {
  let here = underWay.get(locks);
  if (!here) underWay.set(locks, (here = new Set()));
  return here;
};

/**
 * Runs the creation of desktop `id` (records, files, final status) holding its lock (`Database.locks`:
 * a session lock, freed if this process dies in the middle), so that another live process tells a
 * creation under way from one cut short and finishes only those (storage/interrupted.ts). A lock
 * that cannot be tried (its connection lost) does not stop the creation. PGlite: one process, nothing to tell.
 */
export async function creating<T>(locks: Pick<AdvisoryLocks, 'everyGranted' | 'tryHold' | 'release'>, id: string, fn: () => Promise<T>): Promise<T> {
  const here = underWayIn(locks);
  here.add(id);
  const key = lockKey(LOCK_CLASSES.creation, id);
  const held = !locks.everyGranted && (await locks.tryHold([key]).catch(() => [false]))[0] === true;
  try {
    return await fn();
  } finally {
    here.delete(id);
    if (held) await locks.release(key).catch(() => undefined);
  }
}

/** Whether this process (its `locks`) is creating desktop `id` now. */
export const creatingHere = (locks: object, id: string) => underWayIn(locks).has(id);

/** Undoes a creation that failed while the server ran: the records and the files they planned. */
/** Removes a desktop whose creation did not finish: its records and what exists of its files (partial ones too). */
export async function undoCreation(db: Db, store: DiskStore, id: string) {
  const disks = await disksOf(db, id);
  await db.delete(schema.domains).where(eq(schema.domains.id, id));
  for (const d of disks) {
    await db.delete(schema.storage).where(eq(schema.storage.id, d.id));
    // A file being written when its process died (`.<name>.<hex>.tmp`), as well as a finished one.
    await store.removePartials(d.path);
    await store.remove(d.path);
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
  store: DiskStore,
  domain: Omit<NewDomain, 'status' | 'kind' | 'tagVisible'> & { id: string; tagVisible?: boolean | SQL },
  disks: Omit<typeof schema.storage.$inferInsert, 'status'>[],
  status: string,
  extra?: (tx: Parameters<Parameters<Db['transaction']>[0]>[0]) => Promise<void>,
  parent?: ParentDisk,
): Promise<DomainRow> {
  const planned: StorageRow[] = disks.map((d) => ({
    format: 'qcow2', actualSize: 0, createdAt: new Date(), lastUsedAt: null, parentId: null, ...d, status: 'creating',
  }) as StorageRow);
  const domainRow = { ...domain, kind: 'desktop' as const, status: CREATING_DESKTOP };
  const links = disks.map((s, position) => ({ domainId: domain.id, storageId: s.id, position }));
  if (extra || !disks.length) {
    await db.transaction(async (tx) => {
      if (disks.length) await tx.insert(schema.storage).values(planned.map(({ createdAt: _c, lastUsedAt: _l, ...s }) => s));
      await tx.insert(schema.domains).values(domainRow);
      if (disks.length) await tx.insert(schema.domainDisks).values(links);
      await extra?.(tx);
    });
  } else if (disks.length === 1 && typeof domainRow.tagVisible === 'boolean' && hasExactly(domainRow, PLANNED_DESKTOP_KEYS) && hasExactly(planned[0]!, PLANNED_DISK_KEYS, ['createdAt', 'lastUsedAt'])) {
    // A desktop from a template: the statement below, prepared (parsed and planned once).
    await insertPlanned(db).execute({ ...valuesOf(domainRow, PLANNED_DESKTOP_KEYS, 'd_'), ...valuesOf(planned[0]!, PLANNED_DISK_KEYS, 's_') });
  } else {
    // One statement, so one round trip and atomic without a transaction: the disks' rows, the desktop's, their links.
    const storageRows = db.$with('planned_storage').as(
      db.insert(schema.storage).values(planned.map(({ createdAt: _c, lastUsedAt: _l, ...s }) => s)).returning({ id: schema.storage.id }),
    );
    const desktopRow = db.$with('planned_desktop').as(db.insert(schema.domains).values(domainRow).returning({ id: schema.domains.id }));
    await db.with(storageRows, desktopRow).insert(schema.domainDisks).values(links);
  }
  try {
    return await completeDesktop(db, store, domain.id, status, { disks: planned, parent });
  } catch (err) {
    await undoCreation(db, store, domain.id).catch(() => undefined);
    throw err;
  }
}

/** Where a new desktop disk lives (the engine's store says: DATA_DIR/storage/{desktops|volatile}/<storage id>.qcow2 on this host). */
export const desktopDiskPath = (engine: Engine, storageId: string, persistent = true) =>
  engine.disks.pathFor(persistent ? 'desktop' : 'volatile', storageId);

type TemplateDesktopOptions = {
  name: string;
  description?: string;
  persistent: boolean;
  status: string;
  id?: string;
  /** Its disk's storage id, when the caller wants to know it beforehand. */
  storageId?: string;
  /** What the desktop is made of, when not the template's (a deployment's create_dict, the hardware asked for). */
  hardware?: DomainHardware;
  /** The hardware given is this desktop's own: its interfaces' MACs are kept. */
  keepMacs?: boolean;
  guestProperties?: DomainRow['guestProperties'];
  image?: DomainRow['image'];
  /** The deployment it belongs to, and whether its user sees it (a value, or read from the deployment as the row is written). */
  tag?: string;
  tagVisible?: boolean | SQL;
  /** The desktop pool it is prepared for (modules/desktop-pools). */
  poolId?: string;
  /** The template's disk, when the caller has it (a deployment job makes hundreds from one). */
  base?: StorageRow;
  /** A larger virtual disk than the template's, made so at once. */
  sizeBytes?: number;
};

/** The records of a desktop from a template (the desktop and its overlay's storage row), not yet written. */
export function planDesktopFromTemplate(engine: Engine, template: DomainRow, owner: UserRow, base: StorageRow, opts: Omit<TemplateDesktopOptions, 'base' | 'status'>) {
  const id = opts.id ?? randomUUID();
  const storageId = opts.storageId ?? randomUUID();
  const hardware = opts.hardware ?? template.hardware;
  const domain = {
    id,
    name: opts.name,
    description: opts.description ?? template.description,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    persistent: opts.persistent,
    templateId: template.id,
    // Interfaces already chosen for this desktop keep their MACs; a copied make gets fresh ones.
    hardware: opts.hardware && opts.keepMacs ? hardware : { ...hardware, interfaces: freshInterfaces(hardware) },
    guestProperties: opts.guestProperties ?? template.guestProperties,
    image: opts.image ?? template.image,
    icon: template.icon,
    tag: opts.tag ?? null,
    tagVisible: opts.tagVisible ?? true,
    poolId: opts.poolId ?? null,
  };
  const disk = {
    id: storageId,
    userId: owner.id,
    kind: opts.persistent ? ('desktop' as const) : ('volatile' as const),
    path: desktopDiskPath(engine, storageId, opts.persistent),
    parentId: base.id,
    virtualSize: opts.sizeBytes && opts.sizeBytes > base.virtualSize ? opts.sizeBytes : base.virtualSize,
  };
  return { domain, disk };
}
export type PlannedDesktop = ReturnType<typeof planDesktopFromTemplate>;

/**
 * Many desktops at once (a deployment's job), crash-consistent as one: their records in one
 * transaction (desktops "Creating", disks "creating" at their planned paths), then `make` is
 * asked to make each disk file (`each` answers whether it was made), then the ready ones are marked so with one update per table. A
 * desktop whose file fails is undone alone; the answer is the rows made and the plans that failed.
 */
export async function createPlannedDesktops(
  db: Db,
  store: DiskStore,
  plans: PlannedDesktop[],
  status: string,
  parent: ParentDisk,
  make: (each: (plan: PlannedDesktop) => Promise<boolean>) => Promise<void>,
): Promise<{ rows: DomainRow[]; failed: { plan: PlannedDesktop; err: unknown }[] }> {
  if (plans.length === 0) return { rows: [], failed: [] };
  await db.transaction(async (tx) => {
    await tx.insert(schema.storage).values(plans.map((p) => ({ ...p.disk, status: 'creating' as const })));
    await tx.insert(schema.domains).values(plans.map((p) => ({ ...p.domain, kind: 'desktop', status: CREATING_DESKTOP })) as NewDomain[]);
    await tx.insert(schema.domainDisks).values(plans.map((p) => ({ domainId: p.domain.id, storageId: p.disk.id, position: 0 })));
  });
  const made = new Map<string, { plan: PlannedDesktop; sizes: DiskSizes }>();
  const failed: { plan: PlannedDesktop; err: unknown }[] = [];
  try {
    await make(async (plan) => {
      try {
        const sizes = await materializeDisk(db, store, { ...plan.disk, format: 'qcow2', status: 'creating' } as StorageRow, parent);
        made.set(plan.domain.id, { plan, sizes });
        return true;
      } catch (err) {
        failed.push({ plan, err });
        await undoCreation(db, store, plan.domain.id).catch(() => undefined);
        return false;
      }
    });
  } catch (err) {
    // Stopped part-way (the job was cancelled or the server stops): nothing of the chunk stays
    // half-made — its records and the files already made go (a resumed job makes them again).
    for (const p of plans) await undoCreation(db, store, p.domain.id).catch(() => undefined);
    throw err;
  }
  // The ready ones: one storage update per distinct size (fresh overlays of one base share it), one for the desktops.
  const bySize = new Map<string, string[]>();
  for (const m of made.values()) {
    const key = `${m.sizes.virtualSize}:${m.sizes.actualSize}`;
    bySize.set(key, [...(bySize.get(key) ?? []), m.plan.disk.id]);
  }
  for (const [key, ids] of bySize) {
    const [virtualSize, actualSize] = key.split(':').map(Number) as [number, number];
    await db
      .update(schema.storage)
      .set({ status: 'ready', virtualSize, actualSize })
      .where(and(inArray(schema.storage.id, ids), eq(schema.storage.status, 'creating')));
  }
  const rows = made.size
    ? await db
        .update(schema.domains)
        .set({ status })
        .where(and(inArray(schema.domains.id, [...made.keys()]), eq(schema.domains.status, CREATING_DESKTOP)))
        .returning()
    : [];
  return { rows, failed };
}

/**
 * A desktop from a template: a thin qcow2 overlay on the template's disk, tracked as storage,
 * and the desktop record (hardware and viewers copied from the template, or as chosen),
 * written once: one transaction of records, one disk made by the engine, one update to ready.
 */
export async function createDesktopFromTemplate(
  db: Db,
  engine: Engine,
  template: DomainRow,
  owner: UserRow,
  opts: TemplateDesktopOptions,
): Promise<DomainRow> {
  const base = opts.base ?? (await disksOf(db, template.id))[0];
  if (!base) throw new Error(`template ${template.id} has no disk`);
  const { domain, disk } = planDesktopFromTemplate(engine, template, owner, base, opts);
  return createDesktopRecords(db, engine.disks, domain, [disk], opts.status, undefined, base);
}
