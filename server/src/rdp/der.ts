/**
 * The little of DER (X.690) that RDCleanPath needs: definite lengths, INTEGER, UTF8String,
 * OCTET STRING, SEQUENCE and EXPLICIT context tags [n].
 */
export const TAG = { integer: 0x02, octets: 0x04, utf8: 0x0c, sequence: 0x30 } as const;
export const contextTag = (n: number) => 0xa0 + n;

export type Tlv = { tag: number; value: Buffer; /** bytes of the whole TLV */ size: number };

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const tlv = (tag: number, value: Buffer) => Buffer.concat([Buffer.from([tag]), lengthBytes(value.length), value]);

/** A non-negative INTEGER in its shortest two's complement form. */
export function integer(n: number): Buffer {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('DER integer out of range');
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  if (bytes.length === 0 || bytes[0]! & 0x80) bytes.unshift(0);
  return tlv(TAG.integer, Buffer.from(bytes));
}
export const utf8 = (s: string) => tlv(TAG.utf8, Buffer.from(s, 'utf8'));
export const octets = (b: Buffer) => tlv(TAG.octets, b);
export const sequence = (items: Buffer[]) => tlv(TAG.sequence, Buffer.concat(items));
export const explicit = (n: number, inner: Buffer) => tlv(contextTag(n), inner);

/**
 * The size of the TLV at the start of `buf`: its total byte count, `null` while more bytes are
 * needed, or throws when the header is not DER (indefinite or over-long lengths, multi-byte tags).
 */
export function tlvSize(buf: Buffer, max = 1 << 20): number | null {
  if (buf.length < 2) return null;
  if ((buf[0]! & 0x1f) === 0x1f) throw new Error('multi-byte tags are not used');
  const first = buf[1]!;
  if (first < 0x80) return 2 + first;
  const count = first & 0x7f;
  if (count === 0 || count > 3) throw new Error('unsupported DER length');
  if (buf.length < 2 + count) return null;
  let len = 0;
  for (let i = 0; i < count; i++) len = len * 256 + buf[2 + i]!;
  if (len < 0x80 || (count > 1 && buf[2] === 0)) throw new Error('non-minimal DER length');
  const total = 2 + count + len;
  if (total > max) throw new Error('DER value too large');
  return total;
}

/** Reads one complete TLV at `offset`; throws on a truncated or malformed one. */
export function readTlv(buf: Buffer, offset = 0): Tlv {
  const rest = buf.subarray(offset);
  const size = tlvSize(rest);
  if (size === null || size > rest.length) throw new Error('truncated DER value');
  const headerLen = rest[1]! < 0x80 ? 2 : 2 + (rest[1]! & 0x7f);
  return { tag: rest[0]!, value: rest.subarray(headerLen, size), size };
}

/** The TLVs one after another in `buf` (a constructed value's content). */
export function readAll(buf: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < buf.length; ) {
    const t = readTlv(buf, at);
    out.push(t);
    at += t.size;
  }
  return out;
}

export function readInteger(t: Tlv): number {
  if (t.tag !== TAG.integer || t.value.length === 0 || t.value.length > 6) throw new Error('expected a small INTEGER');
  if (t.value[0]! & 0x80) throw new Error('negative INTEGER');
  return t.value.reduce((n, b) => n * 256 + b, 0);
}
export function readUtf8(t: Tlv): string {
  if (t.tag !== TAG.utf8) throw new Error('expected a UTF8String');
  return t.value.toString('utf8');
}
export function readOctets(t: Tlv): Buffer {
  if (t.tag !== TAG.octets) throw new Error('expected an OCTET STRING');
  return t.value;
}
