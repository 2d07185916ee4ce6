import type { Db } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { precondition } from '../../http/errors';
import { appliedQuota, usageOf } from './applied';

/** One more persistent (`desktops`) or temporary (`volatile`) desktop must fit the applied quota (428). */
export async function checkNewDesktopQuota(db: Db, user: UserRow, key: 'desktops' | 'volatile') {
  const { quota } = await appliedQuota(db, user);
  if (!quota) return;
  const used = await usageOf(db, user.id, [key]);
  if ((used[key] ?? 0) + 1 > quota[key]) {
    throw precondition('desktop_new_user_quota_exceeded', `${user.username} quota exceeded for new ${key}`, { [key]: quota[key] });
  }
}
