/**
 * What GET /authentication/providers lists (reference §2.2): "form" whenever a form provider is on (local accounts
 * always are; LDAP directories sign in through the form too), then the external kinds (oidc, saml) of the enabled
 * identity providers; local and LDAP are never listed themselves. Clients show the user/password form only when
 * "form" is listed.
 */
const FORM_PROVIDERS = new Set(['local', 'ldap', 'form']);

export function listedProviders(enabled: readonly string[] = ['local']): string[] {
  const external = [...new Set(enabled.filter((p) => !FORM_PROVIDERS.has(p)))];
  return enabled.some((p) => FORM_PROVIDERS.has(p)) ? ['form', ...external] : external;
}
