import { z } from 'zod';
import { ZAllowed } from './allowed';
import { ZAdminListQuery, adminList } from './admin-people';

/**
 * The administration console's reservation calls (/api/v3/admin): GPU cards and their profiles
 * (the planner's reservable items and subitems), booking priority rules, and the auto-shutdown
 * policies of running desktops (the original's `desktops_priority`).
 */
const id = z.string().min(1).max(64);
const text = (max: number) => z.string().trim().max(max);
const name = z.string().trim().min(1).max(100);

// ------------------------------------------------------------------ GPU cards and profiles
/** POST /admin/reservables/gpus: a card; its profiles are added one by one. */
export const ZAdminCardCreate = z
  .object({
    name,
    brand: text(50).default(''),
    model: text(50).default(''),
    description: text(255).default(''),
    enabled: z.boolean().default(true),
    /** The hypervisor the card is in (`local`: this server); its profiles are offered there only. */
    hypervisor_id: id.default('local'),
  })
  .strict();
export type TAdminCardCreate = z.input<typeof ZAdminCardCreate>;
/** PUT /admin/reservables/gpus/{id} */
export const ZAdminCardUpdate = z
  .object({ name: name.optional(), brand: text(50).optional(), model: text(50).optional(), description: text(255).optional(), enabled: z.boolean().optional(), hypervisor_id: id.optional() })
  .strict();
export type TAdminCardUpdate = z.input<typeof ZAdminCardUpdate>;

/** The profile name of the driver (e.g. `2Q`): letters, digits, dashes. */
const profileName = z.string().trim().min(1).max(32).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'invalid_characters');
/**
 * POST /admin/reservables/gpus/{id}/subitems: a profile the card offers. Its id is
 * `<brand>-<model>-<profile>` (e.g. NVIDIA-A40-2Q, as the original names them); a profile of that
 * id that exists already (another card of the same model) is linked as it is.
 */
export const ZAdminProfileCreate = z
  .object({
    profile: profileName,
    name,
    description: text(255).default(''),
    units: z.number().int().min(1).max(1000),
    /** The booking rule (`rule_id` of the booking priorities); '' = the `default` rule. */
    priority_id: z.string().trim().max(64).default(''),
    allowed: ZAllowed.optional(),
  })
  .strict();
export type TAdminProfileCreate = z.input<typeof ZAdminProfileCreate>;
/** PUT /admin/reservables/gpus/{id}/subitems/{subitemId}: units apply to plans made from now on. */
export const ZAdminProfileUpdate = z
  .object({
    name: name.optional(),
    description: text(255).optional(),
    units: z.number().int().min(1).max(1000).optional(),
    priority_id: z.string().trim().max(64).optional(),
    enabled: z.boolean().optional(),
    allowed: ZAllowed.optional(),
  })
  .strict();
export type TAdminProfileUpdate = z.input<typeof ZAdminProfileUpdate>;
export const ZAdminCardParams = z.object({ itemType: z.literal('gpus'), itemId: id });
export const ZAdminProfileParams = ZAdminCardParams.extend({ subitemId: id });

/** A profile as the console shows it: the planner's subitem and who may use it, how many desktops ask for it. */
export const ZAdminProfile = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  brand: z.string(),
  model: z.string(),
  profile: z.string(),
  units: z.number(),
  item_type: z.literal('vgpus'),
  enabled: z.boolean(),
  priority_id: z.string(),
  allowed: ZAllowed,
  /** Desktops and templates whose hardware asks for it. */
  desktops: z.number(),
});
export type TAdminProfile = z.infer<typeof ZAdminProfile>;
export const ZAdminCard = z.object({
  id: z.string(),
  name: z.string(),
  brand: z.string(),
  model: z.string(),
  description: z.string(),
  item_type: z.literal('gpus'),
  enabled: z.boolean(),
  /** The hypervisor the card is in: desktops with one of its profiles start there. */
  hypervisor_id: z.string(),
  subitems: z.array(ZAdminProfile),
  /** Plans of the card that have not ended, and bookings in them. */
  plans: z.number(),
  bookings: z.number(),
});
export type TAdminCard = z.infer<typeof ZAdminCard>;
export const ZAdminCardList = z.array(ZAdminCard);

// ------------------------------------------------------------------ booking priority rules
/**
 * A booking rule (the original's `bookings_priority`): whom it names (`allowed`: roles,
 * categories, groups, users), its priority (the highest that names a person wins), the notice a
 * booking needs (forbid_time, minutes), its longest length (max_time, minutes) and how many future
 * bookings one may hold (max_items); null = no limit. `rule_id` groups the rules of a profile.
 */
