import { and, count, eq, inArray, sql } from 'drizzle-orm';
import { RUNNING_STATUSES, type TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { precondition } from '../../http/errors';
import { appliedQuota, ownedIn, type UsageScope } from '../quotas/applied';
import { checkNewItemQuota, checkQuotaRules, DEPLOYMENT_DESKTOPS_RULE } from '../storage/new-item-quota';

/**
 * The deployments part of a user's `used` (reference §6.1): the deployments they own, their
 * desktops, and how many of those run. The desktops count for the deployment's owner, not for
 * the students (their `desktops` quota counts only desktops of their own).
 */
export async function deploymentUsage(db: Db, scope: UsageScope): Promise<Partial<TQuota>> {
  const owned = and(ownedIn(db, schema.deployments.userId, scope), eq(schema.deployments.status, 'ready'));
  const [deployments] = await db.select({ n: count() }).from(schema.deployments).where(owned);
  if (!deployments?.n) return { deployments_total: 0, deployment_desktops: 0, started_deployment_desktops: 0 };
  const [desktops] = await db
    .select({ n: count(), started: sql<string>`count(*) filter (where ${inArray(schema.domains.status, [...RUNNING_STATUSES])})` })
    .from(schema.domains)
    .where(and(eq(schema.domains.kind, 'desktop'), inArray(schema.domains.tag, db.select({ id: schema.deployments.id }).from(schema.deployments).where(owned))));
  return {
    deployments_total: Number(deployments.n),
    deployment_desktops: Number(desktops?.n ?? 0),
    started_deployment_desktops: Number(desktops?.started ?? 0),
  };
}

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
  const used = await deploymentUsage(db, { userId: owner.id });
  const left = quota.started_deployment_desktops - (used.started_deployment_desktops ?? 0);
  if (left <= 0) {
    throw precondition('deployment_start_user_quota_exceeded', `${owner.username} quota exceeded for started deployment desktops`, {
      started_deployment_desktops: quota.started_deployment_desktops,
    });
  }
  return left;
}
