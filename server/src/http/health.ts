import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError, sendError } from './errors';

/**
 * The process's health for a load balancer (deploy/haproxy/haproxy.cfg checks it): `GET /api/v3/health`
 * answers 200 while the process serves, 503 once it stops (SIGTERM), so the balancer sends the next
 * requests to another process before this one closes its listener. Cheap: no database, no session.
 * Every answer names the process that gave it (X-Server-Id: SERVER_ID).
 * Answers `drain(ms)`: the health turns 503 at once and it resolves `ms` later (the stop's first step).
 */
export function registerHealth(app: FastifyInstance, serverId: string): { drain: (ms: number) => Promise<void> } {
  let stopping = false;
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-server-id', serverId);
    done();
  });
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v3/health',
    // Checked every half second by the balancer: its requests are not logged.
    { logLevel: 'warn', schema: { response: { 200: z.object({ status: z.literal('ok'), server: z.string() }) } } },
    async (_request, reply) => {
      // Sent, not thrown: a drain is no error for the log.
      if (stopping) return sendError(reply, new ApiError('service_unavailable', 'server_stopping', 'This server is stopping: try again in a moment'));
      return { status: 'ok' as const, server: serverId };
    },
  );
  return {
    drain: (ms) => {
      stopping = true;
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
  };
}
