/**
 * An RD Gateway ([MS-TSGU] HTTP transport, websocket variant) over TLS, for .rdp files:
 * the client (mstsc, FreeRDP) sends `RDG_OUT_DATA /remoteDesktopGateway/` with a websocket
 * upgrade, then handshake → tunnel (with the PAA cookie: our one-time token) → tunnel auth →
 * channel (the RDP server it wants) → data both ways. `authorize` spends the cookie and answers
 * the one endpoint it opens; a channel to any other host or port is refused, and nothing is
 * dialled before that check. Node's HTTP server refuses the method, so the request head is
 * read here and the 101 written by hand (see ws-frames.ts).
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { Authorization, RdpTarget } from './cleanpath-proxy';
import {
  channelResponse, closePacket, dataPackets, EXTENDED_AUTH, handshakeResponse, HRESULT, packetReader, parseChannelCreate, parseData,
  parseHandshakeRequest, parseTunnelCreate, PKT, tunnelAuthResponse, tunnelResponse, type Packet,
} from './tsgu';
import { acceptValue, frame, frameReader, OPCODE } from './ws-frames';

export type GatewayOptions = {
  cert: string;
  key: string;
  authorize(token: string): Promise<Authorization>;
  onRelay?(desktopId: string): (why: string) => void;
  /** A refusal or failure, for the log (never the token or the address). */
  onFailure?(why: string, desktopId?: string): void;
  /** Bound of the steps before the relay (the head, each packet, the TCP connection). */
  stepTimeoutMs?: number;
};

const MAX_HEAD = 16 * 1024;
const HTTP_STATUS: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed', 426: 'Upgrade Required' };

export type HttpHead = { method: string; path: string; headers: Map<string, string> };

/** The request line and headers (names lower-cased), or throws. */
export function parseHead(text: string): HttpHead {
  const [line, ...rest] = text.split('\r\n');
  const m = /^([A-Z_]{1,32}) (\S{1,2048}) HTTP\/1\.[01]$/.exec(line ?? '');
  if (!m) throw new Error('bad request line');
  const headers = new Map<string, string>();
  for (const h of rest) {
    if (!h) continue;
    const i = h.indexOf(':');
    if (i <= 0) throw new Error('bad header');
    headers.set(h.slice(0, i).trim().toLowerCase(), h.slice(i + 1).trim());
  }
  return { method: m[1]!, path: m[2]!, headers };
}

/** Whether a channel request names the token's endpoint: one resource, our host, our port. */
export function channelAllowed(req: { resources: string[]; altResources: string[]; port: number }, target: RdpTarget) {
  const names = [...req.resources, ...req.altResources];
  return req.port === target.port && names.length > 0 && names.every((n) => n === target.host || n === `${target.host}:${target.port}`);
}

