import type { TLimits } from '@vdi/contracts';
import type { Db } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { precondition } from '../../http/errors';
import { quotaLevels } from '../../auth/caller';
import { pickAppliedQuota } from './applied';
import { runningAround, runningDesktopsOf } from './usage';

type Need = { memoryGb: number; vcpus: number };

function checkLimits(level: 'group' | 'category', limits: TLimits | null, running: Awaited<ReturnType<typeof runningAround>>['mine'], need: Need) {
  if (!limits) return;
  if (running.count + 1 > limits.running) throw precondition(`desktop_start_${level}_limit_exceeded`, `The ${level} runs as many desktops as its limit allows`);
  if (running.memoryGb + need.memoryGb > limits.memory) throw precondition(`desktop_start_${level}_memory_limit_exceeded`, `The ${level} memory limit would be exceeded`);
  if (running.vcpus + need.vcpus > limits.vcpus) throw precondition(`desktop_start_${level}_vcpu_limit_exceeded`, `The ${level} vCPU limit would be exceeded`);
}

/**
 * Starting one more desktop must fit the user's applied quota and the group and category limits (428). A desktop
 * pool's desktop (`personal: false`) counts for its pool, not for the person: only the limits apply.
 */
export async function checkStartQuota(db: Db, user: UserRow, need: Need, opts: { personal?: boolean } = {}) {
  // Everything it weighs is read side by side (a start waits for this); refusals come in the same order.
  const [{ group, category: cat }, { mine, group: groupRunning, category: categoryRunning }] = await Promise.all([quotaLevels(db, user), runningAround(db, user)]);
  const { quota } = opts.personal === false ? { quota: null } : pickAppliedQuota(user, group?.quota, cat?.quota);
  if (quota) {
    // Each refusal names the person's running desktops that hold the quota (the portal offers to stop one).
    const held = async () => ({ running_desktops: await runningDesktopsOf(db, user.id) });
    if (mine.count + 1 > quota.running) throw precondition('desktop_start_user_quota_exceeded', `${user.username} quota exceeded for starting new desktops`, { running: quota.running, ...(await held()) });
    if (mine.memoryGb + need.memoryGb > quota.memory) throw precondition('desktop_start_memory_quota_exceeded', `${user.username} quota exceeded for starting desktop memory`, { memory: quota.memory, ...(await held()) });
    if (mine.vcpus + need.vcpus > quota.vcpus) throw precondition('desktop_start_vcpu_quota_exceeded', `${user.username} quota exceeded for starting desktop vcpus`, { vcpus: quota.vcpus, ...(await held()) });
  }
  checkLimits('group', group?.limits ?? null, groupRunning, need);
  checkLimits('category', cat?.limits ?? null, categoryRunning, need);
}
