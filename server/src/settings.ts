import { eq, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { SETTING_SCHEMAS, type TPasswordPolicyRule } from '@vdi/contracts';
import { schema, type Db } from './db';

/**
 * System settings kept in the `config` table, each with its schema and default: the registry is
 * the shared contract's `SETTING_SCHEMAS` (contracts/src/settings.ts documents each shape, e.g. the
 * disclaimer's per-language `texts` beside its default `title`/`body`). `password_policies` is the
 * exception: its rows live in the `password_policies` table (read and written here all the same).
 */
export const SETTINGS = SETTING_SCHEMAS;

export type SettingKey = keyof typeof SETTINGS;
/** A name from a request is a setting only when SETTINGS itself has it (not `__proto__`, `constructor`…). */
export const isSettingKey = (key: string): key is SettingKey => Object.hasOwn(SETTINGS, key);
export type SettingValue<K extends SettingKey> = z.infer<(typeof SETTINGS)[K]>;

/**
 * A setting's stored JSON as a column of another query (the request guard reads maintenance in
 * the same query as the session); null when unset. Read it with `parseSetting`.
 */
export const settingValueSql = (key: SettingKey): SQL<unknown> =>
  sql`(select ${schema.config.value} from ${schema.config} where ${schema.config.key} = ${key})`;

/** A stored value (raw JSON, text or parsed, or null) as its setting: invalid or unset → the default. */
export function parseSetting<K extends SettingKey>(key: K, raw: unknown): SettingValue<K> {
  let value = raw ?? undefined;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      value = undefined;
    }
  }
  const parsed = SETTINGS[key].safeParse(value);
  return (parsed.success ? parsed.data : SETTINGS[key].parse(undefined)) as SettingValue<K>;
}

type PolicyRow = typeof schema.passwordPolicies.$inferSelect;
const ruleOf = (p: PolicyRow): TPasswordPolicyRule => ({
  category: p.categoryId,
  role: p.roleId as TPasswordPolicyRule['role'],
  length: p.length,
  uppercase: p.uppercase,
  lowercase: p.lowercase,
  digits: p.digits,
  special_characters: p.specialCharacters,
  not_username: p.notUsername,
  old_passwords: p.oldPasswords,
  expire: p.expireDays,
});
const policyId = (r: Pick<TPasswordPolicyRule, 'category' | 'role'>) =>
  r.category === 'all' && r.role === 'all' ? 'default' : `${r.category}:${r.role}`;

export function createSettings(db: Db) {
  return {
    async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
      if (key === 'password_policies') {
        const rows = await db.select().from(schema.passwordPolicies).orderBy(schema.passwordPolicies.categoryId, schema.passwordPolicies.roleId);
        return { items: rows.map(ruleOf) } as SettingValue<K>;
      }
      const [row] = await db.select({ value: schema.config.value }).from(schema.config).where(eq(schema.config.key, key));
      return parseSetting(key, row?.value);
    },
    /** Stores a value (in `tx` when given, so that it commits with its audit entry). */
    async set<K extends SettingKey>(key: K, value: SettingValue<K>, tx: Db = db) {
      const checked = SETTINGS[key].parse(value) as SettingValue<K>;
      if (key === 'password_policies') {
        const items = (checked as SettingValue<'password_policies'>).items;
        await tx.delete(schema.passwordPolicies);
        const rows: (typeof schema.passwordPolicies.$inferInsert & { id: string })[] = items.map((r) => ({
          id: policyId(r),
          categoryId: r.category,
          roleId: r.role,
          length: r.length,
          uppercase: r.uppercase,
          lowercase: r.lowercase,
          digits: r.digits,
          specialCharacters: r.special_characters,
          notUsername: r.not_username,
          oldPasswords: r.old_passwords,
          expireDays: r.expire,
        }));
        if (!rows.some((r) => r.id === 'default')) rows.push({ ...DEFAULT_POLICY });
        await tx.insert(schema.passwordPolicies).values(rows);
      } else {
        await tx
          .insert(schema.config)
          .values({ key, value: checked })
          .onConflictDoUpdate({ target: schema.config.key, set: { value: checked, updatedAt: new Date() } });
      }
    },
  };
}
/** The general policy kept when an admin removes every rule: 8 characters, as seeded. */
const DEFAULT_POLICY = {
  id: 'default',
  categoryId: 'all',
  roleId: 'all',
  length: 8,
  uppercase: 0,
  lowercase: 0,
  digits: 0,
  specialCharacters: 0,
  notUsername: false,
  oldPasswords: 0,
  expireDays: 0,
};
export type Settings = ReturnType<typeof createSettings>;
