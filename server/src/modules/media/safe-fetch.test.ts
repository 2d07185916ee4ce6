import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaFetchPolicy, MediaUrlError, parseMediaUrl, probeMediaUrl, safeRequest, type FetchPolicy } from './safe-fetch';

let v4: http.Server;
let v6: http.Server;
let base4: string;
let base6: string;
const hits: string[] = [];

const serve = (host: string) =>
  new Promise<http.Server>((resolve) => {
    const s = http.createServer((req, res) => {
      hits.push(`${host} ${req.method} ${req.url}`);
      const url = new URL(req.url ?? '/', 'http://x');
      const to = url.searchParams.get('to');
      if (url.pathname === '/go' && to) return res.writeHead(302, { location: to }).end();
      const loop = /^\/loop\/(\d+)$/.exec(url.pathname);
      if (loop) return res.writeHead(307, { location: `/loop/${Number(loop[1]) + 1}` }).end();
      if (url.pathname === '/file') return res.writeHead(200, { 'content-length': '5' }).end(req.method === 'HEAD' ? undefined : 'hello');
      if (url.pathname === '/gone') return res.writeHead(410).end();
      if (url.pathname === '/no-head') {
        if (req.method === 'HEAD') return res.writeHead(501).end();
        return res.writeHead(206, { 'content-range': 'bytes 0-0/4242', 'content-length': '1' }).end('x');
      }
      if (url.pathname === '/broken') return res.writeHead(500).end();
      res.writeHead(404).end();
    });
    s.listen(0, host, () => resolve(s));
  });

beforeAll(async () => {
  v4 = await serve('127.0.0.1');
  v6 = await serve('::1');
  base4 = `http://127.0.0.1:${(v4.address() as AddressInfo).port}`;
  base6 = `http://[::1]:${(v6.address() as AddressInfo).port}`;
});
afterAll(() => {
  v4.close();
  v6.close();
});

/** A lab policy that trusts only 127.0.0.1: everything else counts as internal. */
const only127: FetchPolicy = { allowHttp: true, admits: (a) => a === '127.0.0.1' };
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof MediaUrlError ? err.code : String(err);
  }
};

describe('media address rules', () => {
  it('accepts https only, unless private addresses are allowed', () => {
    const strict = mediaFetchPolicy(false);
    const lab = mediaFetchPolicy(true);
    expect(parseMediaUrl('https://example.org/x.iso', strict).href).toBe('https://example.org/x.iso');
    for (const bad of ['http://example.org/x.iso', 'ftp://example.org/x', 'example.org/x.iso', '', 'https://', 'https://a:b@example.org/']) {
      expect(() => parseMediaUrl(bad, strict), bad).toThrow(MediaUrlError);
    }
    expect(parseMediaUrl('http://10.0.0.1/x.iso', lab).hostname).toBe('10.0.0.1');
    expect(() => parseMediaUrl('ftp://10.0.0.1/x.iso', lab)).toThrow(MediaUrlError);
  });

  it('refuses internal targets before connecting', async () => {
    const strict = mediaFetchPolicy(false);
    for (const url of ['https://127.0.0.1/x', 'https://localhost/x', 'https://[::1]/x', 'https://10.1.2.3/x', 'https://[fe80::1]/x', 'https://0x7f.1/x']) {
      expect(await codeOf(safeRequest(url, strict, { method: 'HEAD' })), url).toBe('media_url_not_valid');
    }
    expect(hits).toEqual([]);
  });
});

describe('safe requests', () => {
  it('follows redirects to admitted addresses', async () => {
    const { res, url } = await safeRequest(`${base4}/go?to=/file`, only127, { method: 'GET' });
    res.resume();
    expect(res.statusCode).toBe(200);
    expect(url.pathname).toBe('/file');
  });

  it('checks every hop again: a redirect to an internal address is refused, and never fetched', async () => {
    const before = hits.length;
    expect(await codeOf(safeRequest(`${base4}/go?to=${encodeURIComponent(`${base6}/file`)}`, only127, { method: 'GET' }))).toBe('media_url_not_valid');
    expect(await codeOf(safeRequest(`${base4}/go?to=${encodeURIComponent('ftp://127.0.0.1/x')}`, only127, { method: 'GET' }))).toBe('media_url_not_valid');
    // https only: a redirect that drops to http is refused too.
    const httpsOnly: FetchPolicy = { allowHttp: false, admits: () => true };
    expect(await codeOf(safeRequest(`${base4}/file`, httpsOnly, { method: 'GET' }))).toBe('media_url_bad_format');
    expect(hits.slice(before).every((h) => h.startsWith('127.0.0.1'))).toBe(true);
  });

  it('stops after five redirects', async () => {
    expect(await codeOf(safeRequest(`${base4}/loop/0`, only127, { method: 'HEAD' }))).toBe('media_url_not_found');
    expect(hits.filter((h) => h.includes('/loop/')).length).toBe(6);
  });

  it('connects to the address it checked', async () => {
    // "localhost" resolves to 127.0.0.1 here; the request must reach the IPv4 server even though the
    // Host header names localhost.
    const port = (v4.address() as AddressInfo).port;
    const { res } = await safeRequest(`http://localhost:${port}/file`, only127, { method: 'GET' });
    res.resume();
    expect(res.statusCode).toBe(200);
    expect(hits.at(-1)).toBe('127.0.0.1 GET /file');
  });
});

describe('probing a media address', () => {
  it('answers the announced size, with a ranged GET when HEAD is refused', async () => {
    expect((await probeMediaUrl(`${base4}/file`, only127)).size).toBe(5);
    expect((await probeMediaUrl(`${base4}/no-head`, only127)).size).toBe(4242);
  });

  it('is not found for 404, 410, errors and closed ports', async () => {
    for (const path of ['/missing', '/gone', '/broken']) expect(await codeOf(probeMediaUrl(`${base4}${path}`, only127)), path).toBe('media_url_not_found');
    expect(await codeOf(probeMediaUrl('http://127.0.0.1:9/x', only127))).toBe('media_url_not_found');
  });
});
