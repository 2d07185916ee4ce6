import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq, or } from 'drizzle-orm';
import { z } from 'zod';
import { disclaimerFor, LISTED_KIND, ZCategoryPublic, ZDisclaimer, ZLoginConfig, ZMaintenanceText, ZStatusBarAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { ApiError, notFound } from '../../http/errors';
import { authOf, inMaintenance, requireAuth } from '../../http/guard';
import { migrationOf } from '../migration/settings';
import { linkMailsPossible } from '../../auth/recovery';
import { bearerToken } from '../../auth/tokens';
import { findUserById } from '../../auth/passwords';
import { listedProviders } from '../../auth/providers';
import { enabledProviders, loginProviderView } from '../identity/providers';

type CategoryRow = typeof schema.categories.$inferSelect;
const categoryView = (c: CategoryRow) => ({
  id: c.id,
  name: c.name,
  description: c.description,
  custom_url_name: c.customUrlName,
  photo: c.photo,
  frontend: c.frontend,
});

/** Public and session-aware system calls: maintenance, categories, login configuration, disclaimer. */
export async function systemRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  /** The caller, when a valid session token came along; public calls work without one. */
  const optionalUser = async (request: FastifyRequest) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) return undefined;
    try {
      const claims = await ctx.tokens.verify(token);
      const session = await ctx.sessions.require(claims);
      return findUserById(ctx.db, session.userId);
    } catch {
      return undefined;
    }
  };

  const maintenanceFor = async (request: FastifyRequest) => {
    const user = await optionalUser(request);
    if (user) return inMaintenance(ctx, user);
    return (await ctx.settings.get('maintenance')).enabled;
  };

  r.get('/maintenance', { schema: { response: { 200: z.boolean() } } }, async (request) => maintenanceFor(request));

  r.get('/maintenance/text/frontend', { schema: { response: { 200: ZMaintenanceText, 204: z.null() } } }, async (request, reply) => {
    if (!(await maintenanceFor(request))) return reply.code(204).send(null);
    const m = await ctx.settings.get('maintenance');
    return { title: m.title, body: m.body, enabled: true };
  });

  r.get('/check', async (request) => {
    if (await maintenanceFor(request)) throw new ApiError('service_unavailable', 'maintenance', 'The service is under maintenance');
    return {};
  });

  // The caller's provider decides the migration settings it carries; null when the bar is off.
  r.get(
    '/notifications/status_bar',
    { preHandler: requireAuth(ctx, { duringMaintenance: true }), schema: { response: { 200: ZStatusBarAnswer } } },
    async (request) => {
      const bar = await ctx.settings.get('status_bar');
      if (!bar.enabled) return null;
      const migration = await migrationOf(ctx, authOf(request).user.provider);
      return { text: bar.text, level: bar.level, migration_config: { import: migration.import, export: migration.export } };
    },
  );

  const listCategories = async () =>
    (await ctx.db.select().from(schema.categories).where(eq(schema.categories.frontend, true)).orderBy(schema.categories.name)).map(
      categoryView,
    );
  const categoriesAnswer = { schema: { response: { 200: z.array(ZCategoryPublic) } } };
  r.get('/categories', categoriesAnswer, listCategories);

  r.get(
    '/category/:id',
    { schema: { params: z.object({ id: z.string().max(64) }), response: { 200: ZCategoryPublic } } },
    async (request) => {
      const [c] = await ctx.db
        .select()
        .from(schema.categories)
        .where(or(eq(schema.categories.id, request.params.id), eq(schema.categories.customUrlName, request.params.id)));
      if (!c) throw notFound('category_not_found', 'Category not found');
      return categoryView(c);
    },
  );

  r.get('/login_config', { schema: { response: { 200: ZLoginConfig } } }, async () => {
    const [cats, codes, login, identity] = await Promise.all([
      listCategories(),
      ctx.db.select({ code: schema.registrationCodes.code }).from(schema.registrationCodes).limit(1),
      ctx.settings.get('login'),
      enabledProviders(ctx),
    ]);
    const listed = listedProviders(['local', ...identity.map((x) => LISTED_KIND[x.kind])]);
    // The admin's sign-in page options (setting `login`): providers hidden, no categories select, a notice.
    // "Forgot password?" only where a reset link can be mailed (a mail server and a public address).
    return {
      providers: {
        all: { display_providers: listed.filter((p) => !login.hidden_providers.includes(p)) },
        form: { hide_forgot_password: !(await linkMailsPossible(ctx)) },
      },
      categories_select: cats.length > 1 && !login.hide_categories_select,
      signup: codes.length > 0,
      notification_cover: { enabled: login.notice.enabled, title: login.notice.title, description: login.notice.text },
      identity_providers: identity.filter((x) => x.kind !== 'ldap' && !login.hidden_providers.includes(LISTED_KIND[x.kind])).map(loginProviderView),
    };
  });

  // The text of the asked language (`?lang=ca` or the browser's first Accept-Language), else the default one.
  r.get(
    '/disclaimer',
    { schema: { querystring: z.object({ lang: z.string().max(16).optional() }), response: { 200: ZDisclaimer } } },
    async (request) => {
      const d = await ctx.settings.get('disclaimer');
      return disclaimerFor(d, request.query.lang ?? request.headers['accept-language']?.split(',')[0]?.trim());
    },
  );
}

/** The public category list also answers under /authentication for the login select. */
export async function publicCategoryRoutes(app: FastifyInstance, ctx: AppContext) {
  app.withTypeProvider<ZodTypeProvider>().get('/categories', { schema: { response: { 200: z.array(ZCategoryPublic) } } }, async () =>
    (await ctx.db.select().from(schema.categories).where(eq(schema.categories.frontend, true)).orderBy(schema.categories.name)).map(
      categoryView,
    ),
  );
}
