import { AT_REST, statusIn } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { UserRow } from '../../auth/sessions';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { ownerOf, type DomainRow } from '../shared/domains';
import { cutoffHoursFor, recycleDomains } from './recycle';
import { dropItemBookings } from '../bookings/service';
import { conflict } from '../../http/errors';

/**
 * DELETE /desktop/{id}: a stopped desktop goes to its owner's recycle bin with its own disk —
 * for good instead when asked (`permanent`), when it is a deployment's or a temporary desktop,
 * or when the owner's retention is 0 hours (reference §6.3). Only a stopped (or failed) one: 409 otherwise.
 * The portal's DELETE /desktop/{id} and the console's bulk delete both come here. Answers the recycle bin entry
 * (null when it went for good): the portal offers to undo the delete with it.
 */
export async function deleteDesktop(
  ctx: AppContext,
  lifecycle: DesktopLifecycle,
  row: DomainRow,
  agent: UserRow,
  opts: { permanent?: boolean } = {},
): Promise<{ recycleBinId: string | null }> {
  if (!statusIn(AT_REST, row.status)) {
    throw conflict('desktop_action_not_available', 'Stop the desktop before deleting it', { status: row.status, action: 'delete' });
  }
  const owner = await ownerOf(ctx.db, row);
  // Its bookings go (reference §6.3), whether it is recycled or deleted for good.
  await dropItemBookings(ctx, 'desktop', row.id);
  const forGood = opts.permanent || row.tag !== null || !row.persistent || (await cutoffHoursFor(ctx, owner.categoryId)) === 0;
  if (forGood) {
    await lifecycle.destroyDesktop(row);
    return { recycleBinId: null };
  }
  const entry = await recycleDomains(ctx, { agent, owner, itemType: 'desktop', itemName: row.name, desktops: [row], templates: [] });
  lifecycle.changes.emit('deleted', row);
  return { recycleBinId: entry.id };
}
