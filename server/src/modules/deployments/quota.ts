import { sql } from 'drizzle-orm';
import { RUNNING_STATUSES } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { precondition } from '../../http/errors';
import { appliedQuota, constantList, usageOf, usagePart } from '../quotas/applied';
import { checkNewItemQuota, checkQuotaRules, DEPLOYMENT_DESKTOPS_RULE } from '../storage/new-item-quota';

/**
 * The deployments part of a user's `used` (reference §6.1): the deployments they own, their
 * desktops, and how many of those run. The desktops count for the deployment's owner, not for
 * the students (their `desktops` quota counts only desktops of their own).
 */
export const deploymentUsage = usagePart<{ deployments: number; desktops: number; started: number }>({
  counts: ['deployments_total', 'deployment_desktops', 'started_deployment_desktops'],
  sql: (owned) => {
    const dep = schema.deployments;
    const d = schema.domains;
    return sql`select
        count(distinct ${dep.id}) as deployments,
        count(${d.id}) as desktops,
        count(${d.id}) filter (where ${d.status} in (${constantList(RUNNING_STATUSES)})) as started
      from ${dep} left join ${d} on ${d.tag} = ${dep.id} and ${d.kind} = 'desktop'
      where ${owned(dep.userId)} and ${dep.status} = 'ready'`;
  },
  read: (r) => ({
    deployments_total: Number(r.deployments ?? 0),
    deployment_desktops: Number(r.desktops ?? 0),
    started_deployment_desktops: Number(r.started ?? 0),
  }),
});

/** POST /deployments/new/check_quota and creation: one more deployment, and room for its desktops (428). */
export async function checkNewDeploymentQuota(db: Db, owner: UserRow, desktops: number) {
  await checkNewItemQuota(db, owner, 'deployments');
  await checkMoreDeploymentDesktops(db, owner, desktops);
}

/** Room for `n` more deployment desktops of this owner (recreate, new users). */
export async function checkMoreDeploymentDesktops(db: Db, owner: UserRow, n: number) {
  if (n > 0) await checkQuotaRules(db, owner, [DEPLOYMENT_DESKTOPS_RULE], 'deployment desktops', n);
}

/** How many more deployment desktops the owner may start now (Infinity without a quota). */
export async function startAllowance(db: Db, owner: UserRow): Promise<number> {
  const { quota } = await appliedQuota(db, owner);
  if (!quota) return Infinity;
  const used = await usageOf(db, owner.id, ['started_deployment_desktops']);
  const left = quota.started_deployment_desktops - (used.started_deployment_desktops ?? 0);
  if (left <= 0) {
    throw precondition('deployment_start_user_quota_exceeded', `${owner.username} quota exceeded for started deployment desktops`, {
      started_deployment_desktops: quota.started_deployment_desktops,
    });
  }
  return left;
}
