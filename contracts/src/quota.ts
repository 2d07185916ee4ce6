import { z } from 'zod';

/** The field set used for quota, limits and used (spec 001 §3 "Quota and used", reference §6.1). */
export const QUOTA_FIELDS = [
  'desktops',
  'volatile',
  'templates',
  'isos',
  'deployments_total',
  'deployment_desktops',
  'started_deployment_desktops',
  'running',
  'memory',
  'vcpus',
  'desktops_disk_size',
  'total_size',
  'total_soft_size',
  'storage_size',
  'media_size',
  'personal_drive',
] as const;
export type QuotaField = (typeof QUOTA_FIELDS)[number];

const quotaNumber = z.number().nonnegative();
export const ZQuota = z.object(
  Object.fromEntries(QUOTA_FIELDS.map((f) => [f, quotaNumber])) as Record<QuotaField, typeof quotaNumber>,
);
export type TQuota = z.infer<typeof ZQuota>;

/** Limits cap the totals of a group or a category: the quota fields plus a user count. */
export const ZLimits = ZQuota.extend({ users: quotaNumber });
export type TLimits = z.infer<typeof ZLimits>;

export const ZRestrictionApplied = z.enum(['user_quota', 'group_quota', 'category_quota']);
export type TRestrictionApplied = z.infer<typeof ZRestrictionApplied>;

export const ZAppliedQuota = z.object({
  quota: z.union([ZQuota, z.literal(false)]),
  restriction_applied: ZRestrictionApplied,
});
export type TAppliedQuota = z.infer<typeof ZAppliedQuota>;

/** Fallback when no level sets a quota (spec core §9: memory 128, vcpus 128, disk 500). */
export const FALLBACK_HARDWARE_QUOTA = { memory: 128, vcpus: 128, desktops_disk_size: 500 } as const;
