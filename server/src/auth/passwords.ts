import { hash, verify } from '@node-rs/argon2';
import { and, eq, inArray } from 'drizzle-orm';
import type { DescriptionCode, TPasswordPolicy } from '@vdi/contracts';
import { schema, type Db } from '../db';

/** argon2id with the library's defaults (m=19456, t=2, p=1). */
export const hashPassword = (password: string) => hash(password);

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) return false;
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Spent on unknown usernames so that timing does not tell which exist. */
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string) {
  dummyHash ??= hash('not-a-real-password');
  await verifyPassword(await dummyHash, password);
}

type PolicyRow = typeof schema.passwordPolicies.$inferSelect;

export const policyView = (p: PolicyRow): TPasswordPolicy => ({
  id: p.id,
  type: 'local',
  category: p.categoryId,
  role: p.roleId,
  subtype: 'password',
  length: p.length,
  digits: p.digits,
  uppercase: p.uppercase,
  lowercase: p.lowercase,
  special_characters: p.specialCharacters,
  not_username: p.notUsername,
  expire: p.expireDays,
  old_passwords: p.oldPasswords,
});

/** The most specific policy wins: category+role, category, role, then the general one. */
export async function findPolicy(db: Db, categoryId: string, roleId: string): Promise<TPasswordPolicy | null> {
  const rows = await db
    .select()
    .from(schema.passwordPolicies)
    .where(
      and(
        inArray(schema.passwordPolicies.categoryId, [categoryId, 'all']),
        inArray(schema.passwordPolicies.roleId, [roleId, 'all']),
      ),
    );
  const score = (p: PolicyRow) => (p.categoryId !== 'all' ? 2 : 0) + (p.roleId !== 'all' ? 1 : 0);
  const best = rows.sort((a, b) => score(b) - score(a))[0];
  return best ? policyView(best) : null;
}

const count = (s: string, re: RegExp) => (s.match(re) ?? []).length;

/** Every rule the password breaks, as catalogue codes with their bound. */
export async function policyViolations(
  policy: TPasswordPolicy | null,
  password: string,
  username: string,
  history: string[],
): Promise<{ code: DescriptionCode; params: Record<string, unknown> }[]> {
  if (!policy) return [];
  const out: { code: DescriptionCode; params: Record<string, unknown> }[] = [];
  if (password.length < policy.length) out.push({ code: 'password_policy_length', params: { length: policy.length } });
  if (count(password, /[0-9]/g) < policy.digits) out.push({ code: 'password_policy_digits', params: { digits: policy.digits } });
  if (count(password, /[A-Z]/g) < policy.uppercase)
    out.push({ code: 'password_policy_uppercase', params: { uppercase: policy.uppercase } });
  if (count(password, /[a-z]/g) < policy.lowercase)
    out.push({ code: 'password_policy_lowercase', params: { lowercase: policy.lowercase } });
  if (count(password, /[^A-Za-z0-9]/g) < policy.special_characters)
    out.push({ code: 'password_policy_special_characters', params: { special_characters: policy.special_characters } });
  if (policy.not_username && username && password.toLowerCase().includes(username.toLowerCase()))
    out.push({ code: 'password_policy_not_username', params: {} });
  if (policy.old_passwords > 0) {
    for (const old of history.slice(0, policy.old_passwords)) {
      if (await verifyPassword(old, password)) {
        out.push({ code: 'password_policy_old_password', params: { old_passwords: policy.old_passwords } });
        break;
      }
    }
  }
  return out;
}

/** True when the policy sets an expiry and the password is older than it. */
export function passwordExpired(policy: TPasswordPolicy | null, lastUpdated: Date | null, now = new Date()): boolean {
  if (!policy || policy.expire <= 0) return false;
  if (!lastUpdated) return true;
  return now.getTime() - lastUpdated.getTime() > policy.expire * 86_400_000;
}

export async function findUserById(db: Db, id: string) {
  return (await db.select().from(schema.users).where(eq(schema.users.id, id)))[0];
}
