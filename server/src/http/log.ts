import pino, { type DestinationStream, type Level, type Logger } from 'pino';

/** Query strings may hold one-time tokens (reset and verification links): never logged; a path at most 256 characters. */
const pathOnly = (url: string) => url.split('?')[0]!.slice(0, 256);

/** The server's log: no credentials (headers, query strings), no values carried by errors. */
export function createLog(level: Level | 'silent', destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
    serializers: { req: (req: { method: string; url: string }) => ({ method: req.method, url: pathOnly(req.url) }), err: safeError },
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
