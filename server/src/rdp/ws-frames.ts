/**
 * Just enough RFC 6455 for the RD Gateway's websocket (the `ws` package refuses FreeRDP's
 * upgrade: its method is RDG_OUT_DATA and its key is not base64): the accept value, a frame
 * reader for the client's masked frames, and unmasked server frames.
 */
import { createHash } from 'node:crypto';

export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** Sec-WebSocket-Accept for a key, taken as the client sent it (whatever its characters). */
export const acceptValue = (key: string) => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

export type Frame = { fin: boolean; opcode: number; payload: Buffer };

/** Splits the client's bytes into frames (unmasked); throws on frames too large or not masked. */
export function frameReader(opts: { max?: number; requireMask?: boolean } = {}) {
  const max = opts.max ?? 1 << 20;
  const requireMask = opts.requireMask ?? true;
  let buf: Buffer = Buffer.alloc(0);
  return (chunk: Buffer): Frame[] => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    const out: Frame[] = [];
    for (;;) {
      if (buf.length < 2) break;
      const fin = (buf[0]! & 0x80) !== 0;
      const opcode = buf[0]! & 0x0f;
      const masked = (buf[1]! & 0x80) !== 0;
      if (requireMask && !masked) throw new Error('client frames must be masked');
      let len = buf[1]! & 0x7f;
      let at = 2;
      if (len === 126) {
        if (buf.length < 4) break;
        len = buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (buf.length < 10) break;
        const big = buf.readBigUInt64BE(2);
        if (big > BigInt(max)) throw new Error('websocket frame too large');
        len = Number(big);
        at = 10;
      }
      if (len > max) throw new Error('websocket frame too large');
      const maskAt = at;
      if (masked) at += 4;
      if (buf.length < at + len) break;
      const payload = Buffer.from(buf.subarray(at, at + len));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= buf[maskAt + (i & 3)]!;
      out.push({ fin, opcode, payload });
      buf = buf.subarray(at + len);
    }
    return out;
  };
}

/** A frame as a server sends it (unmasked), or masked as a client sends it (tests). */
export function frame(opcode: number, payload: Buffer, mask?: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (len < 126) head[1] = len;
  else if (len < 65536) {
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  if (!mask) return Buffer.concat([head, payload]);
  head[1]! |= 0x80;
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}
