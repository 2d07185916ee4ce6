import { z } from 'zod';
import { languageCodeOf, ZLanguageCode } from './languages';

/**
 * System settings (`GET/PUT /api/v3/admin/settings/{key}`), each with its schema and default; the
 * server keeps them in the `config` table (one JSON value per key) except `password_policies`
 * (rows of `password_policies`). A PUT merges the given top-level fields into the stored value.
 */

const text = (max: number) => z.string().max(max);

export const ZMaintenanceSetting = z
  .object({ enabled: z.boolean(), title: text(200), body: text(5000) })
  .default({ enabled: false, title: '', body: '' });

/** One language's disclaimer text. */
export const ZDisclaimerText = z.object({ title: text(200), body: text(20000) });
export type TDisclaimerText = z.infer<typeof ZDisclaimerText>;
/**
 * The disclaimer shown after the password until accepted. `title`/`body` are the default text
 * (read by clients that know one text only); `texts` holds the text per language by its stored
 * code (`en`, `ca`, `de`, `zh_Hans`, …, see `LANGUAGES`). Readers pick `texts[lang]` when it has a body, else
 * `title`/`body` (see `disclaimerFor`).
 */
export const ZDisclaimerSetting = z
  .object({
    enabled: z.boolean(),
    title: text(200),
    body: text(20000),
    texts: z.partialRecord(ZLanguageCode, ZDisclaimerText).default({}),
  })
  .default({ enabled: false, title: '', body: '', texts: {} });
export type TDisclaimerSetting = z.infer<typeof ZDisclaimerSetting>;

/** The disclaimer text for a language (`de`, `de-DE`, `zh_Hans`, …): its own when it has a body, else the default. */
export function disclaimerFor(setting: TDisclaimerSetting, lang: string | null | undefined): TDisclaimerText {
  const own = lang ? setting.texts[languageCodeOf(lang)] : undefined;
  return own && own.body.trim() ? own : { title: setting.title, body: setting.body };
}

export const ZStatusBarSetting = z
  .object({ enabled: z.boolean(), level: z.enum(['info', 'warning', 'danger']), text: text(1000) })
  .default({ enabled: false, level: 'info', text: '' });

export const ZFrontendSetting = z
  .object({
    show_bookings_button: z.boolean(),
    show_temporal_tab: z.boolean(),
    documentation_url: text(2000),
    viewers_documentation_url: text(2000),
  })
  .default({ show_bookings_button: true, show_temporal_tab: true, documentation_url: '', viewers_documentation_url: '' });

/**
 * User migration per sign-in provider (the original's `config.auth.<provider>.migration`): whether
 * its users may export to a code, or import one. Off until an admin turns it on.
 */
export const ZMigrationSetting = z
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
  .default({ local: { export: false, import: false, force_migration: false }, exceptions: { categories: [], groups: [], roles: [], users: [] } });

/** Recycle-bin retention in hours (categories may set their own) and whether deletes skip it by default. */
export const ZRecycleBinSetting = z
  .object({ cutoff_hours: z.number().int().min(0).max(100_000), default_delete: z.boolean() })
  .default({ cutoff_hours: 1, default_delete: false });

/**
 * The sign-in page: providers not offered (`form` hides the user/password form), the categories
 * select hidden (people then sign in at their category's address), and a notice above the form.
 */
export const ZLoginSetting = z
  .object({
    hidden_providers: z.array(text(32)).max(20),
    hide_categories_select: z.boolean(),
    notice: z.object({ enabled: z.boolean(), title: text(200), text: text(2000) }),
  })
  .default({ hidden_providers: [], hide_categories_select: false, notice: { enabled: false, title: '', text: '' } });

/**
 * Mail (SMTP) for password resets and e-mail verification. When `enabled`, it replaces the SMTP_*
 * environment variables at once. The password is never answered (`password` is '' and
 * `password_set` tells whether one is stored); a PUT without `password` keeps the stored one.
 */
export const ZMailSetting = z
  .object({
    enabled: z.boolean(),
    host: text(255),
    port: z.number().int().min(1).max(65535),
    secure: z.boolean(),
    user: text(255),
    password: text(512),
    from: text(320),
  })
  .default({ enabled: false, host: '', port: 25, secure: false, user: '', password: '', from: '' });
export type TMailSetting = z.infer<typeof ZMailSetting>;
export const ZMailSettingAnswer = ZMailSetting.unwrap().extend({ password_set: z.boolean() });

/**
 * The portal's public address (`https://vdi.example.org`): where links in mails (password reset, e-mail
 * verification), the deployments' direct-viewer lists, the VPN file's endpoint and the bastion's names
 * point. `PUBLIC_URL` wins when set; without either no such mail is sent and no such file is made
 * (a request's own Host header is never trusted for them).
 */
