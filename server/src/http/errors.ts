import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ERROR_STATUS, type DescriptionCode, type ErrorKind, type TApiErrorBody } from '@vdi/contracts';

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

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply
    .code(err.status)
    .headers(err.headers)
    .type('application/json')
    .send(errorBody(err.kind, err.code, err.message, err.params));
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
      const kind: ErrorKind = status === 413 ? 'bad_request' : status === 404 ? 'not_found' : status === 429 ? 'too_many_requests' : 'bad_request';
      return sendError(reply, new ApiError(kind, kind === 'bad_request' ? 'bad_request' : kind, error.message));
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
