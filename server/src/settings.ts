import { eq, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { schema, type Db } from './db';

/** System settings kept in the `config` table, each with its schema and default. */
export const SETTINGS = {
  maintenance: z
    .object({ enabled: z.boolean(), title: z.string(), body: z.string() })
    .default({ enabled: false, title: '', body: '' }),
  disclaimer: z
    .object({ enabled: z.boolean(), title: z.string(), body: z.string() })
    .default({ enabled: false, title: '', body: '' }),
  status_bar: z
    .object({ enabled: z.boolean(), level: z.enum(['info', 'warning', 'danger']), text: z.string() })
    .default({ enabled: false, level: 'info', text: '' }),
  frontend: z
    .object({
      show_bookings_button: z.boolean(),
      show_temporal_tab: z.boolean(),
      documentation_url: z.string(),
      viewers_documentation_url: z.string(),
    })
    .default({
      show_bookings_button: true,
      show_temporal_tab: true,
      documentation_url: '',
      viewers_documentation_url: '',
    }),
  /**
   * User migration per sign-in provider (the original's `config.auth.<provider>.migration`): whether
   * its users may export to a code, or import one. Off until an admin turns it on.
   */
  migration: z
    .object({
      local: z.object({
        export: z.boolean().default(false),
        import: z.boolean().default(false),
        /** Forced migration: every user not excepted below is sent to /export-user (`migrations_block`). */
        force_migration: z.boolean().default(false),
      }),
      /** Who forced migration leaves alone (the original's `users_migrations_exceptions`), by id. */
      exceptions: z
        .object({ categories: z.array(z.string()), groups: z.array(z.string()), roles: z.array(z.string()), users: z.array(z.string()) })
        .default({ categories: [], groups: [], roles: [], users: [] }),
    })
    .default({ local: { export: false, import: false, force_migration: false }, exceptions: { categories: [], groups: [], roles: [], users: [] } }),
  recycle_bin: z
    .object({ cutoff_hours: z.number().int().min(0), default_delete: z.boolean() })
    .default({ cutoff_hours: 1, default_delete: false }),
} as const;

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

export function createSettings(db: Db) {
  return {
    async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
      const [row] = await db.select({ value: schema.config.value }).from(schema.config).where(eq(schema.config.key, key));
      return parseSetting(key, row?.value);
    },
    async set<K extends SettingKey>(key: K, value: SettingValue<K>) {
      const checked = SETTINGS[key].parse(value);
      await db
        .insert(schema.config)
        .values({ key, value: checked })
        .onConflictDoUpdate({ target: schema.config.key, set: { value: checked, updatedAt: new Date() } });
    },
  };
}
export type Settings = ReturnType<typeof createSettings>;
