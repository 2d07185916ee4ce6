import { asc, eq } from 'drizzle-orm';
import type { TViewer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { actorOf } from '../../auth/caller';
import { isAllowed } from '../access/permissions';
import { findDomain, type DomainRow } from '../shared/domains';
import { viewersOf } from '../shared/desktop-view';
import { poolGuestProperties, poolStalled, type PoolRow } from './service';

export type UsablePool = { pool: PoolRow; template: DomainRow; viewers: TViewer[] };

/** The pools `user` may take a desktop from now (enabled, shared with them, their template there), by name. */
export async function usablePools(ctx: AppContext, user: UserRow): Promise<UsablePool[]> {
  const actor = await actorOf(ctx.db, user);
  const rows = (await ctx.db.select().from(schema.desktopPools).where(eq(schema.desktopPools.enabled, true)).orderBy(asc(schema.desktopPools.name))).filter((x) => isAllowed(actor, x));
  const out: UsablePool[] = [];
  for (const pool of rows) {
    if (await poolStalled(ctx, pool)) continue;
    const template = await findDomain(ctx.db, pool.templateId);
    if (!template) continue;
    out.push({ pool, template, viewers: viewersOf({ guestIp: template.guestIp, guestProperties: poolGuestProperties(pool, template) }) });
  }
  return out;
}
