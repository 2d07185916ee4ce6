/**
 * Mapping rules (contracts/identity.ts): the first rule whose attribute has a matching value gives the group and
 * role. Values match without case; `*` stands for any run of characters (`cn=teachers,*`).
 */
import { ROLES, type TMappingRule, type TRole } from '@vdi/contracts';
import type { ExternalIdentity } from '../../identity/person';

/** A person a provider vouched for (the adapters' shape, src/identity/person.ts). */
export type { ExternalIdentity };

export function patternMatches(pattern: string, value: string): boolean {
  const p = pattern.trim().toLowerCase();
  const v = value.trim().toLowerCase();
  if (!p.includes('*')) return p === v;
  const parts = p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's').test(v);
}

/** The values a rule's attribute has: `groups` is the person's group list; any other name an attribute or claim (any case). */
export function valuesOf(identity: ExternalIdentity, attribute: string): string[] {
  if (attribute.toLowerCase() === 'groups') return identity.groups;
  const key = Object.keys(identity.attributes).find((k) => k.toLowerCase() === attribute.toLowerCase());
  return key ? identity.attributes[key]! : [];
}

/** The index of the first rule that matches, or null. */
export function matchingRule(rules: readonly TMappingRule[], identity: ExternalIdentity): number | null {
  const i = rules.findIndex((r) => valuesOf(identity, r.attribute).some((v) => patternMatches(r.value, v)));
  return i < 0 ? null : i;
}

/** admin > manager > advanced > user */
export const roleRank = (role: string) => ROLES.length - ROLES.indexOf(role as TRole);

/** Whether `role` is above what the provider may give. */
export const roleAbove = (role: string, max: string) => roleRank(role) > roleRank(max);
