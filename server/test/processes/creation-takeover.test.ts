// A desktop's creation cut short by its server process's death while another process lives (two app
// instances, A and B, on one PostgreSQL): the start-up sweep runs only in a process that starts alone,
// so B finishes it itself (storage/interrupted.ts) — but never a creation under way in a live process,
// which holds the creation's lock (desktops/create.ts `creating`). A's death is its database sessions
// ending (its locks with them), as in the other tests of this folder.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LOCK_CLASSES, lockKey, openDatabase, schema, type Database } from '../../src/db';
import { creating, CREATING_DESKTOP } from '../../src/modules/desktops/create';
import { CUT_SHORT_AFTER_MS, finishCutShortCreations, INTERRUPTED_CHECK_MS } from '../../src/modules/storage/interrupted';
import { describeIf, firstMissing, missingFile } from '../helpers/can-run';
import { startPeerInstances, type PeerInstance } from '../helpers/peer-instances';
import { testImagesDir } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const missing = firstMissing(missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"));

describeIf(missing)('a desktop creation cut short while another process lives', () => {
  let peers: Awaited<ReturnType<typeof startPeerInstances>> | undefined;
  let a: PeerInstance;
  let b: PeerInstance;
  let reader: Database | undefined;

  beforeAll(async () => {
    peers = await startPeerInstances({ tmpPrefix: 'vcreate-' });
    ({ a, b } = peers);
    reader = await openDatabase({ url: peers.scratch.url });
  }, scaled(120_000));

  afterAll(async () => {
    await reader?.close();
    await peers?.close();
  }, scaled(60_000));

  it('is left alone while its process holds it, and finished by the other once that process is gone', async () => {
    const d = schema.domains;
    // A demo desktop put back to where a creation is between its records and its file: "Creating", its
    // disk planned ("creating") and not made yet.
    const [row] = await reader!.db.select().from(d).where(and(eq(d.kind, 'desktop'), eq(d.persistent, true), eq(d.status, 'Stopped'))).limit(1);
    const [disk] = await reader!.db
      .select({ id: schema.storage.id, path: schema.storage.path })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, row!.id));
    let endCreation = () => {};
    const underWay = creating(a.server.ctx.locks, row!.id, () => new Promise<void>((done) => (endCreation = done)));
    const key = lockKey(LOCK_CLASSES.creation, row!.id);
    await until("A holding the creation's lock", async () => (await b.database.locks.holders([key]))[0] === 'A');
    // (made more than CUT_SHORT_AFTER_MS ago: a creation cut short is looked at after that)
    await reader!.db.update(d).set({ status: CREATING_DESKTOP, createdAt: new Date(Date.now() - 2 * CUT_SHORT_AFTER_MS) }).where(eq(d.id, row!.id));
    await reader!.db.update(schema.storage).set({ status: 'creating' }).where(eq(schema.storage.id, disk!.id));
    rmSync(disk!.path, { force: true });

    // Under way in a live process: not B's.
    expect(await finishCutShortCreations(b.server.ctx)).toEqual([]);
    expect((await reader!.db.select().from(d).where(eq(d.id, row!.id)))[0]!.status).toBe(CREATING_DESKTOP);

    // A dies: B's own look (every INTERRUPTED_CHECK_MS) finishes it as the start-up sweep would.
    await a.database.close();
    await until(
      'B to finish the creation',
      async () => (await reader!.db.select().from(d).where(eq(d.id, row!.id)))[0]!.status === 'Stopped',
      3 * INTERRUPTED_CHECK_MS,
    );
    const [after] = await reader!.db.select().from(schema.storage).where(eq(schema.storage.id, disk!.id));
    expect(after!.status).toBe('ready');
    expect(existsSync(disk!.path)).toBe(true);
    endCreation();
    await underWay;
  }, scaled(60_000));
});
