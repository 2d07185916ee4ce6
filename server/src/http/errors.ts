import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DESCRIPTION_CODES, ERROR_STATUS, type DescriptionCode, type ErrorKind, type TApiErrorBody } from '@vdi/contracts';

const KIND_TITLE: Record<ErrorKind, string> = {
  bad_request: 'Bad request',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  conflict: 'Conflict',
  precondition_required: 'Precondition required',
  too_many_requests: 'Too many requests',
  internal_server: 'Internal server error',
  service_unavailable: 'Service unavailable',
  gateway_timeout: 'Gateway timeout',
  insufficient_storage: 'Insufficient storage',
};

/** A domain error: thrown anywhere, turned into the catalogue body by one handler. */
export class ApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: DescriptionCode | (string & {}),
    description: string,
    readonly params: Record<string, unknown> | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
  get status(): number {
    return ERROR_STATUS[this.kind];
  }
}

type Params = Record<string, unknown> | null;
export const badRequest = (code: DescriptionCode | (string & {}), description: string, params: Params = null) =>
  new ApiError('bad_request', code, description, params);
export const unauthorized = (code: DescriptionCode | (string & {}), description: string) =>
  new ApiError('unauthorized', code, description);
export const forbidden = (code: DescriptionCode | (string & {}), description: string, params: Params = null) =>
  new ApiError('forbidden', code, description, params);
export const notFound = (code: DescriptionCode | (string & {}) = 'not_found', description = 'Not found') =>
  new ApiError('not_found', code, description);
export const conflict = (code: DescriptionCode | (string & {}), description: string, params: Params = null) =>
  new ApiError('conflict', code, description, params);
export const precondition = (code: DescriptionCode | (string & {}), description: string, params: Params = null) =>
  new ApiError('precondition_required', code, description, params);

export function errorBody(kind: ErrorKind, code: string, description: string, params: Params = null): TApiErrorBody {
  return { error: kind, msg: KIND_TITLE[kind], description_code: code, description, params };
}

/** `status` only where HTTP has a more precise one than the kind's (414, 413, 415…). */
export function sendError(reply: FastifyReply, err: ApiError, status = err.status): FastifyReply {
  return reply
    .code(status)
    .headers(err.headers)
    .type('application/json')
    .send({ ...errorBody(err.kind, err.code, err.message, err.params), request_id: reply.request.id });
}

const isApiPath = (url: string) => url.startsWith('/api/') || url.startsWith('/authentication/');

/** Every failure leaves as the catalogue body; bad input is a 400 with a code, never a 500. */
export function registerErrorHandling(app: FastifyInstance, spaFallback?: (req: FastifyRequest, reply: FastifyReply) => unknown) {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issues = error.validation.map((v) => {
        const where = [error.validationContext, v.instancePath.replace(/^\//, '').replaceAll('/', '.')].filter(Boolean).join('.');
        return `${where}: ${v.message}`;
      });
      return sendError(reply, badRequest('validation_error', issues.join('; '), { issues }));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's and its plugins' refusals (bad JSON, unsupported media type, body too large…) keep their status.
      const kind = (Object.keys(ERROR_STATUS) as ErrorKind[]).find((k) => ERROR_STATUS[k] === status) ?? 'bad_request';
      const code = (DESCRIPTION_CODES as readonly string[]).includes(kind) ? kind : 'bad_request';
      return sendError(reply, new ApiError(kind, code, error.message), status);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new ApiError('internal_server', 'internal_server', 'Unexpected server error'));
  });

  app.setNotFoundHandler((request, reply) => {
    if (isApiPath(request.url) || !spaFallback || request.method !== 'GET') {
      return sendError(reply, notFound('not_found', `No route ${request.method} ${request.url.split('?')[0]}`));
    }
    return spaFallback(request, reply);
  });
}

/**
 * Fastify's refusals before any route or hook runs (`frameworkErrors`): a path that is not valid
 * percent-encoding and a path parameter longer than the router allows. Same catalogue body as the rest.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendError(reply, badRequest('validation_error', 'A path parameter is too long'), 414);
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return sendError(reply, badRequest('bad_request', 'The path is not a valid URL (malformed percent-encoding)'));
  }
  return sendError(reply, badRequest('bad_request', 'The request could not be routed'));
}

/**
 * What the HTTP parser refuses before Fastify sees a request (malformed HTTP, headers too large, a
 * request too slow), answered with the catalogue body. The error holds the raw bytes: never logged.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, description] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'The request took too long to arrive']
    : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'The request headers are too large']
    : [400, 'The request is not valid HTTP'];
  const body = JSON.stringify(errorBody('bad_request', 'bad_request', description));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
