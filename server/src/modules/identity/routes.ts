/**
 * Directories and identity providers: the console's list and forms (admins), a test sign-in that shows what would
 * be created, the browser's start of a redirect sign-in (GET /authentication/login?provider=…), and the hooks the
 * sign-in form and steps use (auth/login-flow.ts SignInHooks).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { IDENTITY_KINDS, LISTED_KIND, ZIdentityPreview, ZIdentityProvider, ZIdentityProviderBody, type TIdentityKind, type TIdentityPreview } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { ExternalSession } from '../../db/schema';
import { audit, auditActorOf } from '../../audit/record';
import { ApiError, badRequest, notFound } from '../../http/errors';
import { requireAuth } from '../../http/guard';
import type { LoginResult, SignInHooks } from '../../auth/login-flow';
import { continueExternal, planSignIn, previewOf, signInExternal } from './external';
import { failRedirect, unavailable } from './redirect';
import type { ExternalIdentity } from './mapping';
import { peekFlow } from './flows';
import { PASSWORD_PROTOCOLS, REDIRECT_PROTOCOLS } from './protocols';
import { checkRules, enabledProviders, loadProvider, providerView, rowValues, type LoadedProvider } from './providers';

const p = schema.identityProviders;
const idParams = z.object({ id: z.string().min(1).max(64) });
const missing = () => notFound('identity_provider_not_found', 'Sign-in provider not found');

// The end of a redirect sign-in lives in redirect.ts (the protocols use it); named here too for callers of this file.
export { failRedirect, finishRedirect, unavailable } from './redirect';

/**
 * A person the directories of the category know by this name and password, signed in; null when none does.
 * When none does but one could not be reached, the answer is 503 identity_provider_unavailable (the person may
 * be one of that directory's: "wrong password" would mislead them); the sign-in limits count it as a failure.
 */
async function directoryLogin(ctx: AppContext, username: string, password: string, categoryId: string | undefined, ip: string): Promise<LoginResult | null> {
  let down = false;
  for (const kind of IDENTITY_KINDS) {
    const protocol = PASSWORD_PROTOCOLS[kind];
    if (!protocol) continue;
    for (const provider of await enabledProviders(ctx, { kind, categoryId })) {
      let identity: ExternalIdentity | null;
      try {
        identity = await protocol.authenticate(ctx, provider, username, password);
      } catch (err) {
        // A directory that is down: logged (never the password), and the next one is asked.
        ctx.log.warn({ provider: provider.name, err: { message: (err as Error).message } }, 'directory not reachable');
        down = true;
        continue;
      }
      if (identity) return signInExternal(ctx, provider, identity, { categoryId, ip });
    }
  }
  // Anyone may read this answer: the directory's address and error stay in the log.
  if (down) throw new ApiError('service_unavailable', 'identity_provider_unavailable', 'The directory cannot be reached: its accounts cannot sign in right now');
  return null;
}

export function identityHooks(ctx: AppContext): SignInHooks {
  return {
    directoryLogin: (username, password, categoryId, ip) => directoryLogin(ctx, username, password, categoryId, ip),
    continueExternal: (claims, categoryId) => continueExternal(ctx, claims, categoryId),
    logoutRedirect: async (external: ExternalSession) => {
      const provider = await loadProvider(ctx, external.providerId);
      const protocol = provider?.enabled ? REDIRECT_PROTOCOLS[provider.kind] : undefined;
      return provider && protocol?.logout ? protocol.logout(ctx, provider, external) : undefined;
    },
    listedKinds: async () => [...new Set((await enabledProviders(ctx)).map((x) => LISTED_KIND[x.kind]))],
  };
}

/** Public: the start of a redirect sign-in; the admin's console: providers, tests and previews. */
export async function identityAuthenticationRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // GET /authentication/login?provider=saml|oidc[&provider_id=…][&category_id=…]: the browser is sent to the provider.
  // Without provider_id (the original's clients), the first enabled provider of that kind for the category.
  r.get(
    '/login',
    { schema: { querystring: z.object({ provider: z.enum(['oidc', 'saml']), provider_id: z.string().max(64).optional(), category_id: z.string().max(64).optional() }) } },
    async (request, reply) => {
      const { provider: kind, provider_id: id, category_id: categoryId } = request.query;
      const provider = id ? await loadProvider(ctx, id) : (await enabledProviders(ctx, { kind, categoryId }))[0];
      const protocol = REDIRECT_PROTOCOLS[kind];
      if (!provider || !provider.enabled || provider.kind !== kind || !protocol) return failRedirect(reply, missing());
      try {
        return reply.redirect(await protocol.begin(ctx, provider, { categoryId: provider.categoryId ?? categoryId, test: false }), 303);
      } catch (err) {
        ctx.log.warn({ provider: provider.name, err: { message: (err as Error).message } }, 'identity provider not reachable');
        return failRedirect(reply, unavailable(err));
      }
    },
  );
  for (const protocol of Object.values(REDIRECT_PROTOCOLS)) await protocol.routes(app, ctx);
}

