/**
 * A client-side defect worked round in the proxy. xrdp sends bitmap updates whose bitmap is
 * wider than its destination rectangle (it pads TS_BITMAP_DATA.width to a multiple of 4 pixels,
 * which [MS-RDPBCGR] 2.2.9.1.1.3.1.2.2 allows); the IronRDP web client (0.7.0) takes the
 * rectangle's width as the rows' stride, so every such update is drawn sheared (IronRDP issues
 * #1251, #1693; fixes not yet released). For uncompressed bitmaps the proxy crops each row to the
 * rectangle, so the client gets exactly what it expects. Compressed bitmaps cannot be cropped
 * without decoding them: the RDP guest therefore runs xrdp with `bitmap_compression=false`.
 *
 * Server → client bytes (after TLS) are split into PDUs, slow-path (TPKT) and fast-path, whose
 * bitmap updates are rewritten; everything else passes unchanged.
 */

/** Bytes of the PDU at the start of `buf` (TPKT or fast-path output), or null while incomplete. */
export function serverPduSize(buf: Buffer): number | null {
  if (buf.length < 2) return null;
  if (buf[0] === 3) return buf.length < 4 ? null : buf.readUInt16BE(2);
  if ((buf[0]! & 0x3) !== 0) throw new Error('not a fast-path output PDU');
  const b1 = buf[1]!;
  if (!(b1 & 0x80)) return b1;
  return buf.length < 3 ? null : ((b1 & 0x7f) << 8) | buf[2]!;
}

const FASTPATH_UPDATETYPE_BITMAP = 0x1;
const FASTPATH_FRAGMENT_SINGLE = 0x0;
const FASTPATH_OUTPUT_COMPRESSION_USED = 0x2;
const BITMAP_COMPRESSION = 0x0001;

/**
 * Crops the uncompressed bitmaps of a TS_UPDATE_BITMAP_DATA to their destination rectangles;
 * answers the same buffer when nothing needed it. Rows keep a 4-byte alignment (as the
 * specification lays out uncompressed bitmaps).
 */
export function cropBitmapUpdate(data: Buffer): Buffer {
  if (data.length < 4 || data.readUInt16LE(0) !== 1) return data;
  const count = data.readUInt16LE(2);
  const parts: Buffer[] = [data.subarray(0, 4)];
  let changed = false;
  let at = 4;
  for (let i = 0; i < count; i++) {
    if (at + 18 > data.length) return data;
    const head = data.subarray(at, at + 18);
    const [left, top, right, bottom, width, height, bpp, flags, length] = Array.from({ length: 9 }, (_, k) => head.readUInt16LE(k * 2)) as number[] as [
      number, number, number, number, number, number, number, number, number,
    ];
    const body = data.subarray(at + 18, at + 18 + length);
    if (body.length !== length) return data;
    at += 18 + length;
    const dw = right - left + 1;
    const dh = bottom - top + 1;
    const Bpp = (bpp + 7) >> 3;
    const srcStride = ((width * Bpp + 3) >> 2) << 2;
    if (flags & BITMAP_COMPRESSION || width <= dw || dh !== height || dw <= 0 || srcStride * height !== length) {
      parts.push(head, body);
      continue;
    }
    const dstStride = ((dw * Bpp + 3) >> 2) << 2;
    const out = Buffer.alloc(dstStride * height);
    for (let row = 0; row < height; row++) body.copy(out, row * dstStride, row * srcStride, row * srcStride + dw * Bpp);
    const newHead = Buffer.from(head);
    newHead.writeUInt16LE(dw, 8);
    newHead.writeUInt16LE(out.length, 16);
    parts.push(newHead, out);
    changed = true;
  }
  if (!changed) return data;
  if (at < data.length) parts.push(data.subarray(at));
  return Buffer.concat(parts);
}