export const ZPublicAddressSetting = z
  .object({ url: z.union([z.literal(''), z.string().max(2000).url().regex(/^https?:\/\//, 'http:// or https://')]) })
  .default({ url: '' });
/** What GET answers: the stored `url`, and `PUBLIC_URL` when the server sets it (it then wins). */
export const ZPublicAddressAnswer = ZPublicAddressSetting.unwrap().extend({ environment: z.string().nullable() });

/** Session lifetimes in seconds; null keeps the server's configured value (SESSION_* variables). */
export const ZSessionsSetting = z
  .object({
    token_seconds: z.number().int().min(60).max(86_400).nullable(),
    max_renew_seconds: z.number().int().min(60).max(2_592_000).nullable(),
    max_seconds: z.number().int().min(300).max(2_592_000).nullable(),
  })
  .default({ token_seconds: null, max_renew_seconds: null, max_seconds: null });

/** Temporary desktops: stopped (and so deleted) after this many minutes without a viewer; 0 = never. */
export const ZTemporaryDesktopsSetting = z
  .object({ inactivity_minutes: z.number().int().min(0).max(10_080) })
  .default({ inactivity_minutes: 0 });

/** Audit log retention in days (entries older are swept; 0 = kept for ever). */
export const ZAuditSetting = z.object({ retention_days: z.number().int().min(0).max(36_500) }).default({ retention_days: 365 });

/** One password policy: for a category (or `all`) and a role (or `all`); the most specific applies. */
export const ZPasswordPolicyRule = z.object({
  category: text(64).min(1),
  role: z.enum(['all', 'admin', 'manager', 'advanced', 'user']),
  length: z.number().int().min(1).max(128),
  uppercase: z.number().int().min(0).max(64),
  lowercase: z.number().int().min(0).max(64),
  digits: z.number().int().min(0).max(64),
  special_characters: z.number().int().min(0).max(64),
  not_username: z.boolean(),
  old_passwords: z.number().int().min(0).max(10),
  expire: z.number().int().min(0).max(3650),
});
export type TPasswordPolicyRule = z.infer<typeof ZPasswordPolicyRule>;
/** Every policy at once; a PUT replaces the set (one per category and role; `all`/`all` always kept). */
export const ZPasswordPoliciesSetting = z
  .object({ items: z.array(ZPasswordPolicyRule).max(500) })
  .default({ items: [] });

/** The bastion (SSH and HTTP/HTTPS to desktops through the portal): off until an admin turns it on. */
export const ZBastionSetting = z.object({ enabled: z.boolean() }).default({ enabled: false });

/** The user VPN: whether admins' tunnels reach every started desktop (otherwise each tunnel reaches its owner's desktops only). */
export const ZVpnSetting = z.object({ admins_reach_all: z.boolean() }).default({ admins_reach_all: false });

/**
 * Two-factor sign-in required of local accounts of these roles and of these categories (organisations): people it
 * covers without it are led to enrol at their next sign-in, and cannot turn it off.
 */
export const ZTwoFactorSetting = z
  .object({
    required_roles: z.array(z.enum(['admin', 'manager', 'advanced', 'user'])).max(4),
    required_categories: z.array(text(64).min(1)).max(500),
  })
  .default({ required_roles: [], required_categories: [] });
export type TTwoFactorSetting = z.infer<typeof ZTwoFactorSetting>;

export const SETTING_SCHEMAS = {
  maintenance: ZMaintenanceSetting,
  disclaimer: ZDisclaimerSetting,
  status_bar: ZStatusBarSetting,
  frontend: ZFrontendSetting,
  migration: ZMigrationSetting,
  recycle_bin: ZRecycleBinSetting,
  login: ZLoginSetting,
  mail: ZMailSetting,
  public_address: ZPublicAddressSetting,
  sessions: ZSessionsSetting,
  temporary_desktops: ZTemporaryDesktopsSetting,
  audit: ZAuditSetting,
  password_policies: ZPasswordPoliciesSetting,
  bastion: ZBastionSetting,
  vpn: ZVpnSetting,
  two_factor: ZTwoFactorSetting,
} as const;
export type TSettingKey = keyof typeof SETTING_SCHEMAS;
export const SETTING_KEYS = Object.keys(SETTING_SCHEMAS) as TSettingKey[];
export type TSettingValue<K extends TSettingKey> = z.infer<(typeof SETTING_SCHEMAS)[K]>;

/** POST /admin/settings/mail/test: sends a test mail with the stored settings (or those given). */
export const ZMailTestBody = z.object({ to: z.string().email().max(320) }).strict();
