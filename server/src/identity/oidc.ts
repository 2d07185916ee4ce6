/**
 * OpenID Connect, the protocol client (openid-client v6): discovery of the issuer (cached for a bounded time, a
 * provider that is down fails within a bounded time), the authorization request of the code flow with PKCE (S256),
 * state and nonce, the callback's code exchanged and its ID token validated by the library (signature through the
 * issuer's JWKS, iss, aud, exp, nonce; plus iat not in the future here), claims from the ID token and userinfo, and
 * the RP-initiated logout address. Knows nothing of the portal's rules (modules/identity wraps it).
 */
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import type { ExternalIdentity } from './person';

/** How long a discovered configuration (and the JWKS it caches) is used before the issuer is asked again. */
export const DISCOVERY_TTL_MS = 10 * 60_000;
/** Each request to the provider (discovery, token, userinfo) gives up after this many seconds. */
export const REQUEST_TIMEOUT_SECONDS = 5;
/**
 * Clocks may differ this much (seconds) between the provider and us: an ID token expired less than this ago, or
 * issued less than this in the future, is still taken. One minute covers NTP-synced machines with room to spare
 * and keeps a stolen, expired token useless.
 */
export const CLOCK_TOLERANCE_SECONDS = 60;

export type OidcClientSettings = {
  issuer: string;
  clientId: string;
  /** client_secret_basic (or _post when the provider takes only that); null: a public client (PKCE only). */
  clientSecret: string | null;
};

/** Where a person's user name, name, e-mail, photo and groups come from: claim names. */
export type OidcAttributes = { username: string; name: string; email: string; photo: string; groups: string };

/** A person as the provider describes them. */
export type OidcPerson = ExternalIdentity;

/** A failure of the protocol: `reason` is safe to log (no token, code or secret). */
export class OidcError extends Error {
  constructor(readonly reason: 'unreachable' | 'rejected', message: string) {
    super(message);
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

const cache = new Map<string, { at: number; config: Promise<client.Configuration> }>();

const cacheKey = (s: OidcClientSettings) => createHash('sha256').update(JSON.stringify([s.issuer, s.clientId, s.clientSecret])).digest('hex');

/**
 * A message of the library's error, safe to log: its code and message, and its cause's message (the library's
 * fixed texts, like `unexpected ID Token "nonce" claim value`), never the cause's data (claims, a response body).
 */
export const safeMessage = (err: unknown) => {
  const e = err as { code?: string; message?: string; error?: string; cause?: unknown };
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  return [e.code, e.error, e.message, cause].filter(Boolean).join(': ').slice(0, 300) || 'error';
};

/**
 * The client configuration for the provider, from its discovery document (cached for DISCOVERY_TTL_MS per issuer,
 * client and secret). Plain http is taken only for a loopback issuer (a provider on this machine, and the tests).
 */
export async function configuration(s: OidcClientSettings, now = Date.now()): Promise<client.Configuration> {
  const key = cacheKey(s);
  const hit = cache.get(key);
  if (hit && now - hit.at < DISCOVERY_TTL_MS) return hit.config;
  const issuer = new URL(s.issuer);
  const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
  const pending = (async () => {
    try {
      // The authentication method follows what the provider offers (basic first, as the specification's default).
      const probe = await client.discovery(issuer, s.clientId, undefined, client.None(), {
        timeout: REQUEST_TIMEOUT_SECONDS,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      });
      const methods = probe.serverMetadata().token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
      const auth = !s.clientSecret
        ? client.None()
        : methods.includes('client_secret_basic') || !methods.includes('client_secret_post')
          ? client.ClientSecretBasic(s.clientSecret)
          : client.ClientSecretPost(s.clientSecret);
      const config = new client.Configuration(probe.serverMetadata(), s.clientId, { [client.clockTolerance]: CLOCK_TOLERANCE_SECONDS }, auth);
      config.timeout = REQUEST_TIMEOUT_SECONDS;
      if (insecure) client.allowInsecureRequests(config);
      // The ID token's signature is checked against the issuer's JWKS too (the library would otherwise trust the
      // token endpoint's TLS alone, as OpenID Connect Core §3.1.3.7 allows).
      client.enableNonRepudiationChecks(config);
      return config;
    } catch (err) {
      throw new OidcError('unreachable', `discovery of ${issuer.origin} failed: ${safeMessage(err)}`);
    }
  })();
  cache.set(key, { at: now, config: pending });
  // A failure is not kept: the next sign-in asks again.
  pending.catch(() => cache.get(key)?.config === pending && cache.delete(key));
  return pending;
}

/** Forgets every cached discovery (tests; a provider's settings changed). */
export const forgetConfigurations = () => cache.clear();

/** What the callback must check, kept by the caller until the provider sends the person back (never in the browser). */
export type AuthorizationChecks = { state: string; nonce: string; codeVerifier: string };

/** The provider's address to send the browser to, and what to check on its return. */
export async function authorizationRequest(config: client.Configuration, opts: { redirectUri: string; scopes: string }): Promise<{ url: string; checks: AuthorizationChecks }> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const checks = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier };
  const scopes = new Set(opts.scopes.split(/\s+/).filter(Boolean));
  scopes.add('openid');
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: opts.redirectUri,
    response_type: 'code',
    scope: [...scopes].join(' '),
    state: checks.state,
    nonce: checks.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, checks };
}

