import type { QuotaField, TCheckQuotaItemType, TLimits, TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { precondition } from '../../http/errors';
import { appliedQuota, usageIn, usageOf } from '../quotas/applied';
import { quotaLevels } from '../../auth/caller';

/**
 * "May I create one more?" for GET /{desktops|templates|media|deployments}/new/check_quota
 * (reference §6.1): the user's applied quota (first set of user, group, category), then the
 * group's and the category's limits against the sum of what their users use. All 428.
 * Creation endpoints can call `checkNewItemQuota` too.
 */
export type QuotaRule = { key: QuotaField; user: string; group: string; category: string };

const RULES: Record<TCheckQuotaItemType, QuotaRule[]> = {
  desktops: [
    { key: 'desktops', user: 'desktop_new_user_quota_exceeded', group: 'desktop_new_group_limit_exceeded', category: 'desktop_new_category_limit_exceeded' },
  ],
  templates: [
    { key: 'templates', user: 'template_new_user_quota_exceeded', group: 'template_new_group_limit_exceeded', category: 'template_new_category_limit_exceeded' },
  ],
  media: [
    { key: 'isos', user: 'media_new_user_quota_exceeded', group: 'media_new_group_limit_exceeded', category: 'media_new_category_limit_exceeded' },
    { key: 'total_size', user: 'total_size_quota_exceeded', group: 'group_total_size_limit_exceeded', category: 'category_total_size_limit_exceeded' },
  ],
  deployments: [
    { key: 'deployments_total', user: 'deployment_new_user_quota_exceeded', group: 'deployments_new_group_limit_exceeded', category: 'deployments_new_category_limit_exceeded' },
  ],
};

/** A deployment's desktops: room for all of them in the owner's quota and limits. */
export const DEPLOYMENT_DESKTOPS_RULE: QuotaRule = {
  key: 'deployment_desktops',
  user: 'deployment_desktop_new_user_quota_exceeded',
  group: 'deployment_desktop_new_group_limit_exceeded',
  category: 'deployment_desktop_new_category_limit_exceeded',
};

/** Counted items need room for `quantity` more; sizes (total_size) must not already be over. */
const needsRoom = (key: QuotaField, used: number, cap: number, quantity: number) => (key === 'total_size' ? used >= cap : used + quantity > cap);

/** `used`: the user's own usage of the item's fields when the caller has read it already (`usageSql`, inside its own query). */
export async function checkNewItemQuota(db: Db, user: UserRow, itemType: TCheckQuotaItemType, used?: TQuota): Promise<void> {
  return checkQuotaRules(db, user, RULES[itemType], itemType, 1, used);
}

/** The quota fields a new item of a kind is checked on (what a caller reads ahead for `checkNewItemQuota`). */
export const quotaFieldsOf = (itemType: TCheckQuotaItemType): QuotaField[] => RULES[itemType].map((r) => r.key);

/** The same checks for any rules and a quantity (a deployment of N desktops needs room for N). */
export async function checkQuotaRules(db: Db, user: UserRow, rules: QuotaRule[], itemType: string, quantity = 1, userUsage?: TQuota): Promise<void> {
  // Only the areas that count the rules' fields are asked, by aggregate queries (a group or a category at once).
  const fields = rules.map((r) => r.key);
  const { quota } = await appliedQuota(db, user);
  if (quota) {
    const used = userUsage ?? (await usageOf(db, user.id, fields));
    for (const r of rules) {
      if (needsRoom(r.key, used[r.key], quota[r.key], quantity)) {
        throw precondition(r.user, `${user.username} quota exceeded for new ${itemType}`, { [r.key]: quota[r.key] });
      }
    }
  }
  const { group, category } = await quotaLevels(db, user);
  const levels: ['group' | 'category', TLimits | null | undefined, () => Promise<TQuota | null>][] = [
    ['group', group?.limits, () => usageIn(db, { groupId: user.groupId }, fields)],
    ['category', category?.limits, () => usageIn(db, { categoryId: user.categoryId }, fields)],
  ];
  for (const [level, limits, total] of levels) {
    if (!limits) continue;
    const used = await total();
    if (!used) continue;
    for (const r of rules) {
      if (needsRoom(r.key, used[r.key], limits[r.key], quantity)) {
        throw precondition(r[level], `The ${level} limit for new ${itemType} is reached`, { [r.key]: limits[r.key] });
      }
    }
  }
}
