/**
 * SAML 2.0 sign-in (the protocol behind `kind: 'saml'` providers; the messages are src/identity/saml.ts's):
 * - our SP per provider: entity id = its metadata's address, ACS and SLO under /authentication/saml/…/{id}, all
 *   from the public address; its signing key pair made on first use and kept sealed as the provider's secret;
 * - the IdP from settings.metadata_url (fetched within a bounded time, kept a few minutes) or settings.metadata_xml;
 * - sign-in: an AuthnRequest (redirect binding) whose ID is kept as a flow of this provider; the ACS takes a signed
 *   Response that answers one (InResponseTo), once (the assertion's ID is remembered until it expires);
 * - logout: ours to the IdP (the `redirect` of POST /authentication/logout), and the IdP's to us (its sessions here end).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import { ZSamlSettings, type TSamlSettings } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { ExternalSession } from '../../db/schema';
import { notFound } from '../../http/errors';
import { audit } from '../../audit/record';
import { sealSecret } from '../../auth/secret-box';
import {
  fetchMetadata,
  generateKeyPair,
  identityProvider,
  loginRequest,
  logoutRequest,
  logoutResponse,
  NAMEID_TRANSIENT,
  parseKeyPair,
  readLoginResponse,
  readLogoutMessage,
  SamlRefused,
  serviceProvider,
  type KeyPair,
  type SamlAssertion,
  type SpUrls,
} from '../../identity/saml';
import { firstUse, putFlow, takeFlow } from './flows';
import type { ExternalIdentity } from './mapping';
import type { RedirectFlow, RedirectProtocol } from './protocol-types';
import { enabledProviders, loadProvider, providerUrls, type LoadedProvider } from './providers';
import { failRedirect, finishRedirect, unavailable } from './redirect';

const p = schema.identityProviders;
/** How long the IdP may take to send the person back (the AuthnRequest's flow) or to answer our LogoutRequest. */
const REQUEST_SECONDS = 900;
/** How long a fetched IdP metadata is used before it is fetched again. */
const METADATA_CACHE_MS = 300_000;
/** A seen assertion is remembered at least this long (and until it expires, with the clock allowance). */
const MIN_REPLAY_SECONDS = 600;

const missing = () => notFound('identity_provider_not_found', 'Sign-in provider not found');

/** Our SP's addresses for a provider, or an error when no public address is configured. */
export function spUrls(ctx: AppContext, provider: Pick<LoadedProvider, 'id' | 'kind'>): SpUrls {
  const urls = providerUrls(ctx, provider);
  if (!urls.callback || !urls.metadata) throw new Error('SAML needs the public address (PUBLIC_URL) to be configured');
  return { entityId: urls.metadata, metadata: urls.metadata, acs: urls.callback, slo: urls.callback.replace('/saml/acs/', '/saml/slo/') };
}

/**
 * The provider's key pair: the sealed secret's, else made now and stored (when two processes make one at once,
 * the first stored wins and the other reads it back).
 */
async function keysOf(ctx: AppContext, provider: LoadedProvider): Promise<KeyPair> {
  const pair = parseKeyPair(provider.secretPlain);
  if (pair) return pair;
  if (provider.secretPlain) ctx.log.warn({ provider: provider.name }, 'the SAML provider\'s secret is not a key and certificate (PEM): a new key pair replaces it');
  const pem = await generateKeyPair(new URL(ctx.config.publicUrl ?? 'http://localhost').hostname);
  const sealed = sealSecret(ctx.config.secret, pem);
  const stored = await ctx.db
    .update(p)
    .set({ secret: sealed })
    .where(and(eq(p.id, provider.id), provider.secret === null ? isNull(p.secret) : eq(p.secret, provider.secret)))
    .returning({ id: p.id });
  if (stored.length === 0) {
    const again = parseKeyPair((await loadProvider(ctx, provider.id))?.secretPlain ?? null);
    if (!again) throw new Error('The SAML key pair could not be stored');
    return again;
  }
  ctx.log.info({ provider: provider.name }, 'SAML signing key pair made for the provider');
  Object.assign(provider, { secret: sealed, secretPlain: pem });
  return parseKeyPair(pem)!;
}

const settingsOf = (provider: LoadedProvider): TSamlSettings => ZSamlSettings.parse(provider.settings);

/** IdP metadata by provider: what it was read from (address or text, and the provider's last change) and when. */
const idpCache = new Map<string, { source: string; at: number; idp: ReturnType<typeof identityProvider> }>();

/** The provider's IdP (throws when its metadata cannot be had: the IdP is then "unavailable"). */
async function idpOf(provider: LoadedProvider) {
  const settings = settingsOf(provider);
  const source = `${provider.updatedAt.getTime()}|${settings.metadata_url || settings.metadata_xml}`;
  const cached = idpCache.get(provider.id);
  if (cached && cached.source === source && (!settings.metadata_url || Date.now() - cached.at < METADATA_CACHE_MS)) return cached.idp;
  if (!settings.metadata_url && !settings.metadata_xml.trim()) throw new Error('The provider has no IdP metadata (address or file)');
  const xml = settings.metadata_url ? await fetchMetadata(settings.metadata_url) : settings.metadata_xml;
  const idp = identityProvider(xml);
  idpCache.set(provider.id, { source, at: Date.now(), idp });
  return idp;
}

