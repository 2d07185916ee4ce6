// A desktop's creation cut short by its process's death while other processes live: the start-up
// sweep (storage/sweep.ts) runs only in a process that starts alone, so the live ones look for such
// creations themselves. A creation under way holds its lock (desktops/create.ts `creating`); a
// "Creating" desktop older than CUT_SHORT_AFTER_MS whose lock nobody holds, and that this process is not making, was cut short:
// it is finished here as the sweep would (the planned disk made or reused, the desktop Stopped).
// A deployment's desktops are its job's (taken over with it, jobs/queue.ts), never looked at here.
// PGlite: one process, nothing to look for.
import { and, eq, isNull, lt } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { LOCK_CLASSES, lockKey, schema } from '../../db';
import { findDomain } from '../shared/domains';
import { creatingHere, CREATING_DESKTOP } from '../desktops/create';
import { finishInterruptedCreation } from './sweep';

/** How often a live process looks for creations cut short beside it. */
export const INTERRUPTED_CHECK_MS = 5_000;
/**
 * How old a "Creating" desktop must be to be looked at: a creation writes its records and makes its
 * file within seconds. The lock tells a live creation from a dead one; the age keeps away from a
 * creation made by something that holds no lock (a test's fixtures writing records directly).
 */
export const CUT_SHORT_AFTER_MS = 60_000;

/** Finishes the creations cut short now; the ids finished (or failed). */
export async function finishCutShortCreations(ctx: AppContext): Promise<string[]> {
  const d = schema.domains;
  const rows = await ctx.db
    .select({ id: d.id })
    .from(d)
    .where(and(eq(d.kind, 'desktop'), eq(d.status, CREATING_DESKTOP), isNull(d.tag), lt(d.createdAt, new Date(Date.now() - CUT_SHORT_AFTER_MS))));
  const done: string[] = [];
  for (const { id } of rows) {
    if (creatingHere(ctx.locks, id)) continue;
    const key = lockKey(LOCK_CLASSES.creation, id);
    const [free] = await ctx.locks.tryHold([key]);
    if (!free) continue; // under way in a live process
    try {
      // Read again under the lock: its process may have finished it meanwhile.
      if ((await findDomain(ctx.db, id))?.status !== CREATING_DESKTOP) continue;
      ctx.log.warn({ desktop: id }, 'a desktop creation cut short by the death of its server process: finished here');
      await finishInterruptedCreation(ctx, id);
      done.push(id);
    } finally {
      await ctx.locks.release(key).catch(() => undefined);
    }
  }
  return done;
}

/** Looks every INTERRUPTED_CHECK_MS (PostgreSQL only); the returned function stops it. */
export function followInterruptedCreations(ctx: AppContext, everyMs = INTERRUPTED_CHECK_MS): () => void {
  if (ctx.locks.everyGranted) return () => {};
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    finishCutShortCreations(ctx)
      .catch((err) => ctx.log.warn({ err }, 'creations cut short not looked for'))
      .finally(() => (busy = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
