import { z } from 'zod';
import { ZRole } from './roles';

/**
 * Sign-in with the organisation's accounts: directories (LDAP / Active Directory) and identity
 * providers (OpenID Connect, SAML 2.0), configured by admins per category (or for all).
 */
export const IDENTITY_KINDS = ['ldap', 'oidc', 'saml'] as const;
export const ZIdentityKind = z.enum(IDENTITY_KINDS);
export type TIdentityKind = z.infer<typeof ZIdentityKind>;

/** What GET /authentication/providers calls each kind (the original's enum is form|saml|google; LDAP signs in through the form). */
export const LISTED_KIND: Record<TIdentityKind, string> = { ldap: 'form', oidc: 'oidc', saml: 'saml' };

const text = (max: number) => z.string().trim().max(max);

/** Where a person's user name, name, e-mail, photo and groups come from: attribute or claim names. */
export const ZIdentityAttributes = z.object({
  username: text(128).min(1),
  name: text(128).default(''),
  email: text(128).default(''),
  photo: text(128).default(''),
  groups: text(128).default(''),
});
export type TIdentityAttributes = z.infer<typeof ZIdentityAttributes>;

export const ZLdapSettings = z.object({
  /** ldap://host:389 (then StartTLS when start_tls) or ldaps://host:636 */
  url: z.string().trim().regex(/^ldaps?:\/\/[^\s/]+\/?$/i, 'ldap://host[:port] or ldaps://host[:port]').max(256),
  start_tls: z.boolean().default(false),
  /** PEM of the CA that signed the directory's certificate (empty: the system's CAs). */
  ca: z.string().max(20_000).default(''),
  /** The account the portal binds as to search (empty: anonymous search). */
  bind_dn: text(512).default(''),
  user_base: text(512).min(1),
  /** {username} is replaced by the typed name, escaped per RFC 4515. */
  user_filter: text(512).default('(uid={username})'),
  /** Groups by search (a base and a filter with {dn} and {username}), when the entry has no memberOf. */
  group_base: text(512).default(''),
  group_filter: text(512).default('(member={dn})'),
  attributes: ZIdentityAttributes.default({ username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' }),
});
export type TLdapSettings = z.infer<typeof ZLdapSettings>;

export const ZOidcSettings = z.object({
  /** The issuer; its /.well-known/openid-configuration is read. */
  issuer: z.url().max(512),
  client_id: text(256).min(1),
  scopes: text(256).default('openid profile email'),
  attributes: ZIdentityAttributes.default({ username: 'preferred_username', name: 'name', email: 'email', photo: 'picture', groups: 'groups' }),
});
export type TOidcSettings = z.infer<typeof ZOidcSettings>;

export const ZSamlSettings = z.object({
  /** The IdP's metadata: fetched from this address when set, else the XML below. */
  metadata_url: z.union([z.url().max(512), z.literal('')]).default(''),
  metadata_xml: z.string().max(200_000).default(''),
  attributes: ZIdentityAttributes.default({ username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' }),
});
export type TSamlSettings = z.infer<typeof ZSamlSettings>;

/**
 * A mapping rule: when `attribute` (a group list, a claim, an attribute) has `value` (case-insensitive;
 * `*` matches any run of characters), the person gets `group_id` (and so its category) and `role`.
 * The first matching rule wins.
 */
export const ZMappingRule = z.object({
  attribute: text(128).min(1),
  value: text(512).min(1),
  group_id: text(64).min(1),
  role: ZRole,
});
export type TMappingRule = z.infer<typeof ZMappingRule>;

/** What happens to someone no rule matches: refused, or sent to the registration-code step. */
export const UNMATCHED = ['refuse', 'register'] as const;
export const ZUnmatched = z.enum(UNMATCHED);

const common = {
  name: text(64).min(1),
  /** An image address or data: URL shown on the sign-in button. */
  logo: z.string().max(200_000).default(''),
  /** null: every category's sign-in page offers it. */
  category_id: z.string().max(64).nullable().default(null),
  enabled: z.boolean().default(true),
  rules: z.array(ZMappingRule).max(100).default([]),
  unmatched: ZUnmatched.default('refuse'),
  /** On each sign-in, the role and group follow the rules again (else only the first sign-in sets them). */
  update_on_signin: z.boolean().default(false),
  /** The highest role any rule of this provider may give. */
  max_role: ZRole.default('advanced'),
};

/** A create or full update. `secret` (LDAP bind password, OIDC client secret, SAML key pair) is write-only: absent keeps the stored one. */
export const ZIdentityProviderBody = z.discriminatedUnion('kind', [
  z.object({ ...common, kind: z.literal('ldap'), settings: ZLdapSettings, secret: z.string().max(1024).optional() }),
  z.object({ ...common, kind: z.literal('oidc'), settings: ZOidcSettings, secret: z.string().max(1024).optional() }),
  // SAML's secret is our SP's signing key pair (made on first use when none): a PEM private key and its certificate.
  z.object({
    ...common,
    kind: z.literal('saml'),
    settings: ZSamlSettings,
    secret: z
      .string()
      .max(20_000)
      .refine((v) => v === '' || (/-----BEGIN (RSA )?PRIVATE KEY-----/.test(v) && /-----BEGIN CERTIFICATE-----/.test(v)), 'a PEM private key and its certificate')
      .optional(),
  }),
]);
export type TIdentityProviderBody = z.infer<typeof ZIdentityProviderBody>;

/** A provider as the console sees it (never its secret). */
export const ZIdentityProvider = z.object({
  id: z.string(),
  kind: ZIdentityKind,
  name: z.string(),
  logo: z.string(),
  category_id: z.string().nullable(),
  enabled: z.boolean(),
  rules: z.array(ZMappingRule),
  unmatched: ZUnmatched,
  update_on_signin: z.boolean(),
  max_role: ZRole,
  settings: z.record(z.string(), z.unknown()),
  secret_set: z.boolean(),
  /** Where this provider's people come back (OIDC redirect URI, SAML ACS) and our SAML metadata, from the public address. */
  callback_url: z.string().nullable(),
  metadata_url: z.string().nullable(),
  created_at: z.string(),
});
export type TIdentityProvider = z.infer<typeof ZIdentityProvider>;

/** A provider on the sign-in page: a button (LDAP ones sign in through the form and are not buttons). */
export const ZLoginProvider = z.object({
  id: z.string(),
  kind: ZIdentityKind,
  name: z.string(),
  logo: z.string(),
  category_id: z.string().nullable(),
});
export type TLoginProvider = z.infer<typeof ZLoginProvider>;

/** A person as a provider describes them (a test's preview, and the category-select step's token). */
export const ZIdentityPerson = z.object({
  uid: z.string(),
  username: z.string(),
  name: z.string(),
  email: z.string(),
  photo: z.string(),
  groups: z.array(z.string()),
});

/** What a test sign-in found, and what a first sign-in would create (nothing is created). */
export const ZIdentityPreview = z.object({
  identity: ZIdentityPerson,
  /** the rule that matched (its index), or null */
  rule: z.number().nullable(),
  outcome: z.enum(['create', 'update', 'existing', 'register', 'refused', 'disabled']),
  category_id: z.string().nullable(),
  group_id: z.string().nullable(),
  role: ZRole.nullable(),
  /** why a person would be refused (a description_code) */
  reason: z.string().nullable(),
});
export type TIdentityPreview = z.infer<typeof ZIdentityPreview>;

/** A test of an LDAP provider: an account's name and password (OIDC and SAML test through their redirect). */
export const ZIdentityTestBody = z.object({ username: text(128).min(1), password: z.string().min(1).max(512) });
