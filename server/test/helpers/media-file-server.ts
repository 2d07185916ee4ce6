// Test helper (API tests and end-to-end journeys): a loopback web server that serves installation images.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type MediaFileServer = {
  base: string;
  iso: Buffer;
  isoSha256: string;
  /** bytes per second of /throttled.iso, read at every tick (tests change it mid-download) */
  rate: { bytesPerSecond: number };
  requests: string[];
  close(): Promise<void>;
};

/** A 1.44 MB floppy image with a FAT12 boot sector. */
export function floppyImage(): Buffer {
  const img = Buffer.alloc(1_474_560);
  img[0] = 0xeb;
  img[1] = 0x3c;
  img[2] = 0x90;
  img.write('MSWIN4.1', 3, 'latin1');
  img.writeUInt16LE(512, 11);
  img[13] = 1;
  img.writeUInt16LE(1, 14);
  img[16] = 2;
  img[510] = 0x55;
  img[511] = 0xaa;
  return img;
}

/**
 * Serves the demo guest ISO (fast, throttled, chunked without a length, behind redirects,
 * refusing HEAD), a file that is not an ISO, a floppy image, and 404s.
 */
export async function startMediaFileServer(isoPath: string): Promise<MediaFileServer> {
  const iso = readFileSync(isoPath);
  const junk = randomBytes(1024 * 1024);
  const floppy = floppyImage();
  const rate = { bytesPerSecond: 4 * 1024 * 1024 };
  const requests: string[] = [];
  const sockets = new Set<import('node:net').Socket>();

  const sendThrottled = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, withLength = true) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', ...(withLength ? { 'content-length': String(body.length) } : {}) });
    if (req.method === 'HEAD') return res.end();
    let offset = 0;
    const tickMs = 50;
    const timer = setInterval(() => {
      const n = Math.max(1024, Math.floor((rate.bytesPerSecond * tickMs) / 1000));
      const chunk = body.subarray(offset, offset + n);
      offset += chunk.length;
      if (chunk.length) res.write(chunk);
      if (offset >= body.length) {
        clearInterval(timer);
        res.end();
      }
    }, tickMs);
    res.on('close', () => clearInterval(timer));
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    const send = (body: Buffer) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    switch (url.pathname) {
      case '/demo.iso':
        return send(iso);
      case '/throttled.iso':
        return sendThrottled(req, res, iso);
      case '/chunked.iso':
        // No Content-Length: the size is only known once it is all there.
        return sendThrottled(req, res, iso, false);
      case '/no-head.iso':
        if (req.method === 'HEAD') return res.writeHead(405).end();
        if (req.headers.range === 'bytes=0-0') {
          res.writeHead(206, { 'content-range': `bytes 0-0/${iso.length}`, 'content-length': '1' });
          return res.end(iso.subarray(0, 1));
        }
        return send(iso);
      case '/junk.iso':
        return send(junk);
      case '/floppy.img':
        return send(floppy);
      case '/redirect':
        res.writeHead(302, { location: `/redirect-${Number(url.searchParams.get('n') ?? 1)}` });
        return res.end();
      default: {
        const hop = /^\/redirect-(\d+)$/.exec(url.pathname);
        if (hop) {
          res.writeHead(301, { location: '/demo.iso' });
          return res.end();
        }
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found');
      }
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    iso,
    isoSha256: createHash('sha256').update(iso).digest('hex'),
    rate,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
