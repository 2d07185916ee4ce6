import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { classifyAddress } from './address';

export type MediaUrlCode = 'media_url_bad_format' | 'media_url_not_valid' | 'media_url_not_found';

/** Why a media address cannot be used; `code` is the catalogue's description code. */
export class MediaUrlError extends Error {
  constructor(
    readonly code: MediaUrlCode,
    message: string,
  ) {
    super(message);
    this.name = 'MediaUrlError';
  }
}

export type FetchPolicy = {
  /** http:// as well as https:// */
  allowHttp: boolean;
  /** Whether a resolved address may be connected to. */
  admits: (address: string) => boolean;
};

/** The operator's choice: public https only, or (MEDIA_ALLOW_PRIVATE_URLS) http:// and any address too. */
export const mediaFetchPolicy = (allowPrivate: boolean): FetchPolicy =>
  allowPrivate ? { allowHttp: true, admits: () => true } : { allowHttp: false, admits: (a) => classifyAddress(a) === 'public' };

export const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The address must be https:// (http:// too when private URLs are allowed), with a host and no credentials. */
export function parseMediaUrl(raw: string, policy: FetchPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new MediaUrlError('media_url_bad_format', 'Not a web address');
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new MediaUrlError('media_url_bad_format', 'The address must begin with https://');
  if (!url.hostname) throw new MediaUrlError('media_url_bad_format', 'The address has no host');
  if (url.username || url.password) throw new MediaUrlError('media_url_bad_format', 'Addresses with credentials are not accepted');
  return url;
}

type Pinned = { address: string; family: 4 | 6 };

/**
 * Resolves the host (every address it has) and refuses it when any of them is not public.
 * The connection is then made to the address checked here, never to a second DNS answer.
 */
export async function resolvePublic(url: URL, policy: FetchPolicy): Promise<Pinned> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new MediaUrlError('media_url_not_found', `The host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new MediaUrlError('media_url_not_found', `The host ${host} does not resolve`);
  if (addresses.some((a) => !policy.admits(a.address))) {
    throw new MediaUrlError('media_url_not_valid', `The host ${host} points to an internal address`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

const pinnedLookup =
  (p: Pinned): LookupFunction =>
  (_hostname, options, callback) => {
    // Node asks for every address when it tries families in turn (autoSelectFamily).
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: p.address, family: p.family }]);
    else callback(null, p.address, p.family);
  };

export type SafeRequestOptions = {
  method: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Socket idle time (connect, headers, or between body chunks) before giving up. */
  idleTimeoutMs?: number;
};

function requestOnce(url: URL, pinned: Pinned, opts: SafeRequestOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method: opts.method,
      headers: { 'user-agent': 'vdi-portal-media/1', accept: '*/*', ...opts.headers },
      // A fresh connection per request: a pooled socket could lead to another address.
      agent: false,
      lookup: pinnedLookup(pinned),
      signal: opts.signal,
    });
    const idle = opts.idleTimeoutMs ?? 15_000;
    req.setTimeout(idle, () => req.destroy(new Error(`no answer from ${url.host} in ${idle} ms`)));
    req.on('response', (res) => {
      // Idle on the body too (a stalled server must not hold a download forever).
      res.socket?.setTimeout(idle);
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A request that follows redirects by hand (at most five), checking every hop's scheme and
 * addresses again, and connecting to the checked address. Answers the last response.
 */
export async function safeRequest(raw: string, policy: FetchPolicy, opts: SafeRequestOptions): Promise<{ res: IncomingMessage; url: URL }> {
  let url = parseMediaUrl(raw, policy);
  let method = opts.method;
  for (let hop = 0; ; hop++) {
    const pinned = await resolvePublic(url, policy);
    let res: IncomingMessage;
    try {
      res = await requestOnce(url, pinned, { ...opts, method });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw new MediaUrlError('media_url_not_found', `Could not reach ${url.host}: ${(err as Error).message}`);
    }
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode ?? 0) || !location) return { res, url };
    res.resume();
    if (hop >= MAX_REDIRECTS) throw new MediaUrlError('media_url_not_found', 'Too many redirects');
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new MediaUrlError('media_url_not_found', 'A redirect to an invalid address');
    }
    try {
      url = parseMediaUrl(next.href, policy);
    } catch {
      throw new MediaUrlError('media_url_not_valid', 'A redirect to an address that is not allowed');
    }
    if (res.statusCode === 303) method = method === 'HEAD' ? 'HEAD' : 'GET';
  }
}

const sizeFromContentRange = (v: string | undefined) => {
  const m = /\/(\d+)\s*$/.exec(v ?? '');
  return m ? Number(m[1]) : null;
};
const contentLength = (res: IncomingMessage) => {
  const v = Number(res.headers['content-length']);
  return Number.isSafeInteger(v) && v >= 0 ? v : null;
};

/**
 * Checks, before a media is created, that the address answers with a file: a HEAD, or a
 * one-byte ranged GET for servers that refuse HEAD. Answers the announced size (null if unknown).
 */
export async function probeMediaUrl(raw: string, policy: FetchPolicy, timeoutMs = 15_000): Promise<{ size: number | null; url: string }> {
  const head = await safeRequest(raw, policy, { method: 'HEAD', idleTimeoutMs: timeoutMs });
  head.res.resume();
  const status = head.res.statusCode ?? 0;
  if (status === 404 || status === 410) throw new MediaUrlError('media_url_not_found', `The server answered ${status}`);
  if (status >= 200 && status < 300) return { size: contentLength(head.res), url: head.url.href };
  // Some servers refuse HEAD (405, 403, 501…): ask for the first byte instead.
  const get = await safeRequest(raw, policy, { method: 'GET', headers: { range: 'bytes=0-0' }, idleTimeoutMs: timeoutMs });
  const g = get.res;
  g.destroy();
  if (g.statusCode === 206) return { size: sizeFromContentRange(g.headers['content-range']), url: get.url.href };
  if (g.statusCode === 200) return { size: contentLength(g), url: get.url.href };
  throw new MediaUrlError('media_url_not_found', `The server answered ${g.statusCode}`);
}
