import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

/** A built portal as the web build leaves it: hashed files under assets/ with their .br and .gz. */
const dist = mkdtempSync(join(tmpdir(), 'vdi-web-'));
const SCRIPT = `export const hello = ${JSON.stringify('hello '.repeat(500))};\n`;
const PAGE = '<!doctype html><html><head><script type="module" src="/assets/app-Ab12Cd34.js"></script></head><body><div id="root"></div></body></html>';
function writeBuild() {
  mkdirSync(join(dist, 'assets'));
  for (const [file, text] of [['index.html', PAGE], ['assets/app-Ab12Cd34.js', SCRIPT]] as const) {
    writeFileSync(join(dist, file), text);
    writeFileSync(join(dist, `${file}.br`), brotliCompressSync(text));
    writeFileSync(join(dist, `${file}.gz`), gzipSync(text));
  }
  // A file whose variants were not worth writing (the build skips those that are not smaller).
  writeFileSync(join(dist, 'assets/tiny-Zz99Yy88.js'), 'export{};');
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
}

let server: TestServer;
beforeAll(async () => {
  writeBuild();
  server = await startTestServer({ env: { WEB_DIST: dist } });
});
afterAll(async () => {
  await server?.close();
  rmSync(dist, { recursive: true, force: true });
});

/** The raw answer (fetch would decode the body), with the Accept-Encoding a browser sends. */
function get(path: string, acceptEncoding?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

describe('the built portal', () => {
  it('sends hashed assets precompressed, by what the client accepts, cached for a year', async () => {
    const br = await get('/assets/app-Ab12Cd34.js', 'gzip, deflate, br, zstd');
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(br.headers['cache-control']).toBe(IMMUTABLE);
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    expect(br.body.length).toBeLessThan(SCRIPT.length / 10);

    const gz = await get('/assets/app-Ab12Cd34.js', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['cache-control']).toBe(IMMUTABLE);
    expect(gunzipSync(gz.body).toString()).toBe(SCRIPT);

    const plain = await get('/assets/app-Ab12Cd34.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['cache-control']).toBe(IMMUTABLE);
    expect(plain.body.toString()).toBe(SCRIPT);

    const tiny = await get('/assets/tiny-Zz99Yy88.js', 'gzip, br');
    expect(tiny.status).toBe(200);
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(tiny.headers['cache-control']).toBe(IMMUTABLE);
    expect(tiny.body.toString()).toBe('export{};');
  });

  it('sends the page compressed and revalidated on every use, on the portal paths and at /', async () => {
    for (const path of ['/login', '/desktops', '/deployment/abc/videowall', '/']) {
      const page = await get(path, 'gzip, deflate, br');
      expect(page.status, path).toBe(200);
      expect(page.headers['cache-control'], path).toBe('no-cache');
      expect(page.headers['content-encoding'], path).toBe('br');
      expect(page.headers['content-type'], path).toMatch(/text\/html/);
      expect(brotliDecompressSync(page.body).toString(), path).toBe(PAGE);
    }
    const favicon = await get('/favicon.svg');
    expect(favicon.headers['cache-control']).toBe('no-cache');
  });

  it('answers 404 for a file missing under /assets/ (an older build\'s), not the page', async () => {
    const missing = await get('/assets/app-0ld0ld00.js', 'br');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(missing.body.toString()).description_code).toBe('not_found');
  });

  it('keeps the API answers as they are', async () => {
    const api = await get('/api/v3/nothing-here', 'br');
    expect(api.status).toBe(404);
    expect(JSON.parse(api.body.toString()).description_code).toBe('not_found');
  });
});
