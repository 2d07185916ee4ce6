import { and, eq, isNotNull } from 'drizzle-orm';
import type { TDesktop, TSignInChoice, TSignInDesktop, TViewer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { badRequest } from '../../http/errors';
import { userDesktops } from '../shared/desktop-view';
import { usablePools } from '../desktop-pools/usable';
import { heldDesktop } from '../desktop-pools/service';

type Opens = NonNullable<TSignInDesktop['opens']>;

/** The browser viewer a desktop (or a pool's) opens in at sign-in: the VNC one first (no guest network needed), else RDP's. */
function browserViewerOf(viewers: readonly TViewer[]): Opens['viewer'] | null {
  if (viewers.includes('browser-vnc')) return 'browser-vnc';
  if (viewers.includes('browser-rdp')) return 'browser-rdp';
  return null;
}

const POOL = 'pool:';
const choiceOf = (stored: string | null): TSignInChoice =>
  stored === null ? 'group' : stored === 'list' ? 'list' : stored.startsWith(POOL) ? { pool_id: stored.slice(POOL.length) } : { desktop_id: stored };

/**
 * What signing in opens for a person: the desktop or desktop pool they chose (while it is still theirs, or still
 * shared with them, and has a browser viewer), or, when they left it to their group and the group says so, the one
 * thing they have — their only desktop, or the only pool they may use when they have no desktop of their own (a
 * desktop they got from a pool is the pool's); otherwise the desktops screen (null).
 */
export async function signInDesktop(ctx: AppContext, user: UserRow): Promise<TSignInDesktop> {
  const [group] = await ctx.db.select({ on: schema.groups.openDesktopAtSignIn }).from(schema.groups).where(eq(schema.groups.id, user.groupId));
  const groupDefault = group?.on ?? false;
  const open = choiceOf(user.signInOpens);
  let opens: Opens | null = null;
  if (open !== 'list' && (typeof open === 'object' || groupDefault)) {
    const desktops = (await userDesktops(ctx, user.id)).items as TDesktop[];
    const pools = await usablePools(ctx, user);
    const fromPools = new Set(
      (await ctx.db.select({ id: schema.domains.id }).from(schema.domains).where(and(eq(schema.domains.userId, user.id), isNotNull(schema.domains.poolId)))).map((r) => r.id),
    );
    const own = desktops.filter((d) => !fromPools.has(d.id));
    const desktop =
      typeof open === 'object' ? ('desktop_id' in open ? desktops.find((d) => d.id === open.desktop_id) : undefined) : own.length === 1 && pools.length === 0 ? own[0] : undefined;
    const pool =
      typeof open === 'object' ? ('pool_id' in open ? pools.find((p) => p.pool.id === open.pool_id) : undefined) : own.length === 0 && pools.length === 1 ? pools[0] : undefined;
    if (desktop) {
      const viewer = browserViewerOf(desktop.viewers);
      if (viewer) opens = { desktop_id: desktop.id, pool_id: null, name: desktop.name, viewer };
    } else if (pool) {
      const viewer = browserViewerOf(pool.viewers);
      const held = await heldDesktop(ctx, pool.pool.id, user.id);
      if (viewer) opens = { desktop_id: held?.id ?? null, pool_id: pool.pool.id, name: pool.pool.name, viewer };
    }
  }
  return { open, group_default: groupDefault, opens };
}

/** The person's choice; a desktop must be one of their own, a pool one they may use, with a browser viewer. */
export async function setSignInDesktop(ctx: AppContext, user: UserRow, open: TSignInChoice): Promise<TSignInDesktop> {
  let stored: string | null = open === 'group' ? null : open === 'list' ? 'list' : null;
  if (typeof open === 'object' && 'desktop_id' in open) {
    const { items } = await userDesktops(ctx, user.id);
    const d = (items as TDesktop[]).find((x) => x.id === open.desktop_id);
    if (!d || !browserViewerOf(d.viewers)) throw badRequest('sign_in_desktop_invalid', 'Choose one of your own desktops that opens in the browser');
    stored = d.id;
  } else if (typeof open === 'object') {
    const pool = (await usablePools(ctx, user)).find((p) => p.pool.id === open.pool_id);
    if (!pool || !browserViewerOf(pool.viewers)) throw badRequest('sign_in_desktop_invalid', 'Choose one of your own desktops or pools that opens in the browser');
    stored = `${POOL}${pool.pool.id}`;
  }
  await ctx.db.update(schema.users).set({ signInOpens: stored }).where(eq(schema.users.id, user.id));
  return signInDesktop(ctx, { ...user, signInOpens: stored });
}