export async function identityAdminRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });
  const db = ctx.db;

  r.get('/admin/identity-providers', { preHandler: adminOnly, schema: { response: { 200: z.array(ZIdentityProvider) } } }, async () =>
    (await db.select().from(p).orderBy(desc(p.createdAt), p.id)).map((row) => providerView(ctx, row)),
  );

  r.post('/admin/identity-providers', { preHandler: adminOnly, schema: { body: ZIdentityProviderBody, response: { 200: ZIdentityProvider } } }, async (request) => {
    await checkRules(db, request.body);
    const [row] = await db.insert(p).values({ id: randomUUID(), ...rowValues(ctx, request.body) }).returning();
    await audit(db, auditActorOf(request), { action: 'identity_provider.create', objectType: 'identity_provider', objectId: row!.id, objectName: row!.name, categoryId: row!.categoryId, detail: { kind: row!.kind } });
    return providerView(ctx, row!);
  });

  r.put('/admin/identity-providers/:id', { preHandler: adminOnly, schema: { params: idParams, body: ZIdentityProviderBody, response: { 200: ZIdentityProvider } } }, async (request) => {
    const [before] = await db.select().from(p).where(eq(p.id, request.params.id));
    if (!before) throw missing();
    if (before.kind !== request.body.kind) throw badRequest('identity_kind_fixed', 'A provider keeps its kind');
    await checkRules(db, request.body);
    const [row] = await db.update(p).set(rowValues(ctx, request.body)).where(eq(p.id, before.id)).returning();
    await audit(db, auditActorOf(request), {
      action: 'identity_provider.update', objectType: 'identity_provider', objectId: row!.id, objectName: row!.name, categoryId: row!.categoryId,
      detail: { kind: row!.kind, enabled: row!.enabled, rules: row!.rules.length, secret_changed: request.body.secret !== undefined },
    });
    return providerView(ctx, row!);
  });

  r.delete('/admin/identity-providers/:id', { preHandler: adminOnly, schema: { params: idParams } }, async (request) => {
    const [row] = await db.delete(p).where(eq(p.id, request.params.id)).returning();
    if (!row) throw missing();
    await audit(db, auditActorOf(request), { action: 'identity_provider.delete', objectType: 'identity_provider', objectId: row.id, objectName: row.name, categoryId: row.categoryId, detail: { kind: row.kind } });
    return {};
  });

  // A test: LDAP signs the given account in and answers what would happen; OIDC and SAML answer the provider's
  // address to open (their callback leads the browser back to the console with the preview). Nothing is created.
  r.post(
    '/admin/identity-providers/:id/test',
    {
      preHandler: adminOnly,
      schema: {
        params: idParams,
        body: z.object({ username: z.string().trim().min(1).max(128).optional(), password: z.string().min(1).max(512).optional() }).nullish(),
        response: { 200: z.object({ preview: ZIdentityPreview.optional(), url: z.string().optional() }) },
      },
    },
    async (request) => {
      const provider = await loadProvider(ctx, request.params.id);
      if (!provider) throw missing();
      const kind: TIdentityKind = provider.kind;
      const password = PASSWORD_PROTOCOLS[kind];
      if (password) {
        const { username, password: secret } = request.body ?? {};
        if (!username || !secret) throw badRequest('missing_required_data', 'A user name and password to test with');
        let identity: ExternalIdentity | null;
        try {
          identity = await password.authenticate(ctx, provider, username, secret);
        } catch (err) {
          throw unavailable(err);
        }
        if (!identity) throw badRequest('login_failed', 'The directory does not know that name and password');
        const preview: TIdentityPreview = previewOf(identity, await planSignIn(ctx, provider, identity));
        return { preview };
      }
      const redirect = REDIRECT_PROTOCOLS[kind];
      if (!redirect) throw badRequest('identity_provider_not_found', 'That kind of provider cannot be tested here');
      try {
        return { url: await redirect.begin(ctx, provider, { test: true, categoryId: provider.categoryId ?? undefined }) };
      } catch (err) {
        throw unavailable(err);
      }
    },
  );

  r.get(
    '/admin/identity-providers/previews/:id',
    { preHandler: adminOnly, schema: { params: idParams, response: { 200: ZIdentityPreview } } },
    async (request) => {
      const data = await peekFlow(ctx, `preview:${request.params.id}`);
      if (!data) throw notFound('not_found', 'That test is over');
      return ZIdentityPreview.parse(data);
    },
  );
}

