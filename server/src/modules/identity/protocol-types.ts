/**
 * What a protocol behind the providers is (protocols.ts holds the registry of them): a password protocol (LDAP)
 * checks a name and password typed in the sign-in form; a redirect protocol (OpenID Connect, SAML) sends the
 * browser to the provider and takes it back on its own routes under /authentication, ending with `finishRedirect`.
 * Apart from the registry so that the protocols, which implement these, import no circle.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context';
import type { ExternalSession } from '../../db/schema';
import type { ExternalIdentity } from './mapping';
import type { LoadedProvider } from './providers';

export type PasswordProtocol = {
  /** The person, when the directory knows the name and the password is theirs; null when not (a wrong name or password). Throws when the directory cannot be reached. */
  authenticate(ctx: AppContext, provider: LoadedProvider, username: string, password: string): Promise<ExternalIdentity | null>;
};

/** Where a redirect sign-in starts: `flow` comes back to the protocol's callback (kept in identity_flows). */
export type RedirectFlow = {
  categoryId?: string;
  test: boolean;
  /**
   * A random value routes.ts also left in the browser's `idp_flow` cookie (SameSite=Lax: it comes back on the
   * provider's GET redirect): a callback is taken only from the browser that started the sign-in, so nobody can
   * hand a person a callback of their own sign-in (login CSRF). Absent for the console's test.
   */
  browser?: string;
};

export type RedirectProtocol = {
  /** The provider's address to send the browser to (throws when the provider cannot be reached). */
  begin(ctx: AppContext, provider: LoadedProvider, flow: RedirectFlow): Promise<string>;
  /** The provider's logout address for a session it opened, if it has one. */
  logout?(ctx: AppContext, provider: LoadedProvider, external: ExternalSession): Promise<string | undefined>;
  /** Its own routes under /authentication (callbacks, metadata). */
  routes(app: FastifyInstance, ctx: AppContext): Promise<void>;
};
