// The bastion's HTTP and HTTPS listeners: a connection's name (Host header, or TLS SNI read from
// the ClientHello without terminating TLS) picks a bastion target under the bastion domain; the
// bytes then go, untouched, to that started desktop's port 80 or 443 on the guest network.
// Names that are not a started desktop's get nothing: an HTTP 404 (HTTP) or a closed connection
// (HTTPS); no other host is ever connected to.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { bastionTargetOf } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { routeOf } from './targets';
import { httpHost, tlsServerName, type Peek } from './sni';

const HEAD_TIMEOUT_MS = 10_000;
const MAX_HEAD = 16_384 + 5;

export function createNameProxy(
  ctx: AppContext,
  kind: 'http' | 'https',
  opts: { domain: () => Promise<string>; isAllowedAddress: (ip: string) => boolean },
): { server: Server; close(): void } {
  const sockets = new Set<Socket>();
  const refuse = (socket: Socket) => {
    if (kind === 'http') socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HEAD_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const peek: Peek = kind === 'http' ? httpHost(buf) : tlsServerName(buf);
      if (peek.kind === 'need-more' && buf.length < MAX_HEAD) return;
      socket.off('data', onData);
      socket.pause();
      clearTimeout(timer);
      if (peek.kind !== 'name') return refuse(socket);
      void route(socket, peek.name, buf);
    };
    socket.on('data', onData);
  });

  async function route(socket: Socket, name: string, head: Buffer) {
    const targetId = bastionTargetOf(name, await opts.domain().catch(() => ''));
    const r = targetId ? await routeOf(ctx, targetId, kind).catch(() => null) : null;
    if (!r || !opts.isAllowedAddress(r.host)) return refuse(socket);
    const upstream = connect({ host: r.host, port: r.port });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.setTimeout(HEAD_TIMEOUT_MS, () => upstream.destroy());
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      upstream.write(head);
      socket.pipe(upstream);
      upstream.pipe(socket);
      socket.resume();
    });
    upstream.on('error', () => refuse(socket));
    upstream.on('close', () => socket.end());
    socket.on('close', () => upstream.destroy());
  }

  server.on('error', (err) => ctx.log.warn({ err: err.message, kind }, 'bastion listener error'));
  return {
    server,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
