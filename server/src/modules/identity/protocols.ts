/**
 * The protocols behind the providers, each an adapter in src/identity/ wrapped here:
 * - password protocols (LDAP) check a name and password typed in the sign-in form;
 * - redirect protocols (OpenID Connect, SAML) send the browser to the provider and take it back on their own
 *   routes under /authentication, ending with `finishRedirect` (routes.ts).
 */
import { ZLdapSettings, type TIdentityKind } from '@vdi/contracts';
import type { PasswordProtocol, RedirectProtocol } from './protocol-types';
import { authenticateLdap } from '../../identity/ldap';
import { oidcProtocol } from './oidc';
import { samlProtocol } from './saml';

export type { PasswordProtocol, RedirectFlow, RedirectProtocol } from './protocol-types';

export const PASSWORD_PROTOCOLS: Partial<Record<TIdentityKind, PasswordProtocol>> = {
  ldap: { authenticate: (ctx, provider, username, password) => authenticateLdap(ZLdapSettings.parse(provider.settings), provider.secretPlain, username, password, ctx.log) },
};

export const REDIRECT_PROTOCOLS: Partial<Record<TIdentityKind, RedirectProtocol>> = {
  oidc: oidcProtocol,
  saml: samlProtocol,
};
