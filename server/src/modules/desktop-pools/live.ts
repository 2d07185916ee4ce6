import { and, eq, exists, gt, inArray, isNull } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { Actor } from '../../auth/caller';
import { isAllowed } from '../access/permissions';

/** A pool's changes within this long go out as one event. */
export const POOL_EVENT_COALESCE_MS = 250;

const s = schema.sessions;
const u = schema.users;
/** A pool's row (service.ts names it too; read here from the schema, so that this file needs nothing of the manager's). */
type PoolRow = typeof schema.desktopPools.$inferSelect;

/**
 * The people signed in now (a live session: not signed out, not expired), as the permission checks see them. Nobody
 * else has a socket to tell; a person who signs in later reads the pools afresh.
 */
async function signedInActors(ctx: AppContext): Promise<Actor[]> {
  const now = ctx.clock.now();
  const live = exists(ctx.db.select({ one: s.id }).from(s).where(and(eq(s.userId, u.id), isNull(s.revokedAt), gt(s.expiresAt, now))));
  const people = await ctx.db.select({ id: u.id, roleId: u.roleId, categoryId: u.categoryId, groupId: u.groupId }).from(u).where(and(eq(u.active, true), live));
  if (!people.length) return [];
  const g = schema.userSecondaryGroups;
  const secondary = await ctx.db.select({ userId: g.userId, groupId: g.groupId }).from(g).where(inArray(g.userId, people.map((x) => x.id)));
  const groupsOf = new Map<string, string[]>();
  for (const row of secondary) groupsOf.set(row.userId, [...(groupsOf.get(row.userId) ?? []), row.groupId]);
  return people.map((x) => ({ id: x.id, role: x.roleId, categoryId: x.categoryId, groupIds: [x.groupId, ...(groupsOf.get(x.id) ?? [])] }));
}

/**
 * Who is told of a pool's change: whoever may use it (`isAllowed`, the rule of the person's pool list), which includes
 * whoever manages it (`canManage`, the rule of the pools screen: its owner, its organisation's managers, admins).
 * Nobody else: the event names the pool.
 */
export const poolAudience = (pool: PoolRow, people: readonly Actor[]): string[] => people.filter((a) => isAllowed(a, pool)).map((a) => a.id);

/**
 * `desktop_pool_changed {pool_id}` to the people who may see the pool, coalesced: the changes of every pool within
 * POOL_EVENT_COALESCE_MS go out together, one event per pool and one read of who is signed in. A pass that makes
 * thirty desktops sends a handful of events, not thirty per person. Each process tells of the changes it makes
 * (the rooms are shared between processes).
 */
export function createPoolEvents(ctx: AppContext, coalesceMs = POOL_EVENT_COALESCE_MS) {
  const log = ctx.log.child({ module: 'desktop-pools' });
  /**
   * Pools changed since the last flush, with the pool's row before a change of the pool itself (an edit, a deletion):
   * those who could see it then are told too (a pool no longer shared with them leaves their list).
   */
  const dirty = new Map<string, PoolRow | undefined>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let closed = false;

  async function flush() {
    timer = undefined;
    if (!dirty.size) return;
    const batch = new Map(dirty);
    dirty.clear();
    const rows = await ctx.db.select().from(schema.desktopPools).where(inArray(schema.desktopPools.id, [...batch.keys()]));
    const people = await signedInActors(ctx);
    for (const [id, before] of batch) {
      const now = rows.find((r) => r.id === id);
      const audience = new Set([...(now ? poolAudience(now, people) : []), ...(before ? poolAudience(before, people) : [])]);
      if (audience.size) ctx.bus.toUsers([...audience], 'desktop_pool_changed', { pool_id: id });
    }
  }

  return {
    /** The pool's numbers or settings changed; `before`: its row before an edit or a deletion of the pool itself. */
    changed(poolId: string, before?: PoolRow) {
      if (closed) return;
      dirty.set(poolId, dirty.get(poolId) ?? before);
      if (timer) return;
      timer = setTimeout(() => {
        flushing = flushing.then(flush).catch((err) => log.error({ err }, 'pool events failed'));
      }, coalesceMs);
      timer.unref();
    },
    /** Sends what is pending now (a server that stops; tests). */
    async flush() {
      if (timer) clearTimeout(timer);
      flushing = flushing.then(flush).catch((err) => log.error({ err }, 'pool events failed'));
      await flushing;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      dirty.clear();
      await flushing;
    },
  };
}
export type PoolEvents = ReturnType<typeof createPoolEvents>;
