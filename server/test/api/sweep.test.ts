import { scaled } from '../helpers/slowdown';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import { schema } from '../../src/db';
import { createOverlay } from '../../src/engine/disks';
import { CREATING_DESKTOP, desktopDiskPath } from '../../src/modules/desktops/create';
import { disksOf } from '../../src/modules/desktops/machine-spec';
import { sweepStorage } from '../../src/modules/storage/sweep';
import { call, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

// The startup sweep: what a crash (or an operator's hand) leaves in the storage folder and the
// records is put straight — files no record owns go to a quarantine folder with a log line,
// records whose file is gone are failed with storage_file_missing, interrupted creations finish.

let server: TestServer;
let uma: string;
let umaId: string;
const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
const recorder = (level: string) => (obj: Record<string, unknown> | string, msg?: string) =>
  void lines.push(typeof obj === 'string' ? { level, obj: {}, msg: obj } : { level, obj, msg: msg ?? '' });
const log = { info: recorder('info'), warn: recorder('warn'), error: recorder('error') } as unknown as Logger;

beforeAll(async () => {
  server = await startTestServer();
  uma = await loginToken(server, 'user');
  umaId = await userIdOf(server, 'user');
}, scaled(240_000));
afterAll(async () => server?.close());

const storageDir = () => server.ctx.engine.dirs.storage;
const domainOf = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!;

/** What a server killed between a desktop's records and its disk leaves: the records, planned. */
async function interruptedCreation(name: string, parentId: string) {
  const { db } = server.ctx;
  const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, umaId));
  const [template] = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  const id = `crashed-${name}`;
  const storageId = `crashed-disk-${name}`;
  const path = desktopDiskPath(server.ctx.engine, storageId);
  await db.insert(schema.storage).values({ id: storageId, userId: umaId, kind: 'desktop', path, parentId, status: 'creating' });
  await db.insert(schema.domains).values({
    id, kind: 'desktop', name: `Crashed ${name}`, userId: umaId, categoryId: owner!.categoryId, groupId: owner!.groupId, status: CREATING_DESKTOP,
    templateId: template!.id, hardware: template!.hardware, guestProperties: template!.guestProperties, image: template!.image,
  });
  await db.insert(schema.domainDisks).values({ domainId: id, storageId, position: 0 });
  return { id, storageId, path };
}

