import pino, { type DestinationStream, type Level, type Logger } from 'pino';

/**
 * Paths whose segment after the prefix is a secret: the direct-viewer code opens a desktop to
 * whoever holds it (`/vw/<code>` and its API, `/api/v3/direct/<code>[/<action>]`).
 */
const SECRET_SEGMENTS = /^(\/vw\/|\/api\/v3\/direct\/)[^/]+/;

/**
 * A request's path as logged: query strings may hold one-time tokens (reset and verification
 * links, viewer tokens) and are never logged; secret path segments are masked; at most 256 characters.
 */
export const loggedPath = (url: string) => url.split('?')[0]!.replace(SECRET_SEGMENTS, '$1…').slice(0, 256);

/** The server's log: no credentials (headers, query strings), no values carried by errors. */
export function createLog(level: Level | 'silent', destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
    serializers: { req: (req: { method: string; url: string }) => ({ method: req.method, url: loggedPath(req.url) }), err: safeError },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The log's `err` serializer: type, code, message and stack frames, never the values an error carries.
 * A failed query's message ends in `params: …` (the values it ran with: client input, hashes, guest
 * addresses), and database and parser errors keep the raw input in extra fields (`params`, `detail`,
 * `rawPacket`…): all of that stays out of the log.
 */
export function safeError(err: unknown, depth = 0): Record<string, unknown> {
  if (!(err instanceof Error)) return { type: typeof err, message: 'a non-error value was thrown' };
  const message = err.message.replace(/\nparams: [\s\S]*$/, '');
  const frames = (err.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const code = (err as { code?: unknown }).code;
  return {
    type: err.constructor?.name ?? err.name,
    message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    stack: [`${err.name}: ${message}`, ...frames].join('\n'),
    ...(err.cause !== undefined && depth < 3 ? { cause: safeError(err.cause, depth + 1) } : {}),
  };
}