export function createRdpGateway(opts: GatewayOptions) {
  const step = opts.stepTimeoutMs ?? 15_000;
  const sockets = new Set<TLSSocket>();
  const server: Server = createServer({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    void serveConnection(socket, opts, step);
  });
  server.on('tlsClientError', () => undefined);
  return {
    server,
    listen(port: number, host: string): Promise<number> {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const a = server.address();
          resolve(typeof a === 'object' && a ? a.port : port);
        });
      });
    },
    close(): Promise<void> {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function refuseHttp(socket: TLSSocket, status: number) {
  socket.end(`HTTP/1.1 ${status} ${HTTP_STATUS[status] ?? 'Error'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

async function serveConnection(socket: TLSSocket, opts: GatewayOptions, step: number) {
  let timer = setTimeout(() => socket.destroy(), step);
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => socket.destroy(), step);
  };
  socket.once('close', () => clearTimeout(timer));

  // 1. The request head.
  let head = Buffer.alloc(0);
  let rest: Buffer;
  let request: HttpHead;
  try {
    ({ request, rest } = await new Promise<{ request: HttpHead; rest: Buffer }>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > MAX_HEAD) reject(new Error('head too large'));
          return;
        }
        socket.off('data', onData);
        try {
          resolve({ request: parseHead(head.subarray(0, end).toString('latin1')), rest: head.subarray(end + 4) });
        } catch (err) {
          reject(err);
        }
      };
      socket.on('data', onData);
      socket.once('close', () => reject(new Error('closed')));
    }));
  } catch (err) {
    opts.onFailure?.(`bad request: ${(err as Error).message}`);
    return refuseHttp(socket, 400);
  }
  if (!/^\/remotedesktopgateway\/?(\?.*)?$/i.test(request.path)) return refuseHttp(socket, 404);
  if (request.method !== 'RDG_OUT_DATA' && request.method !== 'RDG_IN_DATA') return refuseHttp(socket, 405);
  const key = request.headers.get('sec-websocket-key');
  if ((request.headers.get('upgrade') ?? '').toLowerCase() !== 'websocket' || !key) {
    // The legacy two-connection HTTP transport is not offered: clients fall back to nothing else.
    opts.onFailure?.('not a websocket upgrade');
    return refuseHttp(socket, 426);
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptValue(key)}\r\n\r\n`);
  rearm();

  // 2. The tunnel's packets inside the websocket's binary frames.
  const frames = frameReader({ max: 1 << 20 });
  const packets = packetReader();
  let target: RdpTarget | undefined;
  let desktopId: string | undefined;
  let state: 'handshake' | 'tunnel' | 'auth' | 'channel' | 'data' | 'closed' = 'handshake';
  let upstream: Socket | undefined;
  let ended: ((why: string) => void) | undefined;
  let fragments: Buffer[] = [];

  const sendPacket = (p: Buffer) => {
    if (!socket.destroyed) socket.write(frame(OPCODE.binary, p));
  };
  const close = (why?: string) => {
    if (state === 'closed') return;
    if (why) opts.onFailure?.(why, desktopId);
    state = 'closed';
    clearTimeout(timer);
    ended?.(why ?? 'the tunnel ended');
    upstream?.destroy();
    if (!socket.destroyed) socket.end(frame(OPCODE.close, Buffer.from([0x03, 0xe8])));
  };

  const onPacket = async (p: Packet) => {
    switch (p.type) {
      case PKT.keepalive:
        return;
      case PKT.handshakeRequest: {
        if (state !== 'handshake') return close('handshake out of order');
        const h = parseHandshakeRequest(p.body);
        if (!(h.extendedAuth & EXTENDED_AUTH.paa)) {
          sendPacket(handshakeResponse(HRESULT.capabilityMismatch, 0));
          return close('the client offers no PAA cookie');
        }
        sendPacket(handshakeResponse(HRESULT.ok, EXTENDED_AUTH.paa));
        state = 'tunnel';
        return rearm();
      }
      case PKT.tunnelCreate: {
        if (state !== 'tunnel') return close('tunnel out of order');
        const t = parseTunnelCreate(p.body);
        const grant: Authorization = t.paaCookie ? await opts.authorize(t.paaCookie) : { ok: false, status: 401 };
        if (!grant.ok) {
          sendPacket(tunnelResponse(HRESULT.cookieAccessDenied));
          return close(`token refused (${grant.status})`);
        }
        target = grant.target;
        desktopId = grant.desktopId;
        sendPacket(tunnelResponse(HRESULT.ok, 1));
        state = 'auth';
        return rearm();
      }
      case PKT.tunnelAuth: {
        if (state !== 'auth') return close('tunnel auth out of order');
        sendPacket(tunnelAuthResponse(HRESULT.ok));
        state = 'channel';
        return rearm();
      }
      case PKT.channelCreate: {
        if (state !== 'channel' || !target) return close('channel out of order');
        const c = parseChannelCreate(p.body);
        if (!channelAllowed(c, target)) {
          sendPacket(channelResponse(HRESULT.rapAccessDenied));
          return close('channel to another endpoint refused');
        }
        try {
          upstream = await new Promise<Socket>((resolve, reject) => {
            const s = tcpConnect({ host: target!.host, port: target!.port });
            const t = setTimeout(() => {
              s.destroy();
              reject(new Error('connect timeout'));
            }, step);
            s.once('connect', () => {
              clearTimeout(t);
              s.off('error', reject);
              resolve(s);
            });
            s.once('error', (e) => {
              clearTimeout(t);
              reject(e);
            });
          });
        } catch (err) {
          sendPacket(channelResponse(HRESULT.tsConnectFailed));
          return close(`connect failed (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
        }
        if ((state as string) === 'closed') {
          upstream.destroy();
          return;
        }
        upstream.setNoDelay(true);
        sendPacket(channelResponse(HRESULT.ok, 1));
        state = 'data';
        clearTimeout(timer);
        ended = opts.onRelay?.(desktopId!);
        upstream.on('data', (chunk: Buffer) => {
          for (const d of dataPackets(chunk)) {
            if (!socket.write(frame(OPCODE.binary, d))) upstream!.pause();
          }
        });
        socket.on('drain', () => upstream?.resume());
        upstream.once('close', () => {
          if (state === 'data') sendPacket(closePacket(PKT.closeChannel));
          close();
        });
        upstream.on('error', () => close());
        return;
      }
      case PKT.data: {
        if (state !== 'data' || !upstream) return close('data before the channel');
        if (!upstream.write(parseData(p.body))) {
          socket.pause();
          upstream.once('drain', () => socket.resume());
        }
        return;
      }
      case PKT.closeChannel:
        sendPacket(closePacket(PKT.closeChannelResponse));
        return close();
      case PKT.closeChannelResponse:
        return close();
      default:
        return; // service messages, reauth: nothing to do
    }
  };

  // Packets are handled one after another (authorisation and the connection are asynchronous).
  let queue = Promise.resolve();
  const onFrames = (chunk: Buffer) => {
    let list;
    try {
      list = frames(chunk);
    } catch (err) {
      return close((err as Error).message);
    }
    for (const f of list) {
      if (f.opcode === OPCODE.close) return close();
      if (f.opcode === OPCODE.ping) {
        socket.write(frame(OPCODE.pong, f.payload));
        continue;
      }
      if (f.opcode === OPCODE.pong) continue;
      if (f.opcode === OPCODE.text) return close('text frame');
      fragments.push(f.payload);
      if (!f.fin) continue;
      const message = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments);
      fragments = [];
      let got: Packet[];
      try {
        got = packets(message);
      } catch (err) {
        return close((err as Error).message);
      }
      for (const p of got) {
        queue = queue.then(async () => {
          if (state !== 'closed') await onPacket(p);
        }).catch((err) => close(`failed: ${(err as Error).message}`));
      }
    }
  };
  socket.on('data', onFrames);
  socket.once('close', () => close());
  if (rest.length) onFrames(rest);
}
