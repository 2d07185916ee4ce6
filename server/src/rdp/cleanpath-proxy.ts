/**
 * The browser RDP viewer's websocket: the RDCleanPath proxy the IronRDP web client needs. The
 * client's first message names a token (proxy_auth) and carries its X.224 Connection Request;
 * the proxy asks `authorize` where that token leads (never where the client says: a destination
 * in the PDU that is not the token's own is refused), connects by TCP, forwards the request,
 * reads the server's confirm, makes the TLS handshake itself and answers the confirm and the
 * server's certificates. From then on it relays: the client's RDP bytes (in clear inside the
 * websocket) into the TLS stream, the server's out. Failures before the relay are answered as
 * RDCleanPath error PDUs the page shows (HTTP-like status, Winsock code, TLS alert).
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket, type PeerCertificate, type DetailedPeerCertificate } from 'node:tls';
import type { WebSocket, RawData } from 'ws';
import { decodeRequest, encodeError, encodeResponse, RDCLEANPATH_ERROR, RDCLEANPATH_VERSION, requestSize, WSA, type CleanPathError } from './rdcleanpath';
import { autologonRewriter, tpktSize, x224Code } from './rdp-frames';
import { serverOutputFixer } from './bitmap-fix';

export type RdpTarget = { host: string; port: number };
export type Authorization = { ok: true; target: RdpTarget; desktopId: string } | { ok: false; status: 401 | 403 | 404 | 409 };

export type CleanPathOptions = {
  /** Spends the token and answers its desktop's RDP endpoint, or why not. */
  authorize(token: string): Promise<Authorization>;
  /** Sets INFO_AUTOLOGON in the client's Client Info PDU (the web client leaves it off; see rdp-frames.ts). */
  autologon: boolean;
  /** Bound of each step before the relay: the request, the TCP connection, the confirm, the TLS handshake. */
  stepTimeoutMs?: number;
  /** Told once the relay runs (a viewer opened) and, in that case, when and why it ends. */
  onRelay?(desktopId: string): (why: string) => void;
  /** A failure, for the log (never the token or the address). */
  onFailure?(why: string, desktopId?: string): void;
};

export type CleanPathOutcome = { relayed: true; desktopId: string } | { relayed: false; why: string };

const WSA_OF: Record<string, number> = {
  ECONNREFUSED: WSA.connectionRefused,
  ETIMEDOUT: WSA.timedOut,
  EHOSTUNREACH: WSA.hostUnreachable,
  ENETUNREACH: WSA.networkUnreachable,
};

class Refusal extends Error {
  constructor(
    readonly why: string,
    readonly error: CleanPathError,
    readonly x224?: Buffer,
  ) {
    super(why);
  }
}
const httpRefusal = (why: string, httpStatus: number) => new Refusal(why, { code: RDCLEANPATH_ERROR.general, httpStatus });

/** The certificates the server presented, leaf first, as DER (a self-signed one points to itself). */
export function certificateChain(tls: TLSSocket): Buffer[] {
  const out: Buffer[] = [];
  const seen = new Set<string>();
  let cert: PeerCertificate | DetailedPeerCertificate | undefined = tls.getPeerCertificate(true);
  while (cert && cert.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    out.push(cert.raw);
    cert = (cert as DetailedPeerCertificate).issuerCertificate;
  }
  return out;
}

function withTimeout<T>(ms: number, why: string, work: (done: (v: T) => void, fail: (e: Error) => void) => void | (() => void)): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let cleanup: void | (() => void);
    const timer = setTimeout(() => {
      cleanup?.();
      reject(Object.assign(new Error(why), { code: 'ETIMEDOUT' }));
    }, ms);
    cleanup = work(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

const asBuffer = (data: RawData): Buffer => (Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data));

