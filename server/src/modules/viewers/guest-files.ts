// Files to and from a running desktop: the viewer toolbar's files panel. Through QEMU's guest agent
// (engine/guest-agent.ts, the driver's one agent operation), in one transfer folder of the guest
// (GUEST_FILES_FOLDER). Who may: whoever may open the desktop's viewer (desktopFor: the owner, people
// it is shared with through a deployment, admins and managers in scope). Each transfer is audited
// with its name and size, never its content.
import { PassThrough, Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isGuestFileName, statusIn, VIEWABLE, ZGuestFileSent, ZGuestFolder, type TGuestFolder } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { audit, auditActorOf } from '../../audit/record';
import { EngineError } from '../../engine/driver';
import { AGENT_TIMEOUT_MS, fetchFile, GuestAgentError, listFiles, sendFile } from '../../engine/guest-agent';
import { ApiError, badRequest, conflict, notFound, sendError } from '../../http/errors';
import { requireAuth } from '../../http/guard';
import { desktopFor } from '../desktops/access';
import type { DomainRow } from '../shared/domains';

const ZParams = z.object({ id: z.string().max(64) });
const ZFileParams = z.object({ id: z.string().max(64), name: z.string().max(1024) });

/** What the engine said, as the catalogue's codes: not running, no agent, the agent's own refusal. */
function transferError(err: unknown, what: 'read' | 'write' | 'list'): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof EngineError) {
    if (err.code === 'not-running') return conflict('desktop_not_running', 'The desktop is not running');
    if (err.code === 'agent-unavailable' || err.code === 'timeout') {
      return conflict('guest_agent_unavailable', 'The desktop has no guest agent, or it does not answer');
    }
    return conflict('guest_file_failed', 'The transfer failed');
  }
  if (err instanceof GuestAgentError) {
    if (what === 'read' && /No such file|Failed to open|not found/i.test(err.desc || err.message)) {
      return notFound('guest_file_not_found', 'No such file in the desktop');
    }
    return conflict('guest_file_failed', 'The guest agent refused the transfer');
  }
  return err;
}

function fileName(name: string): string {
  if (!isGuestFileName(name)) throw badRequest('guest_file_name_invalid', 'A file name without "/", "\\", control characters, "." or ".."');
  return name;
}

/** The desktop (the viewer's rights) and that it is running here or on a hypervisor. */
async function runningDesktop(ctx: AppContext, request: FastifyRequest, id: string): Promise<DomainRow> {
  const row = await desktopFor(ctx, request, id);
  if (!statusIn(VIEWABLE, row.status)) throw conflict('desktop_not_running', 'The desktop is not running');
  return row;
}

/** "attachment" with the name: an ASCII fallback and the UTF-8 name (RFC 6266). */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export async function guestFileRoutes(app: FastifyInstance, ctx: AppContext) {
  const { folder, maxBytes } = ctx.config.guestFiles;
  const timeoutMs = AGENT_TIMEOUT_MS;

  await app.register(async (scope) => {
    // The upload's body is streamed to the guest as it comes (never held whole): the parser hands the request over.
    scope.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));
    const r = scope.withTypeProvider<ZodTypeProvider>();

    r.get('/desktop/:id/files', { preHandler: requireAuth(ctx), schema: { params: ZParams, response: { 200: ZGuestFolder } } }, async (request): Promise<TGuestFolder> => {
      const row = await runningDesktop(ctx, request, request.params.id);
      try {
        const files = await listFiles(ctx.engine.driver, row.id, folder, timeoutMs);
        return { folder, files, max_upload_bytes: maxBytes };
      } catch (err) {
        throw transferError(err, 'list');
      }
    });

    r.put(
      '/desktop/:id/files/:name',
      { preHandler: requireAuth(ctx), schema: { params: ZFileParams, response: { 201: ZGuestFileSent } } },
      async (request, reply) => {
        const row = await runningDesktop(ctx, request, request.params.id);
        const name = fileName(request.params.name);
        const body = request.body;
        if (!(body instanceof Readable)) throw badRequest('bad_request', 'The file goes as the body, application/octet-stream');
        const tooLarge = () => badRequest('guest_file_too_large', `Files of at most ${maxBytes} bytes`, { max_bytes: maxBytes });
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          body.resume(); // drain what comes, so the client reads the answer
          return sendError(reply, tooLarge(), 413);
        }
        let seen = 0;
        let over = false;
        // Read through a pass-through: leaving the loop early (too large) ends the copy, not the request (whose
        // socket the answer still needs); what the client still sends is drained.
        const pass = body.pipe(new PassThrough());
        const bounded = async function* () {
          for await (const chunk of pass as AsyncIterable<Buffer>) {
            seen += chunk.length;
            if (seen > maxBytes) {
              over = true;
              throw tooLarge();
            }
            yield chunk;
          }
        };
        let size: number;
        try {
          size = await sendFile(ctx.engine.driver, row.id, folder, name, bounded(), timeoutMs);
        } catch (err) {
          if (over) {
            body.unpipe(pass);
            body.resume();
            // what was written of it goes away: no half file left in the desktop
            await ctx.engine.driver
              .guestAgent(row.id, 'guest-exec', { path: '/bin/rm', arg: ['-f', '--', `${folder}/${name}`] }, timeoutMs)
              .catch(() => undefined);
            return sendError(reply, tooLarge(), 413);
          }
          throw transferError(err, 'write');
        }
        await audit(ctx.db, auditActorOf(request), {
          action: 'desktop.file_send',
          objectType: 'desktop',
          objectId: row.id,
          objectName: row.name,
          categoryId: row.categoryId,
          detail: { name, size, owner_id: row.userId },
        });
        return reply.code(201).send({ name, size });
      },
    );

    r.get('/desktop/:id/files/:name', { preHandler: requireAuth(ctx), schema: { params: ZFileParams } }, async (request, reply) => {
      const row = await runningDesktop(ctx, request, request.params.id);
      const name = fileName(request.params.name);
      const actor = auditActorOf(request);
      const pieces = fetchFile(ctx.engine.driver, row.id, folder, name, timeoutMs);
      // the first piece before the answer starts: a missing file or a silent agent is still an error code
      let first: IteratorResult<Buffer>;
      try {
        first = await pieces.next();
      } catch (err) {
        throw transferError(err, 'read');
      }
      let size = 0;
      const all = async function* () {
        if (!first.done) {
          size += first.value.length;
          yield first.value;
        }
        for await (const piece of pieces) {
          size += piece.length;
          yield piece;
        }
        await audit(ctx.db, actor, {
          action: 'desktop.file_fetch',
          objectType: 'desktop',
          objectId: row.id,
          objectName: row.name,
          categoryId: row.categoryId,
          detail: { name, size, owner_id: row.userId },
        }).catch((err: unknown) => request.log.warn({ err }, 'audit of a file fetch failed'));
      };
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', contentDisposition(name))
        .header('cache-control', 'no-store')
        .send(Readable.from(all()));
    });
  });
}
