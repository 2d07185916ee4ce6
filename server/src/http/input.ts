import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from './errors';

/**
 * Input checks every route shares, run before its schema (preValidation):
 * - multipart bodies are read here, so a malformed one is a 400 and not a parser crash;
 * - strings the database cannot store are refused with `invalid_characters`: PostgreSQL (and PGlite)
 *   reject NUL in text and jsonb, so a NUL anywhere would otherwise fail as a 500 deep in a query.
 *   Ids and query values (path and query string) admit no control character at all; bodies may hold
 *   tabs and line breaks (descriptions), never NUL.
 * The refusal names where the character is, never the value itself.
 */
export function registerInputChecks(app: FastifyInstance) {
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) request.body = await readMultipart(request);
    refuseControlCharacters(request.params, 'params', ID_FORBIDDEN);
    refuseControlCharacters(request.query, 'querystring', ID_FORBIDDEN);
    refuseControlCharacters(request.body, 'body', TEXT_FORBIDDEN);
  });
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const ID_FORBIDDEN = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- NUL is exactly what is refused
const TEXT_FORBIDDEN = /\u0000/;
/** A key safe to repeat in a message (the key itself is client input). */
const PRINTABLE_KEY = /^[\w.-]{1,64}$/;

/** A streamed body (a file sent to a desktop, handed over unread): its bytes are not text to walk. */
const isStream = (v: object) => typeof (v as { pipe?: unknown }).pipe === 'function';

/** Walks strings, arrays and plain objects (keys too) without recursion, so depth cannot overflow the stack. */
export function refuseControlCharacters(value: unknown, where: string, forbidden: RegExp) {
  const stack: { value: unknown; path: string }[] = [{ value, path: where }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (forbidden.test(v)) throw invalidCharacters(path);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: `${path}.${i}` }));
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v) && !isStream(v)) {
      for (const [key, item] of Object.entries(v)) {
        if (forbidden.test(key)) throw invalidCharacters(path);
        stack.push({ value: item, path: PRINTABLE_KEY.test(key) ? `${path}.${key}` : path });
      }
    }
  }
}

const invalidCharacters = (path: string) =>
  badRequest('invalid_characters', `${path}: contains a character that is not allowed (NUL or another control character)`, { where: path });

/**
 * A multipart form as `{field: value}` (repeated fields as arrays, files as Buffers), as @fastify/multipart's
 * `attachFieldsToBody: 'keyValues'` gives, but a body the parser cannot read is the client's mistake: 400.
 */
async function readMultipart(request: FastifyRequest): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  try {
    for await (const part of request.parts()) {
      const value = part.type === 'file' ? await part.toBuffer() : part.value;
      const before = Object.hasOwn(body, part.fieldname) ? body[part.fieldname] : undefined;
      body[part.fieldname] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The plugin's own refusals (limits 413, prototype names 400, premature close 400) keep their status.
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) throw err;
    throw badRequest('bad_request', 'The multipart body is malformed');
  }
  return body;
}
