import type { TPasswordPolicy } from '@vdi/contracts';

export type PolicyCheck = { key: string; count?: number; met: boolean | null };

const count = (re: RegExp, s: string) => (s.match(re) ?? []).length;

/** The policy as checks on the typed password; `met: null` for what only the server can tell (history). */
export function policyChecks(policy: TPasswordPolicy, password: string, username: string): PolicyCheck[] {
  const checks: PolicyCheck[] = [];
  if (policy.length > 0) checks.push({ key: 'length', count: policy.length, met: [...password].length >= policy.length });
  if (policy.digits > 0) checks.push({ key: 'digits', count: policy.digits, met: count(/\p{Nd}/gu, password) >= policy.digits });
  if (policy.uppercase > 0) checks.push({ key: 'uppercase', count: policy.uppercase, met: count(/\p{Lu}/gu, password) >= policy.uppercase });
  if (policy.lowercase > 0) checks.push({ key: 'lowercase', count: policy.lowercase, met: count(/\p{Ll}/gu, password) >= policy.lowercase });
  if (policy.special_characters > 0) {
    checks.push({ key: 'special', count: policy.special_characters, met: count(/[^\p{L}\p{N}\s]/gu, password) >= policy.special_characters });
  }
  if (policy.not_username) checks.push({ key: 'not_username', met: password.length > 0 && !password.toLowerCase().includes(username.toLowerCase()) });
  if (policy.old_passwords > 0) checks.push({ key: 'old', count: policy.old_passwords, met: null });
  return checks;
}
