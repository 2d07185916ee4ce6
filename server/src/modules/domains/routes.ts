import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ZCheckQuotaAnswer,
  ZDesktopImageChoice,
  ZDomainInfo,
  ZDomainUpdate,
  ZHardwareAllowed,
  ZInstallType,
  ZNewDesktop,
  ZNewDesktopAnswer,
  ZReservablesUpdate,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { findDomain } from '../shared/domains';
import { domainFor, readableDomain } from './access';
import { assertStudentMay } from '../deployments/access';
import { actorOf } from '../../auth/caller';
import { INSTALL_TYPES } from './catalog';
import { recreateDisk, setReservables, updateDomain } from './edit';
import { allowedHardware } from './hardware';
import { stockImages } from './images';
import { domainInfo } from './info';
import { createPersistentDesktop } from './new-desktop';
import { checkNewItemQuota } from '../storage/new-item-quota';

const ZId = z.object({ id: z.string().min(1).max(64) });

/** New desktops from templates, and editing a desktop's (or template's) hardware and settings. */
export async function domainRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);

  r.get('/user/hardware/allowed', { preHandler: auth, schema: { response: { 200: ZHardwareAllowed } } }, async (request) =>
    allowedHardware(ctx.db, authOf(request).user, ctx.engine.network.available),
  );

  r.get('/desktop/new/check_quota', { preHandler: auth, schema: { response: { 200: ZCheckQuotaAnswer } } }, async (request) => {
    await checkNewItemQuota(ctx.db, authOf(request).user, 'desktops');
    return {};
  });

  r.post('/persistent_desktop', { preHandler: auth, schema: { body: ZNewDesktop, response: { 200: ZNewDesktopAnswer } } }, async (request) =>
    createPersistentDesktop(ctx, lifecycle, authOf(request).user, request.body),
  );

  r.get('/domain/info/:id', { preHandler: auth, schema: { params: ZId, response: { 200: ZDomainInfo } } }, async (request) =>
    domainInfo(ctx.db, await readableDomain(ctx, request, request.params.id), authOf(request).user),
  );

  /** A domain the caller may change; a deployment's desktop only as far as the deployment lets its user. */
  const changeable = async (request: Parameters<typeof domainFor>[1], id: string, right: 'edit' | 'recreate') => {
    const row = await domainFor(ctx, request, id);
    await assertStudentMay(ctx.db, await actorOf(ctx.db, authOf(request).user), row, right);
    return row;
  };

  r.put('/domain/:id', { preHandler: auth, schema: { params: ZId, body: ZDomainUpdate, response: { 200: ZDomainInfo } } }, async (request) => {
    const row = await changeable(request, request.params.id, 'edit');
    const updated = await updateDomain(ctx, lifecycle, row, request.body);
    return domainInfo(ctx.db, updated, authOf(request).user);
  });

  r.put('/domain/reservables/:id', { preHandler: auth, schema: { params: ZId, body: ZReservablesUpdate, response: { 200: ZDomainInfo } } }, async (request) => {
    const row = await changeable(request, request.params.id, 'edit');
    const updated = await setReservables(ctx, lifecycle, row, request.body.vgpus);
    return domainInfo(ctx.db, updated, authOf(request).user);
  });

  r.post('/domain/:id/recreate_disk', { preHandler: auth, schema: { params: ZId, response: { 200: ZNewDesktopAnswer } } }, async (request) => {
    const row = await changeable(request, request.params.id, 'recreate');
    return recreateDisk(ctx, lifecycle, row);
  });

  // The stock covers, and the desktop's own upload when asked for one the caller may change.
  r.get(
    '/images/desktops',
    { preHandler: auth, schema: { querystring: z.object({ desktop_id: z.string().max(64).optional() }), response: { 200: z.array(ZDesktopImageChoice) } } },
    async (request) => {
      const list = stockImages();
      const id = request.query.desktop_id;
      if (id && (await findDomain(ctx.db, id))) {
        const row = await domainFor(ctx, request, id);
        if (row.image.type === 'user') list.unshift({ ...row.image, name: row.name });
      }
      return list;
    },
  );

  r.get('/media/installs', { preHandler: auth, schema: { response: { 200: z.array(ZInstallType) } } }, async () => INSTALL_TYPES);
}
