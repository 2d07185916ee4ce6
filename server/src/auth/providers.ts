/**
 * Sign-in providers this server runs. Only local accounts (user name and password, through the
 * form) exist here; LDAP, SAML and Google are not implemented.
 */
export const ENABLED_PROVIDERS: readonly string[] = ['local'];

/** Providers whose accounts sign in through the user/password form. */
const FORM_PROVIDERS = new Set(['local', 'ldap']);

/**
 * What GET /authentication/providers lists (reference §2.2): "form" whenever a form provider is
 * on, then the external ones; local and LDAP are never listed themselves. Clients show the
 * user/password form only when "form" is listed.
 */
export function listedProviders(enabled: readonly string[] = ENABLED_PROVIDERS): string[] {
  const external = enabled.filter((p) => !FORM_PROVIDERS.has(p));
  return enabled.some((p) => FORM_PROVIDERS.has(p)) ? ['form', ...external] : external;
}