async function entitiesOf(ctx: AppContext, provider: LoadedProvider) {
  const urls = spUrls(ctx, provider);
  const sp = serviceProvider(urls, await keysOf(ctx, provider));
  return { urls, sp, idp: await idpOf(provider) };
}

/** The person an assertion names: the NameID is the uid (a transient one changes each time: then the user name). */
export function identityOf(settings: TSamlSettings, a: SamlAssertion): ExternalIdentity {
  const values = (name: string) => {
    if (!name) return [];
    const key = Object.keys(a.attributes).find((k) => k.toLowerCase() === name.toLowerCase());
    return key ? a.attributes[key]!.filter((v) => v !== '') : [];
  };
  const first = (name: string) => values(name)[0] ?? '';
  const username = first(settings.attributes.username) || a.nameId;
  return {
    uid: a.nameIdFormat === NAMEID_TRANSIENT ? username : a.nameId,
    username,
    name: first(settings.attributes.name),
    email: first(settings.attributes.email),
    photo: first(settings.attributes.photo),
    groups: values(settings.attributes.groups),
    attributes: a.attributes,
  };
}

const flowId = (requestId: string) => `saml:${requestId}`;
const logoutFlowId = (requestId: string) => `saml-logout:${requestId}`;

async function begin(ctx: AppContext, provider: LoadedProvider, flow: RedirectFlow): Promise<string> {
  const { sp, idp } = await entitiesOf(ctx, provider);
  const { id, url } = loginRequest(sp, idp);
  await putFlow(ctx, flowId(id), provider.id, { categoryId: flow.categoryId ?? null, test: flow.test }, REQUEST_SECONDS);
  return url;
}

async function logout(ctx: AppContext, provider: LoadedProvider, external: ExternalSession): Promise<string | undefined> {
  if (!external.nameId) return undefined;
  const { sp, idp } = await entitiesOf(ctx, provider);
  const { id, url } = logoutRequest(sp, idp, { nameId: external.nameId, nameIdFormat: external.nameIdFormat, sessionIndex: external.sessionIndex });
  await putFlow(ctx, logoutFlowId(id), provider.id, {}, REQUEST_SECONDS);
  return url;
}

/** A SAML provider by id (any state: the admin gives the IdP our metadata before turning it on). */
async function samlProvider(ctx: AppContext, id: string) {
  const provider = await loadProvider(ctx, id);
  return provider?.kind === 'saml' ? provider : undefined;
}

const idParams = z.object({ id: z.string().min(1).max(64) });
const ZAcsBody = z.object({ SAMLResponse: z.string().min(1).max(1_000_000), RelayState: z.string().max(2048).optional() });
const ZSloFields = z.object({
  SAMLRequest: z.string().max(200_000).optional(),
  SAMLResponse: z.string().max(200_000).optional(),
  RelayState: z.string().max(2048).optional(),
  SigAlg: z.string().max(256).optional(),
  Signature: z.string().max(4096).optional(),
});

