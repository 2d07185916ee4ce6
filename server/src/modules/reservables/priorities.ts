import { inArray } from 'drizzle-orm';
import type { TBookingPriority } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import type { Allowed } from '../../db/schema';
import type { Actor } from '../../auth/caller';

export type PriorityRuleRow = typeof schema.bookingPriorities.$inferSelect;
export type SubitemRow = typeof schema.reservableSubitems.$inferSelect;

/** The rule of a profile whose priority_id is '' (reference §6.2). */
export const DEFAULT_RULE_ID = 'default';

/** Admins and managers start GPU desktops without a booking and skip the forbid time (reference §6.2). */
export const isBookingExempt = (role: string) => role === 'admin' || role === 'manager';

/**
 * Does `allowed` name the actor? For each criterion: false = unused, [] = everyone, a list = those ids.
 * Checked in the order users, groups, categories, roles.
 */
export function allowedMatches(actor: Actor, allowed: Allowed): boolean {
  const hit = (list: string[] | false, ids: string[]) => list !== false && (list.length === 0 || list.some((x) => ids.includes(x)));
  return hit(allowed.users, [actor.id]) || hit(allowed.groups, actor.groupIds) || hit(allowed.categories, [actor.categoryId]) || hit(allowed.roles, [actor.role]);
}

/** The rule that applies to the actor among a profile's rules: the highest priority that names them. */
export function ruleFor(actor: Actor, rules: readonly PriorityRuleRow[]): PriorityRuleRow | null {
  let best: PriorityRuleRow | null = null;
  for (const r of rules) if (allowedMatches(actor, r.allowed) && (!best || r.priority > best.priority)) best = r;
  return best;
}

/** When no rule names the actor at all, nothing may be booked ahead and nothing held. */
const NO_RULE = { priority: 0, forbidTime: 0, maxTime: 0, maxItems: 0 };

const minNullable = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/**
 * The actor's priority per profile and the most restrictive limits across the item's profiles
 * (GET /bookings/priority/{itemType}/{itemId}).
 */
export async function priorityOf(db: Db, actor: Actor, profiles: readonly string[], name: string): Promise<TBookingPriority> {
  const subitems = profiles.length
    ? await db.select().from(schema.reservableSubitems).where(inArray(schema.reservableSubitems.id, [...profiles]))
    : [];
  const ruleIds = [...new Set(subitems.map((s) => s.priorityId || DEFAULT_RULE_ID))];
  const rules = ruleIds.length ? await db.select().from(schema.bookingPriorities).where(inArray(schema.bookingPriorities.ruleId, ruleIds)) : [];
  const out: TBookingPriority = { priority: {}, forbid_time: 0, max_time: null, max_items: null, name };
  let first = true;
  for (const profile of profiles) {
    const sub = subitems.find((s) => s.id === profile);
    const rule = ruleFor(actor, rules.filter((r) => r.ruleId === (sub?.priorityId || DEFAULT_RULE_ID))) ?? NO_RULE;
    out.priority[profile] = rule.priority;
    out.forbid_time = Math.max(out.forbid_time, rule.forbidTime);
    out.max_time = first ? rule.maxTime : minNullable(out.max_time, rule.maxTime);
    out.max_items = first ? rule.maxItems : minNullable(out.max_items, rule.maxItems);
    first = false;
  }
  return out;
}
