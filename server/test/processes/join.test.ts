import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db';
import { createScratchDatabase } from '../helpers/db';

// Several server processes of one installation: the first to start alone repairs what a stop left
// (adopting machines, finishing interrupted creations, the storage sweep); one starting beside live
// processes does not (what looks interrupted is their work under way), and waits for a repair under way.
describe('joining the live processes of an installation (PostgreSQL)', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  const open: Database[] = [];
  const startProcess = async () => {
    const d = await openDatabase({ url: scratch.url });
    open.push(d);
    return d;
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL!, 'vdi_join');
  });
  afterAll(async () => {
    for (const d of open) await d.close();
    await scratch?.drop();
  });

  it('the first is alone; the next waits for its repairs, then joins not alone; once every one has gone, the next is alone again', async () => {
    const a = await startProcess();
    const first = await a.join();
    expect(first.alone).toBe(true);

    // While A repairs (before its ready()), B's start waits (its migrations take the same lock).
    let joinedB: { alone: boolean } | undefined;
    const waiting = startProcess()
      .then((b) => b.join())
      .then((j) => {
        joinedB = j;
        return j;
      });
    await a.db.execute('select pg_sleep(0.3)');
    expect(joinedB).toBeUndefined();
    await first.ready();
    const second = await waiting;
    expect(second.alone).toBe(false);
    await second.ready();

    // A dies (its connections end): B still lives, so C is not alone.
    await a.close();
    const c = await startProcess();
    const third = await c.join();
    expect(third.alone).toBe(false);
    await third.ready();

    for (const p of open.slice(1, 3)) await p.close();
    const d = await startProcess();
    const fourth = await d.join();
    expect(fourth.alone).toBe(true);
    await fourth.ready();
  });
});
