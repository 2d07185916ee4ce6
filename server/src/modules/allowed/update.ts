import { eq } from 'drizzle-orm';
import type { TAllowed, TAllowedUpdateTable } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { forbidden, notFound } from '../../http/errors';
import { assertChoosable, canManage, chooserOf } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import type { MediaService } from '../media/service';
import { findMedia } from '../media/view';
import { updateTemplate } from '../templates/actions';

/**
 * POST /admin/allowed/update/{domains|media}: whom a template or a media is shared with. The
 * caller must manage the item (owner, admin, manager of its category), and everyone named must be
 * one both the caller and the owner may pick. A template goes through its own update (which
 * checks the same and tells its owner); a media likewise publishes its change.
 */
export async function updateAllowed(
  ctx: AppContext,
  deps: { lifecycle: DesktopLifecycle; media: MediaService },
  user: UserRow,
  table: TAllowedUpdateTable,
  body: { id: string; allowed: TAllowed },
) {
  if (table === 'domains') {
    await updateTemplate(ctx, deps.lifecycle, user, { id: body.id, allowed: body.allowed });
    return {};
  }
  const row = await findMedia(ctx.db, body.id);
  if (!row || row.status === 'deleted') throw notFound('media_not_found', 'Media not found');
  if (!canManage(await actorOf(ctx.db, user), row)) throw forbidden('forbidden', 'Not enough rights on this media');
  const [owner] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, row.userId));
  await assertChoosable(ctx.db, [chooserOf(user), ...(owner ? [chooserOf(owner)] : [])], body.allowed);
  await deps.media.update(row.id, { allowed: body.allowed });
  return {};
}
