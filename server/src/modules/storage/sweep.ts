import { resolve } from 'node:path';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { AT_REST, MEDIA_DOWNLOADING_STATUSES } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { completeDesktop, CREATING_DESKTOP } from '../desktops/create';
import { disksOf } from '../desktops/machine-spec';
import { TEMPLATE_JOB } from '../templates/create';
import { diskFilePresent } from '../pools';

/** Why a desktop, template, disk or media was marked failed by the sweep (a catalogue code). */
export const FILE_MISSING = 'storage_file_missing';
/** Records whose file may be missing and that can still be marked failed. */
const CHECKED_STORAGE = ['ready', 'maintenance'] as const;
/** Domains that are not running: safe to mark Failed when their disk is gone. */
const IDLE_DOMAIN = [...AT_REST, CREATING_DESKTOP];

export type SweepReport = {
  /** Desktops whose interrupted creation was finished. */
  completed: string[];
  /** Disks planned by an interrupted creation that no desktop uses, removed with their record. */
  abandoned: string[];
  /** Files no record owns, moved away (from, to). */
  quarantined: { from: string; to: string }[];
  /** Storage rows, domains and media whose file is gone, now failed. */
  failedStorage: string[];
  failedDomains: string[];
  failedMedia: string[];
};

type StorageRow = typeof schema.storage.$inferSelect;
type MediaRow = typeof schema.media.$inferSelect;

/** Storage records whose file must be on disk (a `creating` one is still being made, a `deleted` one is gone). */
const FILE_EXPECTED = ['ready', 'maintenance', 'recycled', 'failed'] as const;

export type StorageCheck = {
  /** Files under the storage folder that no record owns (absolute paths). */
  filesWithoutRecord: string[];
  /** Disk records whose file is gone (ready, maintenance; and those already failed or in the bin). */
  storageWithoutFile: StorageRow[];
  /** Media whose downloaded file is gone (and those the sweep already failed for it). */
  mediaWithoutFile: MediaRow[];
};

/**
 * The one rule of which files the records own and which records miss their file, used by the
 * startup sweep and by the console's storage check. Every storage row owns its path whatever its
 * status (a 'deleted' one still referenced keeps its file); a media its file, and while it
 * downloads its partial file; work under way (disks being made, a template job's planned files)
 * owns its paths and their partial files.
 */
export async function checkStorage(ctx: Pick<AppContext, 'db' | 'engine'>): Promise<StorageCheck> {
  const { db } = ctx;
  const store = ctx.engine.disks;
  const [storage, media, templateJobs] = await Promise.all([
    db.select().from(schema.storage),
    db.select().from(schema.media),
    db.select({ params: schema.jobs.params }).from(schema.jobs).where(and(eq(schema.jobs.kind, TEMPLATE_JOB), inArray(schema.jobs.status, ['queued', 'running']))),
  ]);
  const owned = new Set<string>(storage.map((s) => resolve(s.path)));
  const inProgress = new Set<string>(storage.filter((s) => s.status === 'creating').map((s) => resolve(s.path)));
  for (const j of templateJobs) {
    for (const d of (j.params as { disks?: { to?: string; overlay?: string }[] }).disks ?? []) {
      for (const p of [d.to, d.overlay]) if (p) owned.add(resolve(p)), inProgress.add(resolve(p));
    }
  }
  for (const m of media) {
    if (m.path) owned.add(resolve(m.path));
    if ((MEDIA_DOWNLOADING_STATUSES as readonly string[]).includes(m.status) || m.status === 'Downloading') {
      // The resumed download writes both again (a kill may fall between its rename and its record).
      const target = store.mediaTarget(m);
      owned.add(resolve(target.part));
      owned.add(resolve(target.file));
    }
  }
  const present = async (path: string | null) => !!path && (await store.exists(path));
  // A disk on a hypervisor's own pool is looked for there (a host not answering now counts as holding it).
  const [storageFound, mediaFound] = await Promise.all([Promise.all(storage.map((s) => diskFilePresent(ctx, s))), Promise.all(media.map((m) => present(m.path)))]);
  const filesWithoutRecord: string[] = [];
  for (const file of await store.files()) {
    const path = resolve(file);
    if (owned.has(path)) continue;
    const target = store.partialTarget(path);
    if (target && inProgress.has(target)) continue;
    filesWithoutRecord.push(file);
  }
  return {
    filesWithoutRecord,
    storageWithoutFile: storage.filter((s, i) => (FILE_EXPECTED as readonly string[]).includes(s.status) && !storageFound[i]),
    mediaWithoutFile: media.filter(
      (m, i) => (m.status === 'Downloaded' || (m.status === 'DownloadFailed' && m.detail === FILE_MISSING)) && !mediaFound[i],
    ),
  };
}

/** A report with nothing in it yet. */
const emptyReport = (): SweepReport => ({ completed: [], abandoned: [], quarantined: [], failedStorage: [], failedDomains: [], failedMedia: [] });

/** The sweep's ways of marking records failed (each noted in `report`). */
function failures(ctx: Pick<AppContext, 'db' | 'log'>, report: SweepReport) {
  const { db, log } = ctx;
  const failDomains = async (ids: string[]) => {
    if (ids.length === 0) return;
    const rows = await db
      .update(schema.domains)
      .set({ status: 'Failed', currentAction: FILE_MISSING })
      .where(and(inArray(schema.domains.id, ids), inArray(schema.domains.status, IDLE_DOMAIN)))
      .returning({ id: schema.domains.id });
    report.failedDomains.push(...rows.map((r) => r.id));
  };
  const failStorage = async (id: string, path: string) => {
    await db.update(schema.storage).set({ status: 'failed' }).where(eq(schema.storage.id, id));
    report.failedStorage.push(id);
    log.warn({ storage: id, path }, 'disk file missing: storage marked failed');
    const users = await db.select({ domainId: schema.domainDisks.domainId }).from(schema.domainDisks).where(eq(schema.domainDisks.storageId, id));
    await failDomains(users.map((u) => u.domainId));
  };
  return { failDomains, failStorage };
}

