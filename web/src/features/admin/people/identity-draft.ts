import type { TIdentityKind, TIdentityProvider, TIdentityProviderBody, TLdapSettings, TMappingRule, TOidcSettings, TRole, TSamlSettings } from '@vdi/contracts';

// The sign-in provider form's draft: made from a stored provider, and made into the body a save sends.

/** The kinds' names (protocol names, the same in every language). */
export const KIND_LABEL: Record<TIdentityKind, string> = { ldap: 'LDAP', oidc: 'OpenID Connect', saml: 'SAML' };

/** The settings of a new provider of each kind (the contracts' defaults). */
export const DEFAULT_SETTINGS: { ldap: TLdapSettings; oidc: TOidcSettings; saml: TSamlSettings } = {
  ldap: {
    url: '',
    start_tls: false,
    ca: '',
    bind_dn: '',
    user_base: '',
    user_filter: '(uid={username})',
    group_base: '',
    group_filter: '(member={dn})',
    attributes: { username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' },
  },
  oidc: {
    issuer: '',
    client_id: '',
    scopes: 'openid profile email',
    attributes: { username: 'preferred_username', name: 'name', email: 'email', photo: 'picture', groups: 'groups' },
  },
  saml: {
    metadata_url: '',
    metadata_xml: '',
    attributes: { username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' },
  },
};

/** A stored provider's settings completed with its kind's defaults (older rows may lack a field). */
export function settingsOf(p: Pick<TIdentityProvider, 'kind' | 'settings'>) {
  const base = DEFAULT_SETTINGS[p.kind as TIdentityKind] as Record<string, unknown>;
  const s = p.settings as Record<string, unknown>;
  return { ...base, ...s, attributes: { ...(base.attributes as object), ...((s.attributes as object | undefined) ?? {}) } };
}

/** Roles from the lowest up: a rule may give its provider's highest role or one below. */
const RANK: Record<TRole, number> = { user: 0, advanced: 1, manager: 2, admin: 3 };
export const roleAbove = (role: TRole, max: TRole) => RANK[role] > RANK[max];
/** The organisation choice that means every organisation (category_id null). */
export const ALL = '*';

export type Rule = TMappingRule & { key: number };
export type Settings = { ldap: TLdapSettings; oidc: TOidcSettings; saml: TSamlSettings };
export type Draft = {
  kind: TIdentityKind;
  name: string;
  logo: string;
  category: string;
  enabled: boolean;
  settings: Settings;
  secret: string;
  clearSecret: boolean;
  rules: Rule[];
  unmatched: 'refuse' | 'register';
  update_on_signin: boolean;
  max_role: TRole;
};

let keys = 0;
/** A key for a new rule row (React keeps a row's fields when rules move). */
export const ruleKey = () => ++keys;
const clone = <T,>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export function draftOf(p: TIdentityProvider | null): Draft {
  const settings = clone(DEFAULT_SETTINGS) as Settings;
  if (p) (settings as Record<string, unknown>)[p.kind] = settingsOf(p);
  return {
    kind: p?.kind ?? 'ldap',
    name: p?.name ?? '',
    logo: p?.logo ?? '',
    category: p?.category_id ?? ALL,
    enabled: p?.enabled ?? true,
    settings,
    secret: '',
    clearSecret: false,
    rules: (p?.rules ?? []).map((r) => ({ ...r, key: ++keys })),
    unmatched: p?.unmatched ?? 'refuse',
    update_on_signin: p?.update_on_signin ?? false,
    max_role: p?.max_role ?? 'advanced',
  };
}

/** The body a save sends: the secret only when typed (or cleared), so a stored one is kept. */
export function bodyOf(d: Draft): TIdentityProviderBody {
  const common = {
    name: d.name.trim(),
    logo: d.logo,
    category_id: d.category === ALL ? null : d.category,
    enabled: d.enabled,
    rules: d.rules.map(({ key: _key, ...r }) => r),
    unmatched: d.unmatched,
    update_on_signin: d.update_on_signin,
    max_role: d.max_role,
    ...(d.clearSecret ? { secret: '' } : d.secret ? { secret: d.secret } : {}),
  };
  if (d.kind === 'ldap') return { ...common, kind: 'ldap', settings: d.settings.ldap };
  if (d.kind === 'oidc') return { ...common, kind: 'oidc', settings: d.settings.oidc };
  return { ...common, kind: 'saml', settings: d.settings.saml };
}

/** A stored provider as a body again (the list's enable switch saves it whole, its secret kept). */
export const bodyOfProvider = (p: TIdentityProvider, patch: Partial<Draft> = {}) => bodyOf({ ...draftOf(p), ...patch });
