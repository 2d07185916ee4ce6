import type { z } from 'zod';
import { ZApiErrorBody, type TApiErrorBody } from '@vdi/contracts';
import { pageTimeout } from './page-time';
import { session } from './session';
import { needsRenewal } from './token';

export const API = '/api/v3';
export const AUTH = '/authentication';
export const DEFAULT_TIMEOUT_MS = 25_000;

/** A failed call: the HTTP status and the catalogue body (or a generic one). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: TApiErrorBody,
    readonly headers: Headers,
  ) {
    super(body.description || body.msg || `HTTP ${status}`);
  }
  get code(): string {
    return this.body.description_code || this.body.error;
  }
}

/** A 404 or a 403: the thing is gone or out of reach, which the pages that open one say themselves. */
export const isGone = (err: unknown): boolean => err instanceof HttpError && (err.status === 404 || err.status === 403);

/**
 * A call that got no answer in its time (spec core §9: 25 s). `code` names its notice in the
 * error catalogue (e.g. `desktop_create_timeout`); without one the generic error is shown.
 */
export class RequestTimeout extends Error {
  constructor(readonly code: string) {
    super(`No answer in time (${code})`);
    this.name = 'RequestTimeout';
  }
}

/**
 * A call whose answer never came back: no answer in time, a dropped connection, or a proxy in front that gave up
 * waiting (502, 504). The server may not have seen it at all; anything it did answer (a 429, a 500) is its word.
 */
export const gotNoAnswer = (err: unknown): boolean =>
  err instanceof RequestTimeout || err instanceof TypeError || (err instanceof HttpError && (err.status === 502 || err.status === 504));

/**
 * A failure that may pass if the call is made again: no answer in time, a connection that dropped
 * (fetch's TypeError), the server failing or overloaded for a moment. Not maintenance (503: its page
 * says so) nor an answer about the call itself (4xx).
 */
export const mayPass = (err: unknown): boolean => gotNoAnswer(err) || (err instanceof HttpError && (err.status === 429 || (err.status >= 500 && err.status !== 503)));

type Options = {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  form?: Record<string, string>;
  /** A body sent as is with its media type (a CSV upload). */
  raw?: { body: string; type: string };
  query?: Record<string, string | undefined>;
  /** A token other than the session's (a sign-in step). */
  bearer?: string | null;
  timeoutMs?: number;
  /** The notice shown when the time runs out (a code of the web's error catalogue). */
  timeoutCode?: string;
  text?: boolean;
  /** The answer as a file (a PDF made by the server). */
  blob?: boolean;
};

async function errorFrom(res: Response): Promise<HttpError> {
  let body: TApiErrorBody = { error: 'generic_error', msg: res.statusText, description_code: 'generic_error', description: '', params: null };
  const text = await res.text().catch(() => '');
  try {
    const parsed = ZApiErrorBody.partial().safeParse(JSON.parse(text));
    if (parsed.success) body = { ...body, ...parsed.data, description_code: parsed.data.description_code ?? parsed.data.error ?? body.description_code };
  } catch {
    body.description = text;
  }
  return new HttpError(res.status, body, res.headers);
}

let renewer: (() => Promise<void>) | undefined;
/** How the session is renewed (lib/session-actions registers it; this file cannot import it: it calls `request`). */
export const setSessionRenewer = (renew: () => Promise<void>) => {
  renewer = renew;
};

/**
 * The session's token for a call or the live socket's connection, renewed first when it expires within the renewal
 * margin (spec core §2: 30 s on the server's clock). The session keeper renews it every second too; but a page the browser could not run for a
 * while (a laptop waking up, a starved machine) fires its queued calls before the keeper's tick, and an expired token
 * is answered 401, which signs out. A renewal that fails leaves the call to go with the token it has.
 */
export async function freshSessionToken(): Promise<string | undefined> {
  const claims = session.claims();
  if (renewer && claims && needsRenewal(claims, session.drift())) await renewer().catch(() => undefined);
  return session.token();
}

/** One fetch for every call: bearer token, JSON or form body, timeout, catalogue errors, typed answers. */
export async function request<T = unknown>(url: string, opts: Options = {}, schema?: z.ZodType<T>): Promise<T> {
  const headers: Record<string, string> = {};
  const bearer = opts.bearer === undefined ? await freshSessionToken() : opts.bearer;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  let body: BodyInit | undefined;
  if (opts.raw) {
    headers['content-type'] = opts.raw.type;
    body = opts.raw.body;
  } else if (opts.form) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(opts.form)) fd.append(k, v);
    body = fd;
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const qs = opts.query
    ? '?' + new URLSearchParams(Object.entries(opts.query).filter((e): e is [string, string] => e[1] !== undefined)).toString()
    : '';
  const timedOut = (err: unknown) => (err as { name?: string } | null)?.name === 'TimeoutError' ? new RequestTimeout(opts.timeoutCode ?? 'generic_error') : err;
  let data: unknown;
  // Counted in the page's own time: an answer that came while the browser could not run the page is not late.
  const limit = pageTimeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    const res = await fetch(url + qs, {
      method: opts.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      signal: limit.signal,
    });
    if (!res.ok) throw await errorFrom(res);
    if (opts.text) return (await res.text()) as T;
    if (opts.blob) return (await res.blob()) as T;
    if (res.status === 204) return null as T;
    data = await res.json();
  } catch (err) {
    throw timedOut(err);
  } finally {
    limit.clear();
  }
  if (!schema) return data as T;
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    console.warn(`Answer of ${url} does not match its contract`, parsed.error.issues);
    return data as T;
  }
  return parsed.data;
}

export const api = {
  get: <T>(path: string, schema?: z.ZodType<T>, opts: Options = {}) => request(API + path, opts, schema),
  put: <T>(path: string, body?: unknown, schema?: z.ZodType<T>, opts: Options = {}) =>
    request(API + path, { ...opts, method: 'PUT', body: body ?? {} }, schema),
  post: <T>(path: string, body?: unknown, schema?: z.ZodType<T>, opts: Options = {}) =>
    request(API + path, { ...opts, method: 'POST', body: body ?? {} }, schema),
  delete: <T>(path: string, schema?: z.ZodType<T>, opts: Options = {}) => request(API + path, { ...opts, method: 'DELETE' }, schema),
};
