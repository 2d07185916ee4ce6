/**
 * RDCleanPath (Devolutions IronRDP, crate ironrdp-rdcleanpath): the one request a web RDP client
 * sends through its websocket before the RDP bytes, and the proxy's one answer. One DER SEQUENCE
 * whose fields are EXPLICIT context tags:
 * [0] version (3390), [1] error, [2] destination, [3] proxy_auth, [4] server_auth,
 * [5] preconnection_blob, [6] x224_connection_pdu, [7] server_cert_chain, [9] server_addr.
 */
import { explicit, integer, octets, readAll, readInteger, readOctets, readTlv, readUtf8, sequence, TAG, tlvSize, utf8 } from './der';

export const RDCLEANPATH_VERSION = 3390;
/** A request is small (the X.224 request and a token); anything larger is refused before it is buffered. */
export const RDCLEANPATH_MAX_REQUEST = 16 * 1024;
export const RDCLEANPATH_ERROR = { general: 1, negotiation: 2 } as const;

export type CleanPathRequest = {
  version: number;
  destination?: string;
  proxyAuth?: string;
  preconnectionBlob?: string;
  x224: Buffer;
};

export type CleanPathError = { code: number; httpStatus?: number; wsaError?: number; tlsAlert?: number };

/** Total bytes of the request at the start of `buf`, or null while incomplete; throws when it is not one. */
export function requestSize(buf: Buffer): number | null {
  if (buf.length > 0 && buf[0] !== TAG.sequence) throw new Error('not an RDCleanPath PDU');
  return tlvSize(buf, RDCLEANPATH_MAX_REQUEST);
}

export function decodeRequest(buf: Buffer): CleanPathRequest {
  const top = readTlv(buf);
  if (top.tag !== TAG.sequence || top.size !== buf.length) throw new Error('not an RDCleanPath PDU');
  const fields = new Map<number, Buffer>();
  for (const f of readAll(top.value)) {
    if (f.tag < 0xa0 || f.tag > 0xa9) throw new Error('unexpected RDCleanPath field');
    if (fields.has(f.tag - 0xa0)) throw new Error('repeated RDCleanPath field');
    fields.set(f.tag - 0xa0, f.value);
  }
  const inner = (n: number) => {
    const v = fields.get(n);
    if (!v) return undefined;
    const t = readTlv(v);
    if (t.size !== v.length) throw new Error('trailing bytes in an RDCleanPath field');
    return t;
  };
  const version = inner(0);
  if (!version) throw new Error('RDCleanPath version missing');
  const x224 = inner(6);
  if (!x224) throw new Error('RDCleanPath X.224 request missing');
  const text = (n: number) => {
    const t = inner(n);
    return t ? readUtf8(t) : undefined;
  };
  return {
    version: readInteger(version),
    destination: text(2),
    proxyAuth: text(3),
    preconnectionBlob: text(5),
    x224: readOctets(x224),
  };
}

/** The request as the web client writes it (tests; fields in tag order). */
export function encodeRequest(r: Omit<CleanPathRequest, 'version'> & { version?: number }): Buffer {
  const parts = [explicit(0, integer(r.version ?? RDCLEANPATH_VERSION))];
  if (r.destination !== undefined) parts.push(explicit(2, utf8(r.destination)));
  if (r.proxyAuth !== undefined) parts.push(explicit(3, utf8(r.proxyAuth)));
  if (r.preconnectionBlob !== undefined) parts.push(explicit(5, utf8(r.preconnectionBlob)));
  parts.push(explicit(6, octets(r.x224)));
  return sequence(parts);
}

/** The answer once the proxy reached the server: its X.224 confirm, its certificates (leaf first), the address it reached. */
export function encodeResponse(r: { x224: Buffer; certChain: Buffer[]; serverAddr: string }): Buffer {
  return sequence([
    explicit(0, integer(RDCLEANPATH_VERSION)),
    explicit(6, octets(r.x224)),
    explicit(7, sequence(r.certChain.map(octets))),
    explicit(9, utf8(r.serverAddr)),
  ]);
}

/** An error answer: the web client reports it as an RDCleanPath error with these details. */
export function encodeError(e: CleanPathError, x224?: Buffer): Buffer {
  const err = [explicit(0, integer(e.code))];
  if (e.httpStatus !== undefined) err.push(explicit(1, integer(e.httpStatus)));
  if (e.wsaError !== undefined) err.push(explicit(2, integer(e.wsaError)));
  if (e.tlsAlert !== undefined) err.push(explicit(3, integer(e.tlsAlert)));
  const parts = [explicit(0, integer(RDCLEANPATH_VERSION)), explicit(1, sequence(err))];
  if (x224) parts.push(explicit(6, octets(x224)));
  return sequence(parts);
}

/** Reads an answer (tests, the benchmark's client). */
export function decodeAnswer(buf: Buffer): { error?: CleanPathError; x224?: Buffer; certChain?: Buffer[]; serverAddr?: string } {
  const top = readTlv(buf);
  if (top.tag !== TAG.sequence) throw new Error('not an RDCleanPath PDU');
  const out: ReturnType<typeof decodeAnswer> = {};
  for (const f of readAll(top.value)) {
    const t = readTlv(f.value);
    switch (f.tag - 0xa0) {
      case 1: {
        const e: CleanPathError = { code: 0 };
        for (const g of readAll(t.value)) {
          const v = readInteger(readTlv(g.value));
          const n = g.tag - 0xa0;
          if (n === 0) e.code = v;
          else if (n === 1) e.httpStatus = v;
          else if (n === 2) e.wsaError = v;
          else if (n === 3) e.tlsAlert = v;
        }
        out.error = e;
        break;
      }
      case 6:
        out.x224 = readOctets(t);
        break;
      case 7:
        out.certChain = readAll(t.value).map(readOctets);
        break;
      case 9:
        out.serverAddr = readUtf8(t);
        break;
    }
  }
  return out;
}

/** Winsock codes the web client shows (wsaErrorCode) for a server that cannot be reached. */
export const WSA = { connectionRefused: 10061, timedOut: 10060, hostUnreachable: 10065, networkUnreachable: 10051 } as const;