/** The first complete request from the websocket's binary messages. */
function readRequest(ws: WebSocket, ms: number): Promise<Buffer> {
  return withTimeout(ms, 'no RDCleanPath request in time', (done, fail) => {
    let buf = Buffer.alloc(0);
    const onMessage = (data: RawData, isBinary: boolean) => {
      if (!isBinary) return fail(httpRefusal('text message', 400));
      buf = Buffer.concat([buf, asBuffer(data)]);
      let size: number | null;
      try {
        size = requestSize(buf);
      } catch (err) {
        return fail(httpRefusal((err as Error).message, 400));
      }
      if (size !== null && buf.length >= size) {
        if (buf.length > size) return fail(httpRefusal('bytes after the request', 400));
        off();
        done(buf);
      }
    };
    const onClose = () => fail(new Error('closed before the request'));
    const off = () => {
      ws.off('message', onMessage);
      ws.off('close', onClose);
    };
    ws.on('message', onMessage);
    ws.once('close', onClose);
    return off;
  });
}

function connectTcp(target: RdpTarget, ms: number): Promise<Socket> {
  return withTimeout(ms, 'connect timeout', (done, fail) => {
    const socket = tcpConnect({ host: target.host, port: target.port });
    socket.setNoDelay(true);
    socket.once('connect', () => {
      socket.off('error', fail);
      done(socket);
    });
    socket.once('error', fail);
    return () => socket.destroy();
  });
}

/** Reads exactly one TPKT (the X.224 confirm) and nothing more. */
function readTpkt(socket: Socket, ms: number): Promise<Buffer> {
  return withTimeout(ms, 'no X.224 confirm in time', (done, fail) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      let size: number | null;
      try {
        size = tpktSize(buf);
      } catch (err) {
        return fail(err as Error);
      }
      if (size === null || buf.length < size) return;
      off();
      // The server says nothing more until the client's TLS hello: nothing is left over.
      if (buf.length > size) return fail(new Error('bytes after the X.224 confirm'));
      done(buf);
    };
    const onEnd = () => fail(new Error('the server closed during negotiation'));
    const off = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', fail);
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', fail);
    return off;
  });
}

function upgradeTls(socket: Socket, ms: number): Promise<TLSSocket> {
  return withTimeout(ms, 'TLS handshake timeout', (done, fail) => {
    // The guest's certificate is self-signed; the client checks it itself (CredSSP binds to its key).
    const tls = tlsConnect({ socket, rejectUnauthorized: false });
    tls.once('secureConnect', () => {
      tls.off('error', fail);
      done(tls);
    });
    tls.once('error', fail);
    return () => tls.destroy();
  });
}

