/**
 * MS-TSGU (Terminal Services Gateway) HTTP transport packets, as they travel inside the
 * websocket of an RD Gateway connection. Little-endian; every packet is HTTP_PACKET_HEADER
 * (type u16, reserved u16, length u32 including the header) and a body ([MS-TSGU] 2.2.10).
 */
export const PKT = {
  handshakeRequest: 0x1,
  handshakeResponse: 0x2,
  extendedAuth: 0x3,
  tunnelCreate: 0x4,
  tunnelResponse: 0x5,
  tunnelAuth: 0x6,
  tunnelAuthResponse: 0x7,
  channelCreate: 0x8,
  channelResponse: 0x9,
  data: 0xa,
  serviceMessage: 0xb,
  reauth: 0xc,
  keepalive: 0xd,
  closeChannel: 0x10,
  closeChannelResponse: 0x11,
} as const;

/** HTTP_EXTENDED_AUTH flags: the client's ways to authenticate. PAA = a cookie (our token). */
export const EXTENDED_AUTH = { smartCard: 0x1, paa: 0x2, sspiNtlm: 0x4 } as const;

/** HRESULTs of [MS-TSGU] 2.2.6 the gateway answers with. */
export const HRESULT = {
  ok: 0,
  internalError: 0x800759d8,
  rapAccessDenied: 0x800759da,
  tsConnectFailed: 0x800759dd,
  capabilityMismatch: 0x800759e9,
  cookieBadPacket: 0x800759f7,
  cookieAccessDenied: 0x800759f8,
} as const;

/** A packet may not be larger than this (data chunks are under 64 KB; the others are small). */
export const MAX_PACKET = 70 * 1024;

export type Packet = { type: number; body: Buffer };

/** Splits a byte stream into packets: push bytes, get the complete packets; throws on a bad header. */
export function packetReader() {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk: Buffer): Packet[] => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    const out: Packet[] = [];
    while (buf.length >= 8) {
      const type = buf.readUInt16LE(0);
      const length = buf.readUInt32LE(4);
      if (length < 8 || length > MAX_PACKET) throw new Error('bad MS-TSGU packet length');
      if (buf.length < length) break;
      out.push({ type, body: Buffer.from(buf.subarray(8, length)) });
      buf = buf.subarray(length);
    }
    return out;
  };
}

export function packet(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16LE(type, 0);
  head.writeUInt32LE(8 + body.length, 4);
  return Buffer.concat([head, body]);
}

class Reader {
  at = 0;
  constructor(readonly b: Buffer) {}
  need(n: number) {
    if (this.at + n > this.b.length) throw new Error('truncated MS-TSGU packet');
  }
  u8() {
    this.need(1);
    return this.b.readUInt8(this.at++);
  }
  u16() {
    this.need(2);
    const v = this.b.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }
  u32() {
    this.need(4);
    const v = this.b.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  bytes(n: number) {
    this.need(n);
    const v = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
}

/** UTF-16LE text without its trailing NULs. */
const utf16 = (b: Buffer) => b.toString('utf16le').replace(/\0+$/, '');

/** 2.2.10.10 HTTP_HANDSHAKE_REQUEST_PACKET */
export function parseHandshakeRequest(body: Buffer) {
  const r = new Reader(body);
  return { verMajor: r.u8(), verMinor: r.u8(), clientVersion: r.u16(), extendedAuth: r.u16() };
}

/** 2.2.10.11 HTTP_HANDSHAKE_RESPONSE_PACKET */
export const handshakeResponse = (errorCode: number, extendedAuth: number) => {
  const b = Buffer.alloc(10);
  b.writeUInt32LE(errorCode >>> 0, 0);
  b.writeUInt8(1, 4);
  b.writeUInt8(0, 5);
  b.writeUInt16LE(0, 6);
  b.writeUInt16LE(extendedAuth, 8);
  return packet(PKT.handshakeResponse, b);
};

const TUNNEL_FIELD = { paaCookie: 0x1, reauth: 0x2 } as const;

/** 2.2.10.18 HTTP_TUNNEL_PACKET (+ 2.2.10.19 optional fields): the PAA cookie, when present. */
export function parseTunnelCreate(body: Buffer) {
  const r = new Reader(body);
  const capsFlags = r.u32();
  const fieldsPresent = r.u16();
  r.u16();
  if (fieldsPresent & TUNNEL_FIELD.reauth) r.bytes(8);
  let paaCookie: string | undefined;
  if (fieldsPresent & TUNNEL_FIELD.paaCookie) {
    const len = r.u16();
    paaCookie = utf16(Buffer.from(r.bytes(len)));
  }
  return { capsFlags, fieldsPresent, paaCookie };
}

/** 2.2.10.20 HTTP_TUNNEL_RESPONSE: on success the tunnel id and our capabilities (idle timeout). */
export function tunnelResponse(statusCode: number, tunnelId = 0) {
  if (statusCode !== 0) {
    const b = Buffer.alloc(10);
    b.writeUInt16LE(0, 0);
    b.writeUInt32LE(statusCode >>> 0, 2);
    return packet(PKT.tunnelResponse, b);
  }
  const b = Buffer.alloc(18);
  b.writeUInt16LE(0, 0); // serverVersion
  b.writeUInt32LE(0, 2); // statusCode
  b.writeUInt16LE(0x1 | 0x2, 6); // fieldsPresent: tunnel id, caps
  b.writeUInt16LE(0, 8);
  b.writeUInt32LE(tunnelId >>> 0, 10);
  b.writeUInt32LE(0x2, 14); // HTTP_CAPABILITY_IDLE_TIMEOUT
  return packet(PKT.tunnelResponse, b);
}

/** 2.2.10.14 HTTP_TUNNEL_AUTH_PACKET: the client's name (not used for anything). */
export function parseTunnelAuth(body: Buffer) {
  const r = new Reader(body);
  const fieldsPresent = r.u16();
  const len = r.u16();
  return { fieldsPresent, clientName: utf16(Buffer.from(r.bytes(len))) };
}

/** Redirection flags of 2.2.10.16: these devices stay on the user's computer. */
export const REDIR = { enableAll: 0x80000000, disableAll: 0x40000000, drive: 0x1, printer: 0x2, port: 0x4, clipboard: 0x8, pnp: 0x10 } as const;

/** 2.2.10.16 HTTP_TUNNEL_AUTH_RESPONSE: redirection flags and the idle timeout (minutes, 0 = none). */
export function tunnelAuthResponse(errorCode: number, redirFlags = REDIR.drive | REDIR.printer | REDIR.port | REDIR.pnp, idleMinutes = 0) {
  const b = Buffer.alloc(16);
  b.writeUInt32LE(errorCode >>> 0, 0);
  b.writeUInt16LE(errorCode === 0 ? 0x3 : 0, 4);
  b.writeUInt16LE(0, 6);
  b.writeUInt32LE(redirFlags >>> 0, 8);
  b.writeUInt32LE(idleMinutes, 12);
  return packet(PKT.tunnelAuthResponse, errorCode === 0 ? b : b.subarray(0, 8));
}

/** 2.2.10.2 HTTP_CHANNEL_PACKET: where the client wants to go (names and port). */
export function parseChannelCreate(body: Buffer) {
  const r = new Reader(body);
  const numResources = r.u8();
  const numAltResources = r.u8();
  const port = r.u16();
  const protocol = r.u16();
  const resources: string[] = [];
  for (let i = 0; i < numResources + numAltResources; i++) {
    const len = r.u16();
    resources.push(utf16(Buffer.from(r.bytes(len))));
  }
  return { resources: resources.slice(0, numResources), altResources: resources.slice(numResources), port, protocol };
}

/** 2.2.10.4 HTTP_CHANNEL_RESPONSE: with the channel id on success (Windows' client wants it). */
export function channelResponse(errorCode: number, channelId = 1) {
  const b = Buffer.alloc(errorCode === 0 ? 12 : 8);
  b.writeUInt32LE(errorCode >>> 0, 0);
  b.writeUInt16LE(errorCode === 0 ? 0x1 : 0, 4);
  b.writeUInt16LE(0, 6);
  if (errorCode === 0) b.writeUInt32LE(channelId, 8);
  return packet(PKT.channelResponse, b);
}

/** 2.2.10.6 HTTP_DATA_PACKET: cbDataLength u16 + bytes. */
export function parseData(body: Buffer): Buffer {
  const r = new Reader(body);
  const len = r.u16();
  return Buffer.from(r.bytes(len));
}

/** Data packets for `bytes`, in chunks that fit the u16 length. */
export function dataPackets(bytes: Buffer, chunk = 0xfff0): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += chunk) {
    const part = bytes.subarray(at, at + chunk);
    const b = Buffer.alloc(2 + part.length);
    b.writeUInt16LE(part.length, 0);
    part.copy(b, 2);
    out.push(packet(PKT.data, b));
  }
  return out;
}

