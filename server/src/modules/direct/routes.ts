import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { STARTABLE, statusIn, VIEWABLE, ZDirectViewer, ZJumperReset, ZJumperUrl, type TDirectViewer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { requireAuth } from '../../http/guard';
import { notFound, sendError } from '../../http/errors';
import { clientKey } from '../../http/rate-limit';
import { createThrottle, tooManyAttempts, type ThrottleRule } from '../../auth/throttle';
import { requestBaseUrl } from '../../http/base-url';
import { desktopRoom } from '../../socket/bus';
import { desktopFor } from '../desktops/access';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import { ownerOf, type DomainRow } from '../shared/domains';
import { forceStopAtOf, viewersOf } from '../shared/desktop-view';
import { viewerFor } from '../viewers/service';
import { spiceProxyOf } from '../viewers/routes';

/**
 * 30 requests a minute per client address (reference DIRECT_VIEWER_RATE_LIMIT / _WINDOW), as a bucket
 * that drains one request every 2 s: once full, the next request waits for room. Kept in the database,
 * so the limit holds across server processes (a link tried on each of three processes counts once).
 */
const DIRECT_LINK_LIMIT: ThrottleRule = { maxFailures: 30, windowSeconds: 60, firstBlockSeconds: 2, factor: 1, maxBlockSeconds: 2 };
const START_WAIT_MS = 30_000;

class DirectNotFound extends Error {}

/** A new direct-viewer code (the /vw/<code> link of a desktop). */
export const newJumperToken = () => randomBytes(32).toString('base64url');
export const directLink = (base: string, token: string) => `${base}/vw/${token}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The direct viewer: a per-desktop public link that opens one desktop without signing in. */
export async function directRoutes(app: FastifyInstance, ctx: AppContext, lifecycle: DesktopLifecycle) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);
  const hits = createThrottle(ctx.db, DIRECT_LINK_LIMIT);

  // Every change of a linked desktop is told to the open direct pages of it.
  lifecycle.changes.on('changed', (row) => {
    if (row.jumperUrl) ctx.bus.toRoom(desktopRoom(row.id), 'directviewer_update', baseView(row, '', {}));
  });

  function baseView(row: DomainRow, jwt: string, viewers: TDirectViewer['viewers']): TDirectViewer {
    return {
      desktopId: row.id, jwt, vmName: row.name, vmDescription: row.description, vmState: row.status,
      scheduled: { shutdown: false }, force_stop_at: forceStopAtOf(row), viewers, needs_booking: false, next_booking_start: null, next_booking_end: null,
    };
  }

  /** The linked desktop, or a 404 after a floor delay (±0.5 s) so codes cannot be probed quickly. */
  async function linked(request: FastifyRequest, token: string): Promise<DomainRow> {
    const { refused } = await hits.count(`direct|${clientKey(request.ip)}`);
    if (refused) throw tooManyAttempts(refused, 'too_many_requests');
    const [row] = token.length >= 32 ? await ctx.db.select().from(schema.domains).where(eq(schema.domains.jumperUrl, token)) : [];
    if (!row) throw new DirectNotFound();
    return row;
  }

  /** Runs `fn` on the linked desktop; an unknown or disabled code answers the slow 404. */
  async function withLinked<T>(request: FastifyRequest, reply: FastifyReply, token: string, fn: (row: DomainRow) => Promise<T>) {
    let row: DomainRow;
    try {
      row = await linked(request, token);
    } catch (err) {
      if (!(err instanceof DirectNotFound)) throw err;
      const base = ctx.config.directViewerDelayMs;
      await sleep(base + (base ? (Math.random() - 0.5) * 1000 : 0));
      // The original's `{error: "not_found", msg: "Not found"}`, within the catalogue body every failure has.
      return sendError(reply, notFound('not_found', 'Not found'));
    }
    return fn(row);
  }

  const ZToken = z.object({ token: z.string().max(128) });

  r.get('/direct/docs', async () => ({ viewers_documentation_url: (await ctx.settings.get('frontend')).viewers_documentation_url }));

  r.get('/direct/:token', { schema: { params: ZToken, response: { 200: ZDirectViewer } } }, (request, reply) =>
    withLinked(request, reply, request.params.token, async (found) => {
      let row = found;
      if (statusIn(STARTABLE, row.status)) {
        const owner = await ownerOf(ctx.db, row);
        await lifecycle.start(row, owner, owner, { reason: 'direct_link' });
      }
      const deadline = Date.now() + START_WAIT_MS;
      while (!statusIn(VIEWABLE, row.status) && (row.status === 'Starting' || statusIn(STARTABLE, row.status)) && Date.now() < deadline) {
        await sleep(250);
        row = (await ctx.db.select().from(schema.domains).where(eq(schema.domains.id, row.id)))[0]!;
      }
      const viewers: TDirectViewer['viewers'] = {};
      if (statusIn(VIEWABLE, row.status)) {
        // Live viewer files for this visitor's own request, used at once: the address they reached may do (requestBaseUrl).
        const proxy = spiceProxyOf(requestBaseUrl(ctx.config, request));
        for (const v of viewersOf(row)) {
          viewers[v] = await viewerFor(ctx, row, v, { userId: null, proxy }).catch(() => ({ kind: v.split('-')[0], protocol: v.split('-')[1] }));
        }
      }
      const jwt = await ctx.tokens.signSpecial('viewer', { desktop_id: row.id });
      return baseView(row, jwt, viewers);
    }),
  );

  r.put(
    '/direct/:token/:action',
    { schema: { params: ZToken.extend({ action: z.enum(['start', 'stop', 'reset']) }) } },
    (request, reply) =>
      withLinked(request, reply, request.params.token, async (row) => {
        if (request.params.action === 'start') {
          const owner = await ownerOf(ctx.db, row);
          await lifecycle.start(row, owner, owner, { reason: 'direct_link' });
        } else if (request.params.action === 'stop') await lifecycle.stop(row, { reason: 'direct_link' });
        else await lifecycle.reset(row, { reason: 'direct_link' });
        return { id: request.params.token };
      }),
  );

  r.get('/desktop/jumperurl/:id', { preHandler: auth, schema: { params: z.object({ id: z.string().max(64) }), response: { 200: ZJumperUrl } } }, async (request) => {
    const row = await desktopFor(ctx, request, request.params.id);
    return { jumperurl: row.jumperUrl ?? (false as const) };
  });

  r.put('/desktop/jumperurl_reset/:id', { preHandler: auth, schema: { params: z.object({ id: z.string().max(64) }), body: ZJumperReset } }, async (request, reply) => {
    const row = await desktopFor(ctx, request, request.params.id);
    const token = request.body.disabled ? null : newJumperToken();
    await ctx.db.update(schema.domains).set({ jumperUrl: token }).where(eq(schema.domains.id, row.id));
    // The original answers the new token as a JSON string (false when disabled).
    return reply.type('application/json').send(JSON.stringify(token ?? false));
  });
}
