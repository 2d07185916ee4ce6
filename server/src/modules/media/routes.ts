import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq, ne } from 'drizzle-orm';
import { z } from 'zod';
import {
  MEDIA_DOWNLOADING_STATUSES,
  MEDIA_RETRYABLE_STATUSES,
  PRIVILEGED_ROLES,
  ZDesktopFromMedia,
  ZMedia,
  ZMediaDesktop,
  ZNewMedia,
  ZNewMediaAnswer,
  type TMediaStatus,
} from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf, requireAuth } from '../../http/guard';
import { badRequest, conflict, forbidden, notFound } from '../../http/errors';
import { assertChoosable, canManage, chooserOf, isAllowed, NOT_SHARED } from '../access/permissions';
import { actorOf } from '../../auth/caller';
import { registerUsagePart } from '../quotas/applied';
import { createDesktopFromMedia } from './desktop-from-media';
import { checkNewMediaQuota, mediaUsage } from './quota';
import { MediaUrlError, probeMediaUrl } from './safe-fetch';
import type { MediaService } from './service';
import { deleteMedia } from './delete';
import { desktopsUsing, findMedia, listedMedia, mediaViews } from './view';

registerUsagePart(mediaUsage);

const ZId = z.object({ id: z.string().min(1).max(64) });
const ZEmpty = z.object({});

/** A MediaUrlError becomes the catalogue answer: 400 for the format and internal targets, 404 when nothing answers. */
function urlFailure(err: unknown): never {
  if (err instanceof MediaUrlError) {
    if (err.code === 'media_url_not_found') throw notFound('media_url_not_found', err.message);
    throw badRequest(err.code, err.message);
  }
  throw err;
}

/**
 * Media (spec 001 §2, §3, §7; reference §2.13): installation images downloaded from a web
 * address as persisted jobs, shared through `allowed`, and desktops that boot from them.
 */
export async function mediaRoutes(app: FastifyInstance, ctx: AppContext, media: MediaService) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx, { roles: PRIVILEGED_ROLES });
  const { db } = ctx;

  /** The media named in the request when the caller may manage it: 404 when missing, 403 when not theirs. */
  async function manageable(request: FastifyRequest, id: string) {
    const { user } = authOf(request);
    const row = await findMedia(db, id);
    if (!row || row.status === 'deleted') throw notFound('media_not_found', 'Media not found');
    if (!canManage(await actorOf(db, user), row)) throw forbidden('forbidden', 'Not enough rights on this media');
    return row;
  }

  r.get('/media', { preHandler: auth, schema: { response: { 200: z.array(ZMedia) } } }, async (request) => {
    const { user } = authOf(request);
    const rows = await listedMedia(db, eq(schema.media.userId, user.id));
    return (await mediaViews(db, rows, null)).map((m) => ({ ...m, editable: true }));
  });

  r.get('/media_allowed', { preHandler: auth, schema: { response: { 200: z.array(ZMedia) } } }, async (request) => {
    const { user } = authOf(request);
    const actor = await actorOf(db, user);
    const rows = (await listedMedia(db, ne(schema.media.userId, user.id))).filter((m) => isAllowed(actor, m));
    return mediaViews(db, rows, actor);
  });

  r.post('/media', { preHandler: auth, schema: { body: ZNewMedia, response: { 200: ZNewMediaAnswer } } }, async (request) => {
    const { user } = authOf(request);
    const body = request.body;
    if (body.allowed) await assertChoosable(db, [chooserOf(user)], body.allowed);
    // The address must be right and answer before anything is stored.
    const probe = await probeMediaUrl(body.url, media.policy()).catch(urlFailure);
    await checkNewMediaQuota(db, user, probe.size ?? 0);
    const [row] = await db
      .insert(schema.media)
      .values({
        id: randomUUID(),
        name: body.name,
        description: body.description,
        url: body.url,
        kind: body.kind,
        status: 'DownloadStarting',
        userId: user.id,
        categoryId: user.categoryId,
        groupId: user.groupId,
        allowed: body.allowed ?? NOT_SHARED,
        size: probe.size ?? 0,
        progress: null,
        icon: body.kind === 'iso' ? 'fa-circle-o' : 'fa-floppy-o',
      })
      .returning();
    await media.publish(row!, 'media_add');
    await media.startDownload(row!);
    return { id: row!.id };
  });

  r.post('/media/abort/:id', { preHandler: auth, schema: { params: ZId } }, async (request) => {
    const row = await manageable(request, request.params.id);
    if (!MEDIA_DOWNLOADING_STATUSES.includes(row.status as TMediaStatus)) {
      throw conflict('media_action_not_available', `Cannot abort a media that is ${row.status}`, { status: row.status, action: 'abort' });
    }
    const aborting = await media.update(row.id, { status: 'DownloadAborting' }, MEDIA_DOWNLOADING_STATUSES);
    if (!aborting) throw conflict('media_action_not_available', 'The download just ended', { action: 'abort' });
    // The job ends as "aborted" and its end puts the media in DownloadFailed; with no job here, do it now.
    if (!(await media.abortDownload(row.id))) await media.update(row.id, { status: 'DownloadFailed', detail: 'download_aborted' });
    return {};
  });

  r.post('/media/download/:id', { preHandler: auth, schema: { params: ZId, body: ZEmpty.optional() } }, async (request) => {
    const row = await manageable(request, request.params.id);
    if (!MEDIA_RETRYABLE_STATUSES.includes(row.status as TMediaStatus)) {
      throw conflict('media_action_not_available', `Cannot download again a media that is ${row.status}`, { status: row.status, action: 'download' });
    }
    const [owner] = await db.select().from(schema.users).where(eq(schema.users.id, row.userId));
    if (!owner) throw notFound('media_not_found', 'The media has no owner');
    await probeMediaUrl(row.url, media.policy()).catch(urlFailure);
    await checkNewMediaQuota(db, owner, row.size);
    const reset = await media.update(row.id, { status: 'ResetDownloading', progress: null, detail: '' }, MEDIA_RETRYABLE_STATUSES);
    if (!reset) throw conflict('media_action_not_available', 'The media changed', { action: 'download' });
    await media.startDownload(reset);
    return {};
  });

  r.get('/media/desktops/:id', { preHandler: auth, schema: { params: ZId, response: { 200: z.array(ZMediaDesktop) } } }, async (request) => {
    const row = await manageable(request, request.params.id);
    return (await desktopsUsing(db, row.id)).map(({ running: _running, ...d }) => d);
  });

  // Refused while a running desktop has it; stopped desktops lose it (and boot from their disk).
  r.delete('/media/:id', { preHandler: auth, schema: { params: ZId } }, async (request) => {
    await deleteMedia(ctx, media, await manageable(request, request.params.id));
    return {};
  });

  r.post('/desktop/from/media', { preHandler: auth, schema: { body: ZDesktopFromMedia, response: { 200: z.object({ id: z.string() }) } } }, async (request) =>
    createDesktopFromMedia(ctx, authOf(request).user, request.body),
  );
}