/** 2.2.10.23 HTTP_CLOSE_PACKET (close channel, and its response). */
export const closePacket = (type: typeof PKT.closeChannel | typeof PKT.closeChannelResponse, statusCode = 0) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(statusCode >>> 0, 0);
  return packet(type, b);
};

/** Client-side builders, for the tests and the benchmark (the same layouts as FreeRDP writes). */
export const client = {
  handshake: (extendedAuth = EXTENDED_AUTH.paa) => {
    const b = Buffer.alloc(6);
    b.writeUInt8(1, 0);
    b.writeUInt8(0, 1);
    b.writeUInt16LE(0, 2);
    b.writeUInt16LE(extendedAuth, 4);
    return packet(PKT.handshakeRequest, b);
  },
  tunnelCreate: (paaCookie?: string) => {
    const head = Buffer.alloc(8);
    head.writeUInt32LE(0x0d, 0);
    head.writeUInt16LE(paaCookie === undefined ? 0 : TUNNEL_FIELD.paaCookie, 4);
    if (paaCookie === undefined) return packet(PKT.tunnelCreate, head);
    const cookie = Buffer.from(`${paaCookie}\0`, 'utf16le');
    const len = Buffer.alloc(2);
    len.writeUInt16LE(cookie.length, 0);
    return packet(PKT.tunnelCreate, Buffer.concat([head, len, cookie]));
  },
  tunnelAuth: (name: string) => {
    const n = Buffer.from(`${name}\0`, 'utf16le');
    const head = Buffer.alloc(4);
    head.writeUInt16LE(0, 0);
    head.writeUInt16LE(n.length, 2);
    return packet(PKT.tunnelAuth, Buffer.concat([head, n]));
  },
  channelCreate: (host: string, port: number) => {
    const head = Buffer.alloc(6);
    head.writeUInt8(1, 0);
    head.writeUInt8(0, 1);
    head.writeUInt16LE(port, 2);
    head.writeUInt16LE(3, 4);
    const n = Buffer.from(`${host}\0`, 'utf16le');
    const len = Buffer.alloc(2);
    len.writeUInt16LE(n.length, 0);
    return packet(PKT.channelCreate, Buffer.concat([head, len, n]));
  },
};

/** The status code of a response packet (handshake, tunnel, tunnel auth, channel): tests read it. */
export function statusOf(p: Packet): number {
  if (p.type === PKT.tunnelResponse) return p.body.readUInt32LE(2);
  return p.body.readUInt32LE(0);
}