async function routes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  const metadata = async (reply: FastifyReply, provider: LoadedProvider | undefined) => {
    if (!provider) throw missing();
    let sp: ReturnType<typeof serviceProvider>;
    try {
      sp = serviceProvider(spUrls(ctx, provider), await keysOf(ctx, provider));
    } catch (err) {
      // No public address configured, or no key pair could be made: said, not a 500.
      ctx.log.warn({ provider: provider.name, err: { message: (err as Error).message } }, 'SAML metadata not available');
      throw unavailable(err);
    }
    return reply.type('application/samlmetadata+xml; charset=utf-8').header('cache-control', 'no-cache').send(sp.getMetadata());
  };
  // Our SP's metadata, to give the IdP: entity id, ACS, SLO and the signing certificate.
  /** The IdP (its metadata) could not be reached: said in the log (never more than the error's message), and to the person. */
  const notReachable = (provider: LoadedProvider, reply: FastifyReply, err: unknown) => {
    ctx.log.warn({ provider: provider.name, err: { message: (err as Error).message } }, 'identity provider not reachable');
    return failRedirect(reply, unavailable(err));
  };

  r.get('/saml/metadata/:id', { schema: { params: idParams } }, async (request, reply) => metadata(reply, await samlProvider(ctx, request.params.id)));
  // The original's address: the first SAML provider's.
  r.get('/saml/metadata', async (_request, reply) => metadata(reply, (await enabledProviders(ctx, { kind: 'saml' }))[0]));

  // The original's start of a SAML sign-in: the first enabled SAML provider (of the category, when given).
  r.get('/saml/login', { schema: { querystring: z.object({ category_id: z.string().max(64).optional() }) } }, async (request, reply) => {
    const provider = (await enabledProviders(ctx, { kind: 'saml', categoryId: request.query.category_id }))[0];
    if (!provider) return failRedirect(reply, missing());
    try {
      return reply.redirect(await begin(ctx, provider, { categoryId: provider.categoryId ?? request.query.category_id, test: false }), 303);
    } catch (err) {
      return notReachable(provider, reply, err);
    }
  });

  // The IdP's Response (HTTP-POST binding).
  r.post('/saml/acs/:id', { schema: { params: idParams, body: ZAcsBody } }, async (request, reply) => {
    const provider = await samlProvider(ctx, request.params.id);
    if (!provider?.enabled) return failRedirect(reply, missing());
    let entities: Awaited<ReturnType<typeof entitiesOf>>;
    try {
      entities = await entitiesOf(ctx, provider);
    } catch (err) {
      return notReachable(provider, reply, err);
    }
    const refuse = (reason: string) => {
      // Why, for the admin; never the message, the assertion or the person's attributes.
      ctx.log.warn({ provider: provider.name, reason }, 'SAML response refused');
      return failRedirect(reply, undefined);
    };
    let assertion: SamlAssertion;
    try {
      assertion = await readLoginResponse(entities.sp, entities.idp, request.body.SAMLResponse, entities.urls);
    } catch (err) {
      return refuse(err instanceof SamlRefused ? err.reason : 'unreadable');
    }
    const keepSeconds = Math.max(MIN_REPLAY_SECONDS, Math.ceil((assertion.notOnOrAfter.getTime() - Date.now()) / 1000) + 300);
    if (!(await firstUse(ctx, `saml:${provider.id}:${assertion.assertionId}`, provider.id, keepSeconds))) return refuse('replayed');
    // It must answer an AuthnRequest this provider sent (unsolicited responses are not taken).
    const flow = await takeFlow(ctx, flowId(assertion.inResponseTo), provider.id);
    if (!flow) return refuse('unknown-request');
    const identity = identityOf(settingsOf(provider), assertion);
    return finishRedirect(ctx, reply, provider, identity, {
      categoryId: typeof flow.categoryId === 'string' ? flow.categoryId : undefined,
      test: flow.test === true,
      ip: request.ip,
      external: { providerId: provider.id, nameId: assertion.nameId, nameIdFormat: assertion.nameIdFormat, sessionIndex: assertion.sessionIndex },
    });
  });

  // Single logout: the IdP's answer to ours (→ the sign-in page), or its own request (the person's sessions here end).
  const slo = async (
    provider: LoadedProvider | undefined,
    binding: 'redirect' | 'post',
    fields: z.infer<typeof ZSloFields>,
    rawQuery: string,
    ip: string,
    reply: FastifyReply,
  ) => {
    if (!provider || (!fields.SAMLRequest && !fields.SAMLResponse)) return reply.redirect('/login', 303);
    let entities: Awaited<ReturnType<typeof entitiesOf>>;
    try {
      entities = await entitiesOf(ctx, provider);
    } catch (err) {
      return notReachable(provider, reply, err);
    }
    let message: Awaited<ReturnType<typeof readLogoutMessage>>;
    try {
      message = await readLogoutMessage(entities.sp, entities.idp, binding, fields, rawQuery);
    } catch (err) {
      ctx.log.warn({ provider: provider.name, reason: err instanceof SamlRefused ? err.reason : 'unreadable' }, 'SAML logout message refused');
      return reply.redirect('/login', 303);
    }
    if (message.kind === 'response') {
      if (message.inResponseTo) await takeFlow(ctx, logoutFlowId(message.inResponseTo), provider.id);
      return reply.redirect('/login', 303);
    }
    const s = schema.sessions;
    const ended = await ctx.db
      .update(s)
      .set({ revokedAt: new Date() })
      .where(
        and(
          isNull(s.revokedAt),
          sql`${s.external}->>'providerId' = ${provider.id}`,
          sql`${s.external}->>'nameId' = ${message.nameId}`,
          message.sessionIndex ? sql`${s.external}->>'sessionIndex' = ${message.sessionIndex}` : undefined,
        ),
      )
      .returning({ id: s.id, userId: s.userId });
    ctx.log.info({ provider: provider.name, sessions: ended.length }, 'SAML logout from the IdP: sessions ended');
    // In the audit log as each person's sign-out, said to come from the IdP.
    for (const userId of new Set(ended.map((e) => e.userId))) {
      const [user] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, userId));
      if (!user) continue;
      await audit(ctx.db, { id: user.id, name: user.username, role: user.roleId, categoryId: user.categoryId, address: ip }, {
        action: 'auth.sign_out', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId,
        detail: { provider: provider.name, by: 'identity_provider' },
      });
    }
    return reply.redirect(logoutResponse(entities.sp, entities.idp, message.requestInfo, fields.RelayState), 303);
  };
  r.get('/saml/slo/:id', { schema: { params: idParams, querystring: ZSloFields } }, async (request, reply) =>
    slo(await samlProvider(ctx, request.params.id), 'redirect', request.query, request.url.split('?')[1] ?? '', request.ip, reply),
  );
  r.post('/saml/slo/:id', { schema: { params: idParams, body: ZSloFields } }, async (request, reply) =>
    slo(await samlProvider(ctx, request.params.id), 'post', request.body, '', request.ip, reply),
  );
}

export const samlProtocol: RedirectProtocol = { begin, logout, routes };
