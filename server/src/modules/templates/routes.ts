import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZAllowedTable,
  ZAllowedTableItem,
  ZAllowedTableQuery,
  ZDuplicateTemplate,
  ZNewTemplate,
  ZTemplate,
  ZTemplateToDesktop,
  ZTemplateTree,
  ZTemplateUpdate,
  type TRole,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { notFound } from '../../http/errors';
import { actorOf } from '../../auth/caller';
import { registerUsagePart } from '../quotas/applied';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { domainFor } from '../domains/access';
import { deleteTemplate, duplicateTemplate, manageableTemplate, templateToDesktop, updateTemplate } from './actions';
import { allowedTable } from './allowed-table';
import { startTemplateCreation, templateJobHandler } from './create';
import { templateTree } from './tree';
import { templateUsage } from './usage';
import { ownTemplates, templateViews } from './view';

registerUsagePart(templateUsage);

const PRIVILEGED: TRole[] = ['admin', 'manager', 'advanced'];
const ZId = z.object({ id: z.string().min(1).max(64) });
const ZIdAnswer = z.object({ id: z.string() });

/** Templates (spec 001 §2 /templates, §7 calls): admin, manager and advanced. */
export async function templateRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx, { roles: PRIVILEGED });
  ctx.jobs.register(templateJobHandler(ctx, lifecycle));

  const create = {
    preHandler: auth,
    schema: { body: ZNewTemplate, response: { 200: ZIdAnswer } },
  };
  const createHandler = async (request: { body: z.infer<typeof ZNewTemplate> } & Parameters<typeof domainFor>[1]) => {
    const desktop = await domainFor(ctx, request, request.body.desktop_id);
    if (desktop.kind !== 'desktop') throw notFound('desktop_not_found', 'Desktop not found');
    return startTemplateCreation(ctx, lifecycle, authOf(request).user, desktop, request.body);
  };
  r.post('/template', create, createHandler);
  r.post('/template/', create, createHandler);

  r.get('/user/templates', { preHandler: auth, schema: { response: { 200: z.array(ZTemplate) } } }, async (request) =>
    ownTemplates(ctx.db, await actorOf(ctx.db, authOf(request).user)),
  );

  r.get('/template/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZTemplate } } }, async (request) => {
    const { user } = authOf(request);
    const row = await manageableTemplate(ctx, user, request.params.id);
    const [view] = await templateViews(ctx.db, [row], await actorOf(ctx.db, user));
    return view!;
  });

  r.post('/template/duplicate/:id', { preHandler: auth, schema: { params: ZId, body: ZDuplicateTemplate, response: { 200: ZIdAnswer } } }, async (request) =>
    duplicateTemplate(ctx, authOf(request).user, request.params.id, request.body),
  );

  r.put('/template/update', { preHandler: auth, schema: { body: ZTemplateUpdate, response: { 200: ZTemplate } } }, async (request) => {
    const { user } = authOf(request);
    const row = await updateTemplate(ctx, lifecycle, user, request.body);
    const [view] = await templateViews(ctx.db, [row], await actorOf(ctx.db, user));
    return view!;
  });

  r.get('/template/tree/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZTemplateTree } } }, async (request) => {
    const { user } = authOf(request);
    const row = await manageableTemplate(ctx, user, request.params.id);
    const { rows: _rows, ...tree } = await templateTree(ctx.db, row, await actorOf(ctx.db, user));
    return tree;
  });

  r.delete('/template/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZIdAnswer } } }, async (request) =>
    deleteTemplate(ctx, lifecycle, authOf(request).user, request.params.id),
  );

  r.post('/template/to/desktop', { preHandler: auth, schema: { body: ZTemplateToDesktop, response: { 200: ZIdAnswer } } }, async (request) =>
    templateToDesktop(ctx, authOf(request).user, request.body.template_id, request.body.name),
  );

  // The sharing picker: whom the caller may share templates (and media) with.
  if (!app.hasRoute({ method: 'POST', url: `${app.prefix}/allowed/table/:table` })) {
    r.post(
      '/allowed/table/:table',
      { preHandler: auth, schema: { params: z.object({ table: ZAllowedTable }), body: ZAllowedTableQuery, response: { 200: z.array(ZAllowedTableItem) } } },
      async (request) => allowedTable(ctx.db, authOf(request).user, request.params.table, request.body),
    );
  }
}
