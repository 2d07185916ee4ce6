/**
 * OpenID Connect sign-in (the adapter: src/identity/oidc.ts): `begin` keeps the flow's state, nonce and PKCE
 * verifier in identity_flows (any server process may get the callback; one use; 10 minutes) and answers the
 * provider's address; GET /authentication/oidc/callback/:id takes the flow once, has the code exchanged and the ID
 * token validated, and ends with finishRedirect (or failRedirect); `logout` answers the provider's end-session
 * address with the session's ID token as the hint.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ZOidcSettings, type TOidcSettings } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { ExternalSession } from '../../db/schema';
import { ApiError, badRequest } from '../../http/errors';
import { authorizationRequest, completeAuthorization, configuration, endSessionUrl, OidcError, personOf, type AuthorizationChecks } from '../../identity/oidc';
import { putFlow, takeFlow } from './flows';
import type { RedirectFlow, RedirectProtocol } from './protocol-types';
import { loadProvider, providerUrls, type LoadedProvider } from './providers';
import { failRedirect, finishRedirect, sameBrowser, unavailable } from './redirect';

/** How long a person may take at the provider before coming back. */
const FLOW_SECONDS = 600;

const flowKey = (state: string) => `oidc:${state}`;

/** Without a public address there is no redirect URI to register: the provider cannot be used. */
export const noPublicAddress = () =>
  badRequest('identity_public_url_missing', 'OpenID Connect and SAML need the portal\'s public address (PUBLIC_URL): the provider sends people back there');

function settingsOf(provider: LoadedProvider): TOidcSettings {
  const parsed = ZOidcSettings.safeParse(provider.settings);
  if (!parsed.success) throw badRequest('identity_sign_in_failed', 'The provider\'s settings are incomplete');
  return parsed.data;
}

const clientSettings = (provider: LoadedProvider, s: TOidcSettings) => ({ issuer: s.issuer, clientId: s.client_id, clientSecret: provider.secretPlain });

function callbackOf(ctx: AppContext, provider: LoadedProvider): string {
  const callback = providerUrls(ctx, provider).callback;
  if (!callback) throw noPublicAddress();
  return callback;
}

type StoredFlow = AuthorizationChecks & { test: boolean; categoryId: string | null; browser: string | null };

export const oidcProtocol: RedirectProtocol = {
  async begin(ctx, provider, flow: RedirectFlow) {
    const redirectUri = callbackOf(ctx, provider);
    const settings = settingsOf(provider);
    const config = await configuration(clientSettings(provider, settings));
    const { url, checks } = await authorizationRequest(config, { redirectUri, scopes: settings.scopes });
    const stored: StoredFlow = { ...checks, test: flow.test, categoryId: flow.categoryId ?? null, browser: flow.browser ?? null };
    await putFlow(ctx, flowKey(checks.state), provider.id, stored, FLOW_SECONDS);
    return url;
  },

  async logout(ctx, provider, external: ExternalSession) {
    const base = ctx.config.publicUrl?.replace(/\/$/, '');
    if (!base) return undefined;
    const config = await configuration(clientSettings(provider, settingsOf(provider)));
    return endSessionUrl(config, { idToken: external.idToken, postLogoutRedirectUri: `${base}/login` });
  },

  async routes(app: FastifyInstance, ctx: AppContext) {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.get(
      '/oidc/callback/:id',
      {
        schema: {
          params: z.object({ id: z.string().min(1).max(64) }),
          // The provider's answer: a code and the state, or an error (RFC 6749 §4.1.2); others (iss, session_state) pass on.
          querystring: z
            .object({
              state: z.string().max(512).optional(),
              code: z.string().max(4096).optional(),
              error: z.string().max(256).optional(),
              error_description: z.string().max(2048).optional(),
              iss: z.string().max(512).optional(),
            })
            .catchall(z.string().max(4096)),
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const { state, error } = request.query;
        // The flow is spent first, whatever follows: a replayed callback finds nothing.
        const flow = state ? ((await takeFlow(ctx, flowKey(state), id)) as StoredFlow | undefined) : undefined;
        const provider = await loadProvider(ctx, id);
        if (!provider || provider.kind !== 'oidc' || (!provider.enabled && !flow?.test)) {
          return failRedirect(reply, new ApiError('not_found', 'identity_provider_not_found', 'Sign-in provider not found'));
        }
        if (error) {
          // The provider's own refusal (access_denied, login_required…): its code is no secret.
          ctx.log.warn({ provider: provider.name, error: error.slice(0, 64) }, 'identity provider answered an error');
          return failRedirect(reply, new ApiError('forbidden', 'identity_sign_in_failed', 'The provider refused the sign-in'));
        }
        if (!flow) {
          ctx.log.warn({ provider: provider.name }, 'OpenID callback without a live flow (unknown, expired or replayed state)');
          return failRedirect(reply, new ApiError('bad_request', 'identity_flow_expired', 'That sign-in is over or was already used'));
        }
        if (!sameBrowser(request, flow.browser)) {
          ctx.log.warn({ provider: provider.name }, 'OpenID callback from another browser than the one that started the sign-in');
          return failRedirect(reply, new ApiError('bad_request', 'identity_flow_expired', 'That sign-in was started elsewhere'));
        }
        let claims: Record<string, unknown>;
        let idToken: string;
        try {
          const settings = settingsOf(provider);
          const config = await configuration(clientSettings(provider, settings));
          const query = new URLSearchParams(Object.entries(request.query).filter((e): e is [string, string] => typeof e[1] === 'string'));
          ({ claims, idToken } = await completeAuthorization(config, { redirectUri: callbackOf(ctx, provider), query, checks: flow }));
        } catch (err) {
          // What was wrong, never the code, a token or the secret (OidcError messages hold none).
          ctx.log.warn({ provider: provider.name, reason: err instanceof OidcError || err instanceof ApiError ? err.message : 'error' }, 'OpenID sign-in refused');
          if (err instanceof ApiError) return failRedirect(reply, err);
          return failRedirect(reply, err instanceof OidcError && err.reason === 'unreachable' ? unavailable(err) : err);
        }
        const identity = personOf(claims, settingsOf(provider).attributes);
        return finishRedirect(ctx, reply, provider, identity, {
          test: flow.test,
          categoryId: flow.categoryId ?? undefined,
          external: { providerId: provider.id, idToken },
          ip: request.ip,
        });
      },
    );
  },
};