/**
 * Desktop `id`'s creation, cut short (its process died): finished from its planned disk paths — the
 * file reused when it was made, made otherwise; a partial one removed — or, when that fails, its
 * disks and itself marked failed. The start-up sweep calls it, and a live process for a creation
 * whose process died beside it (storage/interrupted.ts).
 */
export async function finishInterruptedCreation(ctx: Pick<AppContext, 'db' | 'log' | 'engine'>, id: string, report: SweepReport = emptyReport()): Promise<SweepReport> {
  const { db, log } = ctx;
  const store = ctx.engine.disks;
  const { failDomains, failStorage } = failures(ctx, report);
  try {
    // What a killed creation left of a planned disk is that disk's own partial file.
    for (const d of await disksOf(db, id)) {
      if (d.status !== 'creating') continue;
      for (const partial of await store.removePartials(d.path)) log.info({ storage: d.id, partial }, 'partial disk file of an interrupted creation removed');
    }
    await completeDesktop(db, store, id, 'Stopped');
    report.completed.push(id);
    log.info({ desktop: id }, 'interrupted desktop creation finished');
  } catch (err) {
    log.warn({ err, desktop: id }, 'interrupted desktop creation could not be finished');
    const disks = await db
      .select({ id: schema.storage.id, path: schema.storage.path, status: schema.storage.status })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, id));
    for (const d of disks) if (d.status === 'creating' || !(await store.exists(d.path))) await failStorage(d.id, d.path);
    await failDomains([id]);
  }
  return report;
}

/**
 * The startup sweep, after the interrupted jobs that cannot resume have undone their work and
 * before the others resume (nothing else touches the disks then):
 * 1. desktops whose creation was interrupted ("Creating") are finished from their planned disk
 *    paths — the file is reused when it was made, made otherwise — or marked Failed;
 * 2. records whose file is gone are marked failed (storage `failed`, desktops and templates
 *    `Failed`, media `DownloadFailed`, with the code `storage_file_missing`);
 * 3. files under the storage folder that no record owns are moved to DATA_DIR/quarantine/<time>/
 *    with a log line — never deleted.
 */
export async function sweepStorage(ctx: AppContext, now = new Date()): Promise<SweepReport> {
  const { db, log } = ctx;
  const store = ctx.engine.disks;
  const report = emptyReport();
  const { failDomains, failStorage } = failures(ctx, report);

  // 1. Interrupted creations.
  const creating = await db
    .select({ id: schema.domains.id })
    .from(schema.domains)
    .where(and(eq(schema.domains.kind, 'desktop'), eq(schema.domains.status, CREATING_DESKTOP)));
  for (const { id } of creating) await finishInterruptedCreation(ctx, id, report);

  // Disks recorded for a creation that never reached a desktop (a recreate cut short): the file,
  // if made, was never used — it and its record go.
  const lone = await db
    .select({ id: schema.storage.id, path: schema.storage.path })
    .from(schema.storage)
    .leftJoin(schema.domainDisks, eq(schema.domainDisks.storageId, schema.storage.id))
    .where(and(eq(schema.storage.status, 'creating'), isNull(schema.domainDisks.storageId)));
  for (const s of lone) {
    await store.removePartials(s.path);
    await store.remove(s.path);
    await db.delete(schema.storage).where(eq(schema.storage.id, s.id));
    report.abandoned.push(s.id);
    log.info({ storage: s.id, path: s.path }, 'disk of an interrupted creation that no desktop uses removed');
  }

  // 2. Records without their file, and 3. files without a record: one check (also the console's).
  const check = await checkStorage(ctx);
  for (const s of check.storageWithoutFile) {
    if ((CHECKED_STORAGE as readonly string[]).includes(s.status)) await failStorage(s.id, s.path);
  }
  for (const m of check.mediaWithoutFile) {
    if (m.status !== 'Downloaded') continue;
    await db.update(schema.media).set({ status: 'DownloadFailed', detail: FILE_MISSING }).where(eq(schema.media.id, m.id));
    report.failedMedia.push(m.id);
    log.warn({ media: m.id, path: m.path }, 'media file missing: media marked failed');
  }

  const stamp = now.toISOString().replace(/[:.]/g, '-');
  for (const file of check.filesWithoutRecord) {
    try {
      const to = await store.quarantine(file, stamp);
      report.quarantined.push({ from: file, to });
      log.warn({ file, to }, 'file that no record owns moved to quarantine');
    } catch (err) {
      log.error({ err, file }, 'could not move a file that no record owns to quarantine');
    }
  }
  if (report.completed.length + report.abandoned.length + report.quarantined.length + report.failedStorage.length + report.failedMedia.length > 0) {
    log.info(
      {
        completed: report.completed.length,
        abandoned: report.abandoned.length,
        quarantined: report.quarantined.length,
        failedStorage: report.failedStorage.length,
        failedDomains: report.failedDomains.length,
        failedMedia: report.failedMedia.length,
      },
      'storage sweep done',
    );
  }
  return report;
}