const minutes = z.number().int().min(0).max(10_000_000);
export const ZBookingRule = z.object({
  id: z.string(),
  rule_id: z.string(),
  name: z.string(),
  allowed: ZAllowed,
  priority: z.number().int(),
  forbid_time: z.number().int(),
  max_time: z.number().int().nullable(),
  max_items: z.number().int().nullable(),
  /** Profiles that use this rule id. */
  profiles: z.array(z.string()),
});
export type TBookingRule = z.infer<typeof ZBookingRule>;
export const ZBookingRuleList = adminList(ZBookingRule);
export type TBookingRuleList = z.infer<typeof ZBookingRuleList>;
export const ZBookingRulesQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'rule_id', 'priority']).optional(),
  rule_id: z.string().max(64).optional(),
});
export const ZBookingRuleCreate = z
  .object({
    rule_id: z.string().trim().min(1).max(64).default('default'),
    name,
    allowed: ZAllowed,
    priority: z.number().int().min(0).max(100_000),
    forbid_time: minutes.default(0),
    max_time: minutes.nullable().default(null),
    max_items: z.number().int().min(0).max(1_000_000).nullable().default(null),
  })
  .strict();
export type TBookingRuleCreate = z.input<typeof ZBookingRuleCreate>;
export const ZBookingRuleUpdate = z
  .object({
    rule_id: z.string().trim().min(1).max(64).optional(),
    name: name.optional(),
    allowed: ZAllowed.optional(),
    priority: z.number().int().min(0).max(100_000).optional(),
    forbid_time: minutes.optional(),
    max_time: minutes.nullable().optional(),
    max_items: z.number().int().min(0).max(1_000_000).nullable().optional(),
  })
  .strict();
export type TBookingRuleUpdate = z.input<typeof ZBookingRuleUpdate>;

// ------------------------------------------------------------------ auto-shutdown policies
/**
 * Auto-shutdown of running desktops (the original's `desktops_priority`): per role, category,
 * group or user, the longest a desktop may stay started (`max_time`, minutes) and how long it may
 * stay idle — no viewer open through the portal's viewer bridges — before it is stopped
 * (`idle_time`, minutes); null = no limit. The owner is warned `warnings` minutes before (live
 * `msg`). The most specific policy of the desktop's owner applies: user, then group (primary or
 * secondary; the shortest times if several), then category, then role. A desktop under a GPU
 * booking ends with its booking instead.
 */
export const SHUTDOWN_POLICY_KINDS = ['user', 'group', 'category', 'role'] as const;
export const ZShutdownPolicyKind = z.enum(SHUTDOWN_POLICY_KINDS);
export type TShutdownPolicyKind = z.infer<typeof ZShutdownPolicyKind>;
/** The msg_codes of the warnings before an auto-shutdown (longest time started; idle). */
export const AUTO_SHUTDOWN_MSG_CODE = 'auto-shutdown';
export const IDLE_SHUTDOWN_MSG_CODE = 'idle-shutdown';
export const DEFAULT_SHUTDOWN_WARNINGS = [5, 1];

const policyMinutes = z.number().int().min(1).max(60 * 24 * 365);
const warnings = z.array(z.number().int().min(1).max(24 * 60)).max(5);
export const ZShutdownPolicy = z.object({
  id: z.string(),
  name: z.string(),
  kind: ZShutdownPolicyKind,
  target: z.string(),
  /** The name of the role, category, group or user. */
  target_name: z.string(),
  /** Null for a role's policy (every category). */
  category: z.string().nullable(),
  category_name: z.string().nullable(),
  max_time: z.number().int().nullable(),
  idle_time: z.number().int().nullable(),
  warnings: z.array(z.number().int()),
  enabled: z.boolean(),
  /** Whether the caller may change it (a manager: not a role's policy). */
  editable: z.boolean(),
});
export type TShutdownPolicy = z.infer<typeof ZShutdownPolicy>;
export const ZShutdownPolicyList = adminList(ZShutdownPolicy);
export type TShutdownPolicyList = z.infer<typeof ZShutdownPolicyList>;
export const ZShutdownPoliciesQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'kind', 'max_time', 'idle_time']).optional(),
  kind: ZShutdownPolicyKind.optional(),
});
export const ZShutdownPolicyCreate = z
  .object({
    name,
    kind: ZShutdownPolicyKind,
    target: id,
    max_time: policyMinutes.nullable().default(null),
    idle_time: policyMinutes.nullable().default(null),
    warnings: warnings.default(DEFAULT_SHUTDOWN_WARNINGS),
    enabled: z.boolean().default(true),
  })
  .strict();
export type TShutdownPolicyCreate = z.input<typeof ZShutdownPolicyCreate>;
export const ZShutdownPolicyUpdate = z
  .object({
    name: name.optional(),
    max_time: policyMinutes.nullable().optional(),
    idle_time: policyMinutes.nullable().optional(),
    warnings: warnings.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type TShutdownPolicyUpdate = z.input<typeof ZShutdownPolicyUpdate>;