/** Rewrites one fast-path output PDU's bitmap updates; answers the PDU itself when nothing changed. */
export function fixFastPathPdu(pdu: Buffer): Buffer {
  const headerLen = pdu[1]! & 0x80 ? 3 : 2;
  if ((pdu[0]! >> 6) & 0x2) return pdu; // encrypted (Standard RDP Security): not ours to read
  const updates: Buffer[] = [];
  let changed = false;
  let at = headerLen;
  while (at < pdu.length) {
    const start = at;
    const updateHeader = pdu[at++]!;
    const code = updateHeader & 0x0f;
    const fragmentation = (updateHeader >> 4) & 0x3;
    const compression = (updateHeader >> 6) & 0x3;
    if (compression & FASTPATH_OUTPUT_COMPRESSION_USED) at++;
    if (at + 2 > pdu.length) return pdu;
    const size = pdu.readUInt16LE(at);
    at += 2;
    const data = pdu.subarray(at, at + size);
    if (data.length !== size) return pdu;
    at += size;
    if (code === FASTPATH_UPDATETYPE_BITMAP && fragmentation === FASTPATH_FRAGMENT_SINGLE && !(compression & FASTPATH_OUTPUT_COMPRESSION_USED)) {
      const fixed = cropBitmapUpdate(data);
      if (fixed !== data) {
        const h = Buffer.alloc(3);
        h[0] = updateHeader;
        h.writeUInt16LE(fixed.length, 1);
        updates.push(h, fixed);
        changed = true;
        continue;
      }
    }
    updates.push(pdu.subarray(start, at));
  }
  if (!changed) return pdu;
  const body = Buffer.concat(updates);
  const total = 3 + body.length;
  if (total > 0x7fff) return pdu; // cropping only shrinks; kept for safety
  const head = Buffer.from([pdu[0]!, 0x80 | (total >> 8), total & 0xff]);
  return Buffer.concat([head, body]);
}

const MCS_SEND_DATA_INDICATION = 26;
const PDUTYPE_DATAPDU = 0x7;
const PDUTYPE2_UPDATE = 0x02;

/**
 * Rewrites a slow-path Update PDU's bitmaps (TPKT, X.224 data, MCS Send Data Indication, Share
 * Control and Share Data headers, TS_UPDATE_BITMAP_DATA), fixing every length on the way; answers
 * the PDU itself when it is something else or nothing changed.
 */
export function fixSlowPathPdu(pdu: Buffer): Buffer {
  if (pdu.length < 8 || pdu[4] !== 2 || pdu[5] !== 0xf0 || pdu[7]! >> 2 !== MCS_SEND_DATA_INDICATION) return pdu;
  const lenAt = 7 + 6;
  if (pdu.length < lenAt + 2) return pdu;
  const longLength = (pdu[lenAt]! & 0x80) !== 0;
  const shareAt = lenAt + (longLength ? 2 : 1);
  if (pdu.length < shareAt + 18 + 4) return pdu;
  if ((pdu.readUInt16LE(shareAt + 2) & 0xf) !== PDUTYPE_DATAPDU) return pdu;
  if (pdu[shareAt + 14] !== PDUTYPE2_UPDATE || pdu[shareAt + 15] !== 0) return pdu; // compressed (bulk) data: left alone
  const data = pdu.subarray(shareAt + 18);
  const fixed = cropBitmapUpdate(data);
  if (fixed === data) return pdu;
  const out = Buffer.concat([pdu.subarray(0, shareAt + 18), fixed]);
  const mcsLength = out.length - shareAt;
  if (!longLength && mcsLength >= 0x80) return pdu; // cropping only shrinks; kept for safety
  out.writeUInt16BE(out.length, 2);
  if (longLength) out.writeUInt16BE(0x8000 | mcsLength, lenAt);
  else out[lenAt] = mcsLength;
  // Share Control totalLength, and the Share Data uncompressedLength that servers count from
  // different places: both shrink by what the crop took off.
  const removed = pdu.length - out.length;
  out.writeUInt16LE(pdu.readUInt16LE(shareAt) - removed, shareAt);
  out.writeUInt16LE(pdu.readUInt16LE(shareAt + 12) - removed, shareAt + 12);
  return out;
}

/** A stream rewriter: push the server's bytes, get the bytes to send on (whole PDUs only). */
export function serverOutputFixer() {
  let pending: Buffer = Buffer.alloc(0);
  let broken = false;
  return (chunk: Buffer): Buffer => {
    if (broken) return chunk;
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    const out: Buffer[] = [];
    for (;;) {
      let size: number | null;
      try {
        size = serverPduSize(pending);
      } catch {
        broken = true; // not a stream we understand: pass everything through from here
        out.push(pending);
        pending = Buffer.alloc(0);
        break;
      }
      if (size === null || size > pending.length) break;
      if (size < 2) {
        broken = true;
        out.push(pending);
        pending = Buffer.alloc(0);
        break;
      }
      const pdu = pending.subarray(0, size);
      pending = pending.subarray(size);
      out.push(pdu[0] === 3 ? fixSlowPathPdu(pdu) : fixFastPathPdu(pdu));
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  };
}