/**
 * The callback: `query` (the provider's answer) checked against `checks`, the code exchanged (with the PKCE
 * verifier) and the ID token validated; the person's claims, the ID token's merged with userinfo's (same `sub`).
 */
export async function completeAuthorization(
  config: client.Configuration,
  opts: { redirectUri: string; query: URLSearchParams; checks: AuthorizationChecks },
): Promise<{ claims: Record<string, unknown>; idToken: string }> {
  const current = new URL(opts.redirectUri);
  current.search = opts.query.toString();
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: opts.checks.codeVerifier,
      expectedState: opts.checks.state,
      expectedNonce: opts.checks.nonce,
      idTokenExpected: true,
    });
  } catch (err) {
    const e = err as { name?: string };
    throw new OidcError(e.name === 'TypeError' || /fetch failed|timeout|aborted/i.test(safeMessage(err)) ? 'unreachable' : 'rejected', safeMessage(err));
  }
  const idClaims = tokens.claims();
  if (!idClaims || !tokens.id_token) throw new OidcError('rejected', 'no ID token in the token response');
  // The library checks exp (with the tolerance) but not an iat in the future: a token from a provider whose clock
  // is ahead by more than the tolerance is refused too.
  if (typeof idClaims.iat === 'number' && idClaims.iat > Math.floor(Date.now() / 1000) + CLOCK_TOLERANCE_SECONDS) {
    throw new OidcError('rejected', 'the ID token was issued in the future (clock skew beyond the allowance)');
  }
  let userinfo: Record<string, unknown> = {};
  if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
    try {
      userinfo = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
    } catch (err) {
      // The claims of a userinfo from someone else are never taken; a userinfo that failed leaves the ID token's.
      if (/subject/i.test(safeMessage(err))) throw new OidcError('rejected', safeMessage(err));
      userinfo = {};
    }
  }
  return { claims: { ...userinfo, ...idClaims }, idToken: tokens.id_token };
}

/** The provider's end-session address for a session it opened (RP-initiated logout), when it has one. */
export function endSessionUrl(config: client.Configuration, opts: { idToken?: string; postLogoutRedirectUri: string }): string | undefined {
  if (!config.serverMetadata().end_session_endpoint) return undefined;
  return client.buildEndSessionUrl(config, {
    post_logout_redirect_uri: opts.postLogoutRedirectUri,
    ...(opts.idToken ? { id_token_hint: opts.idToken } : {}),
  }).href;
}

/** A claim's values as strings (a list, a value, or none: objects are left out). */
function strings(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.filter((v) => ['string', 'number', 'boolean'].includes(typeof v)).map(String);
}

/** The person from the claims, through the provider's claim names; `uid` is always `sub`. */
export function personOf(claims: Record<string, unknown>, attributes: OidcAttributes): OidcPerson {
  const first = (name: string) => (name ? (strings(claims[name])[0] ?? '') : '');
  const uid = String(claims.sub);
  const groupsClaim = attributes.groups ? claims[attributes.groups] : undefined;
  // Groups as a list, or one string of names separated by commas or spaces (some providers send that).
  const groups = typeof groupsClaim === 'string' ? groupsClaim.split(/[\s,]+/).filter(Boolean) : strings(groupsClaim);
  return {
    uid,
    username: (first(attributes.username) || first('preferred_username') || first('email') || uid).slice(0, 128),
    name: first(attributes.name).slice(0, 256),
    email: first(attributes.email).slice(0, 256),
    photo: first(attributes.photo).slice(0, 2048),
    groups,
    attributes: Object.fromEntries(Object.entries(claims).map(([k, v]) => [k, strings(v)]).filter(([, v]) => v.length > 0)),
  };
}