describe('the startup sweep', () => {
  it('quarantines files without a record, fails records without a file, finishes interrupted creations', async () => {
    const { db } = server.ctx;
    const [template] = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
    const [base] = await disksOf(db, template!.id);

    // Files no record owns: a disk of a creation that never got its records, and a stray media file.
    const strayDisk = join(storageDir(), 'desktops', 'stray.qcow2');
    await createOverlay(base!.path, strayDisk);
    mkdirSync(join(storageDir(), 'media'), { recursive: true });
    const strayMedia = join(storageDir(), 'media', 'leftover.iso');
    writeFileSync(strayMedia, 'not really an image');

    // A record whose file is gone: Uma's lab desktop lost its disk.
    const [lab] = await db.select().from(schema.domains).where(and(eq(schema.domains.userId, umaId), eq(schema.domains.name, 'Lab desktop')));
    const [labDisk] = await disksOf(db, lab!.id);
    rmSync(labDisk!.path);
    // A downloaded media whose file is gone.
    const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, umaId));
    await db.insert(schema.media).values({
      id: 'lost-media', name: 'Lost', url: 'https://example.org/x.iso', kind: 'iso', status: 'Downloaded', userId: umaId,
      categoryId: owner!.categoryId, groupId: owner!.groupId, path: join(storageDir(), 'media', 'lost-media.iso'), size: 10,
    });

    // Interrupted creations: one whose disk was made, one with only qemu-img's partial file, one whose base is gone.
    const made = await interruptedCreation('made', base!.id);
    await createOverlay(base!.path, made.path);
    const madeInode = statSync(made.path).ino;
    const partial = await interruptedCreation('partial', base!.id);
    const partialFile = join(storageDir(), 'desktops', `.${partial.storageId}.qcow2.1a2b3c4d.tmp`);
    writeFileSync(partialFile, 'half a qcow2');
    const orphaned = await interruptedCreation('no-base', 'no-such-disk');

    // A disk recorded by a recreate that was cut short: made, never used by any desktop.
    const abandonedPath = desktopDiskPath(server.ctx.engine, 'recreated-disk');
    await db.insert(schema.storage).values({ id: 'recreated-disk', userId: umaId, kind: 'desktop', path: abandonedPath, parentId: base!.id, status: 'creating' });
    await createOverlay(base!.path, abandonedPath);

    const stamp = new Date('2026-01-02T03:04:05.678Z');
    const report = await sweepStorage({ ...server.ctx, log }, stamp);
    const quarantine = join(server.ctx.engine.dirs.quarantine, '2026-01-02T03-04-05-678Z');

    // Files without a record: moved, kept, logged.
    expect(existsSync(strayDisk)).toBe(false);
    expect(existsSync(strayMedia)).toBe(false);
    expect(existsSync(join(quarantine, 'desktops', 'stray.qcow2'))).toBe(true);
    expect(readFileSync(join(quarantine, 'media', 'leftover.iso'), 'utf8')).toBe('not really an image');
    expect(report.quarantined.map((q) => q.from).sort()).toEqual([strayDisk, strayMedia].sort());
    const moved = lines.filter((l) => l.level === 'warn' && l.msg === 'file that no record owns moved to quarantine');
    expect(moved.map((l) => l.obj.file).sort()).toEqual([strayDisk, strayMedia].sort());

    // Records without a file: failed with a code the web translates.
    expect(await domainOf(lab!.id)).toMatchObject({ status: 'Failed', currentAction: 'storage_file_missing' });
    expect((await disksOf(db, lab!.id))[0]!.status).toBe('failed');
    const [media] = await db.select().from(schema.media).where(eq(schema.media.id, 'lost-media'));
    expect(media).toMatchObject({ status: 'DownloadFailed', detail: 'storage_file_missing' });
    const listed = (await (await call(server, '/api/v3/user/desktops', { token: uma })).json()) as { id: string; state: string; current_action: string | null }[];
    expect(listed.find((d) => d.id === lab!.id)).toMatchObject({ state: 'Failed', current_action: 'storage_file_missing' });
    const retry = await call(server, `/api/v3/desktop/retry/${lab!.id}`, { token: uma });
    expect(retry.status).toBe(428);
    expect((await retry.json()).description_code).toBe('storage_file_missing');

    // Interrupted creations: the disk made is kept (same file), the partial one is replaced by a whole disk.
    expect(await domainOf(made.id)).toMatchObject({ status: 'Stopped' });
    expect(statSync(made.path).ino).toBe(madeInode);
    expect(await domainOf(partial.id)).toMatchObject({ status: 'Stopped' });
    expect(existsSync(partialFile)).toBe(false);
    expect(existsSync(partial.path)).toBe(true);
    for (const id of [made.storageId, partial.storageId]) {
      const [s] = await db.select().from(schema.storage).where(eq(schema.storage.id, id));
      expect(s).toMatchObject({ status: 'ready' });
      expect(s!.virtualSize).toBeGreaterThan(0);
    }
    expect(report.completed.sort()).toEqual([made.id, partial.id].sort());
    expect(await domainOf(orphaned.id)).toMatchObject({ status: 'Failed', currentAction: 'storage_file_missing' });
    expect(report.abandoned).toEqual(['recreated-disk']);
    expect(existsSync(abandonedPath)).toBe(false);
    expect(await db.select().from(schema.storage).where(eq(schema.storage.id, 'recreated-disk'))).toEqual([]);
    expect(existsSync(orphaned.path)).toBe(false);

    // Every other disk is where it was; a second sweep has nothing to do.
    for (const s of await db.select().from(schema.storage)) {
      if (s.status !== 'failed') expect(existsSync(s.path), s.path).toBe(true);
    }
    const again = await sweepStorage({ ...server.ctx, log }, new Date());
    expect(again).toEqual({ completed: [], abandoned: [], quarantined: [], failedStorage: [], failedDomains: [], failedMedia: [] });
  });

  it('starting a desktop whose disk file is gone answers storage_file_missing', async () => {
    const [demo] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.userId, umaId), eq(schema.domains.name, 'Demo desktop')));
    const [disk] = await disksOf(server.ctx.db, demo!.id);
    rmSync(disk!.path);
    const r = await call(server, `/api/v3/desktop/start/${demo!.id}`, { token: uma });
    expect(r.status).toBe(428);
    expect((await r.json()).description_code).toBe('storage_file_missing');
  });
});
