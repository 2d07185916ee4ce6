import { eq } from 'drizzle-orm';
import type { TDesktop, TSignInChoice, TSignInDesktop } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { badRequest } from '../../http/errors';
import { userDesktops } from '../shared/desktop-view';

type Opens = NonNullable<TSignInDesktop['opens']>;

/** The browser viewer a desktop opens in at sign-in: the VNC one first (no guest network needed), else RDP's. */
function browserViewerOf(d: Pick<TDesktop, 'viewers'>): Opens['viewer'] | null {
  if (d.viewers.includes('browser-vnc')) return 'browser-vnc';
  if (d.viewers.includes('browser-rdp')) return 'browser-rdp';
  return null;
}

const choiceOf = (stored: string | null): TSignInChoice => (stored === null ? 'group' : stored === 'list' ? 'list' : { desktop_id: stored });

/**
 * What signing in opens for a person: the desktop they chose (while it is still theirs and has a browser viewer), or,
 * when they left it to their group and the group says so, their only desktop; otherwise the desktops screen (null).
 */
export async function signInDesktop(ctx: AppContext, user: UserRow): Promise<TSignInDesktop> {
  const [group] = await ctx.db.select({ on: schema.groups.openDesktopAtSignIn }).from(schema.groups).where(eq(schema.groups.id, user.groupId));
  const groupDefault = group?.on ?? false;
  const open = choiceOf(user.signInOpens);
  let opens: Opens | null = null;
  if (open !== 'list' && (typeof open === 'object' || groupDefault)) {
    const { items } = await userDesktops(ctx, user.id);
    const desktops = items as TDesktop[];
    const pick = typeof open === 'object' ? desktops.find((d) => d.id === open.desktop_id) : desktops.length === 1 ? desktops[0] : undefined;
    const viewer = pick ? browserViewerOf(pick) : null;
    if (pick && viewer) opens = { desktop_id: pick.id, name: pick.name, viewer };
  }
  return { open, group_default: groupDefault, opens };
}

/** The person's choice; a desktop must be one of their own with a browser viewer. */
export async function setSignInDesktop(ctx: AppContext, user: UserRow, open: TSignInChoice): Promise<TSignInDesktop> {
  let stored: string | null = open === 'group' ? null : open === 'list' ? 'list' : open.desktop_id;
  if (typeof open === 'object') {
    const { items } = await userDesktops(ctx, user.id);
    const d = (items as TDesktop[]).find((x) => x.id === open.desktop_id);
    if (!d || !browserViewerOf(d)) throw badRequest('sign_in_desktop_invalid', 'Choose one of your own desktops that opens in the browser');
    stored = d.id;
  }
  await ctx.db.update(schema.users).set({ signInOpens: stored }).where(eq(schema.users.id, user.id));
  return signInDesktop(ctx, { ...user, signInOpens: stored });
}
