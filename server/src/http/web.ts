import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { notFound, sendError } from './errors';

/** Build outputs under assets/ carry a hash of their content in their name: they never change. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html and the unhashed files (favicon) are checked again on every use. */
export const REVALIDATE = 'no-cache';

export function webCacheControl(root: string, file: string): string {
  return relative(root, file).split(sep)[0] === 'assets' ? IMMUTABLE : REVALIDATE;
}

/**
 * Serves the built portal (web/dist) when it exists: each file as its precompressed `.br` or
 * `.gz` sibling when the client accepts one (the build writes them), with its cache policy.
 * Answers the fallback for paths no route has: the page for the portal's own paths, a 404
 * for files missing under /assets/ (an older build's, asked by a page loaded before).
 */
export async function registerWeb(app: FastifyInstance, root: string) {
  if (!existsSync(join(root, 'index.html'))) return undefined;
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    index: false,
    preCompressed: true,
    setHeaders: (reply, path) => void reply.header('cache-control', webCacheControl(root, path)),
  });
  app.get('/', (_req, reply) => reply.sendFile('index.html'));
  return (req: FastifyRequest, reply: FastifyReply) =>
    req.url.startsWith('/assets/') ? sendError(reply, notFound()) : reply.sendFile('index.html');
}