/** Serves one websocket to its end. Never throws; answers what happened. */
export async function serveCleanPath(ws: WebSocket, opts: CleanPathOptions): Promise<CleanPathOutcome> {
  const step = opts.stepTimeoutMs ?? 10_000;
  let tcp: Socket | undefined;
  let desktopId: string | undefined;
  try {
    const request = decodeRequestOrRefuse(await readRequest(ws, step));
    if (request.version !== RDCLEANPATH_VERSION) throw httpRefusal('unsupported version', 400);
    if (!request.proxyAuth) throw httpRefusal('no token', 401);
    if (request.preconnectionBlob !== undefined) throw httpRefusal('preconnection blobs are not supported', 400);
    const size = tpktSize(request.x224);
    if (size !== request.x224.length || x224Code(request.x224) !== 0xe0) throw httpRefusal('not an X.224 connection request', 400);

    const grant = await opts.authorize(request.proxyAuth);
    if (!grant.ok) throw httpRefusal(`token refused (${grant.status})`, grant.status);
    desktopId = grant.desktopId;
    const own = `${grant.target.host}:${grant.target.port}`;
    // The client names a destination too; it must be the token's own (or the address alone).
    if (request.destination !== undefined && request.destination !== own && request.destination !== grant.target.host) {
      throw httpRefusal('destination is not the desktop', 403);
    }

    try {
      tcp = await connectTcp(grant.target, step);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      throw new Refusal(`connect failed (${code || 'error'})`, { code: RDCLEANPATH_ERROR.general, httpStatus: 502, wsaError: WSA_OF[code] ?? WSA.hostUnreachable });
    }
    tcp.write(request.x224);
    const confirm = await readTpkt(tcp, step).catch((err: Error) => {
      throw new Refusal(`negotiation failed (${err.message})`, { code: RDCLEANPATH_ERROR.general, httpStatus: 502 });
    });
    // RDP_NEG_FAILURE (type 3) after the 11 bytes of TPKT and X.224 header: the client reads it.
    if (x224Code(confirm) !== 0xd0 || confirm[11] === 0x03) throw new Refusal('negotiation refused', { code: RDCLEANPATH_ERROR.negotiation }, confirm);
    const tls = await upgradeTls(tcp, step).catch((err: NodeJS.ErrnoException & { alert?: number }) => {
      throw new Refusal(`TLS failed (${err.code ?? err.message})`, { code: RDCLEANPATH_ERROR.general, httpStatus: 502, ...(err.alert !== undefined ? { tlsAlert: err.alert } : {}) });
    });
    if (ws.readyState !== ws.OPEN) throw new Error('the client left');
    ws.send(encodeResponse({ x224: confirm, certChain: certificateChain(tls), serverAddr: own }));
    await relay(ws, tls, opts.autologon, opts.onRelay?.(grant.desktopId));
    return { relayed: true, desktopId: grant.desktopId };
  } catch (err) {
    tcp?.destroy();
    const why = err instanceof Error ? err.message : String(err);
    opts.onFailure?.(why, desktopId);
    if (err instanceof Refusal && ws.readyState === ws.OPEN) {
      ws.send(encodeError(err.error, err.x224), () => ws.close(1000));
    } else if (ws.readyState === ws.OPEN) ws.close(1011);
    return { relayed: false, why };
  }
}

function decodeRequestOrRefuse(buf: Buffer) {
  try {
    return decodeRequest(buf);
  } catch (err) {
    throw httpRefusal((err as Error).message, 400);
  }
}

/** Both ways until either side ends, with backpressure on both. */
function relay(ws: WebSocket, tls: TLSSocket, autologon: boolean, ended?: (why: string) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const rewriter = autologon ? autologonRewriter() : null;
    const fixer = serverOutputFixer();
    let outstanding = 0;
    let finished = false;
    let fromClient = 0;
    let fromServer = 0;
    const finish = (why: string) => {
      if (finished) return;
      finished = true;
      ended?.(`${why} (${fromClient} bytes from the viewer, ${fromServer} from the desktop)`);
      tls.destroy();
      if (ws.readyState === ws.OPEN) ws.close(1000);
      resolve();
    };
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return finish('a text message from the viewer');
      let bytes = asBuffer(data);
      fromClient += bytes.length;
      if (rewriter) {
        try {
          bytes = rewriter.push(bytes);
        } catch {
          return finish('a Client Info PDU that could not be read');
        }
        if (!bytes.length) return;
      }
      if (!tls.write(bytes)) {
        ws.pause();
        tls.once('drain', () => ws.resume());
      }
    });
    tls.on('data', (data: Buffer) => {
      fromServer += data.length;
      const chunk = fixer(data);
      if (!chunk.length) return;
      outstanding++;
      if (outstanding > 64) tls.pause();
      ws.send(chunk, { binary: true }, () => {
        outstanding--;
        if (outstanding <= 16 && tls.isPaused()) tls.resume();
      });
    });
    ws.once('close', (code: number) => finish(`the viewer closed (${code})`));
    ws.once('error', (err: Error) => finish(`viewer error: ${err.message}`));
    tls.once('end', () => finish('the desktop ended the connection'));
    tls.once('close', () => finish('the connection to the desktop closed'));
    tls.once('error', (err: NodeJS.ErrnoException) => finish(`desktop connection error: ${err.code ?? err.message}`));
  });
}
