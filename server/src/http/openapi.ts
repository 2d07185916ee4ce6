import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ZApiErrorBody } from '@vdi/contracts';

/**
 * The OpenAPI 3.1 document of /api/v3, generated from the routes as registered (their method, URL and the
 * shared zod contracts they validate and answer with): nothing to keep in step by hand. A route appears
 * with its path and query parameters, its body and its answer where its schema names them.
 */
export const OPENAPI_PATH = '/openapi.json';
const PREFIX = '/api/v3';

type Json = Record<string, unknown>;
/** A route as app.ts records them (`registeredRoutes`): what the document is made of. */
type DescribedRoute = { method: string; url: string; schema?: { params?: unknown; querystring?: unknown; body?: unknown; response?: unknown }; authenticated: boolean };
const isZod = (s: unknown): s is z.ZodType => typeof s === 'object' && s !== null && '_zod' in s;

/** A contract as JSON Schema: what a client sends (input) or receives (output); what JSON cannot say is left open. */
const jsonSchema = (s: z.ZodType, io: 'input' | 'output'): Json => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Json;
  return rest;
};

/** An object schema's properties as OpenAPI parameters of one place (path or query). */
function parameters(s: unknown, where: 'path' | 'query'): Json[] {
  if (!isZod(s)) return [];
  const js = jsonSchema(s, 'input');
  const props = (js.properties ?? {}) as Record<string, Json>;
  const required = new Set((js.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, schema]) => ({ name, in: where, required: where === 'path' || required.has(name), schema }));
}

/** `/desktop/:id/start` → `/desktop/{id}/start`; a wildcard becomes a `{path}` parameter. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');

export function openApiDocument(routes: readonly DescribedRoute[], version: string): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const error = { description: 'Refused: the catalogue code in `description_code`', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  for (const route of routes) {
    if (!route.url.startsWith(`${PREFIX}/`)) continue;
    const path = openApiPath(route.url.slice(PREFIX.length));
    const s = route.schema ?? {};
    const params = [...parameters(s.params, 'path'), ...parameters(s.querystring, 'query')];
    const wildcard = route.url.endsWith('*') && !params.some((p) => p.name === 'path');
    const responses: Record<string, Json> = {};
    for (const [status, answer] of Object.entries((s.response ?? {}) as Record<string, unknown>)) {
      if (isZod(answer)) responses[status] = { description: 'The answer', content: { 'application/json': { schema: jsonSchema(answer, 'output') } } };
    }
    if (!responses['200']) responses['200'] = { description: 'Done' };
    responses.default = error;
    const segment = path.split('/')[1] ?? '';
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ?? '').toUpperCase())}`,
      tags: [segment === 'admin' ? `admin/${path.split('/')[2] ?? ''}` : segment],
      ...(params.length || wildcard ? { parameters: [...params, ...(wildcard ? [{ name: 'path', in: 'path', required: true, schema: { type: 'string' } }] : [])] } : {}),
      ...(isZod(s.body) ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(s.body, 'input') } } } } : {}),
      ...(route.authenticated ? { security: [{ bearer: [] }] } : {}),
      responses,
    };
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'VDI portal API',
      version,
      description:
        'Every call of /api/v3. Authenticate with `Authorization: Bearer <token>`: the session token of a signed-in person, ' +
        'or a personal API token (profile → API tokens), which acts with its owner\'s rights; a read-only token may only read (GET).',
    },
    servers: [{ url: PREFIX }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: jsonSchema(ZApiErrorBody, 'output') },
    },
    paths: sorted,
  };
}

/**
 * GET /api/v3/openapi.json, without signing in: it describes the shapes of the calls (the source is public
 * anyway), not any data, and tools that generate clients fetch it without credentials. Built once, on first
 * ask, when every route is registered.
 */
export function registerOpenApi(app: FastifyInstance, routes: readonly DescribedRoute[], version = '3') {
  let text: string | null = null;
  app.get(OPENAPI_PATH, async (_request, reply) => {
    text ??= JSON.stringify(openApiDocument(routes, version));
    return reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(text);
  });
}
