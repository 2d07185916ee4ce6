/**
 * RDP framing the proxy looks at: TPKT (T.123) around X.224, and the Client Info PDU
 * ([MS-RDPBCGR] 2.2.1.11) whose INFO_AUTOLOGON flag says "log on with the credentials in this PDU".
 */

/** Bytes of the TPKT at the start of `buf` (version 3, big-endian u16 length at bytes 2–3), or null while incomplete. */
export function tpktSize(buf: Buffer): number | null {
  if (buf.length < 4) return null;
  if (buf[0] !== 3) throw new Error('not a TPKT');
  const len = buf.readUInt16BE(2);
  if (len < 7) throw new Error('bad TPKT length');
  return len;
}

/** X.224 Connection Request/Confirm: the TPKT's TPDU code (0xE0 request, 0xD0 confirm). */
export const x224Code = (tpkt: Buffer) => (tpkt.length >= 6 ? tpkt[5]! & 0xf0 : -1);

const SEC_INFO_PKT = 0x0040;
export const INFO_AUTOLOGON = 0x00000008;
const MCS_SEND_DATA_REQUEST = 25; // DomainMCSPDU choice

/**
 * Where the Client Info PDU's `flags` field lies in a slow-path TPKT, or -1 when the TPKT is not
 * a Client Info PDU: TPKT (4) + X.224 data (3) + MCS Send Data Request (type, initiator,
 * channel, priority, PER length) + basic security header with SEC_INFO_PKT + CodePage (4).
 * Without Standard RDP Security (TLS or CredSSP) the PDU is not encrypted.
 */
export function clientInfoFlagsOffset(tpkt: Buffer): number {
  if (tpkt.length < 7 || tpkt[0] !== 3 || tpkt[5] !== 0xf0) return -1; // X.224 Data TPDU
  let at = 7;
  if (tpkt.length < at + 6 || tpkt[at]! >> 2 !== MCS_SEND_DATA_REQUEST) return -1;
  at += 1 + 2 + 2 + 1; // type, initiator, channelId, dataPriority/segmentation
  const lenByte = tpkt[at]!;
  at += lenByte & 0x80 ? 2 : 1;
  if (tpkt.length < at + 4 + 8) return -1;
  const secFlags = tpkt.readUInt16LE(at);
  if (!(secFlags & SEC_INFO_PKT) || secFlags & 0x0008 /* SEC_ENCRYPT */) return -1;
  return at + 4 + 4;
}

/**
 * Watches the client's first slow-path PDUs and sets INFO_AUTOLOGON on its Client Info PDU, so
 * that the server logs the user on with the credentials in it instead of asking again. Answers
 * the bytes to forward; after that PDU (or a fast-path byte, or too many PDUs) it passes
 * everything through untouched.
 */
export function autologonRewriter(maxPdus = 32) {
  let pending: Buffer = Buffer.alloc(0);
  let done = false;
  let seen = 0;
  return {
    get done() {
      return done;
    },
    push(chunk: Buffer): Buffer {
      if (done) return chunk;
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const out: Buffer[] = [];
      while (!done && pending.length > 0) {
        if (pending[0] !== 3) {
          done = true; // fast-path input: the connection sequence is over
          break;
        }
        const size = tpktSize(pending);
        if (size === null || size > pending.length) break;
        const pdu = Buffer.from(pending.subarray(0, size));
        pending = pending.subarray(size);
        const at = clientInfoFlagsOffset(pdu);
        if (at >= 0) {
          pdu.writeUInt32LE((pdu.readUInt32LE(at) | INFO_AUTOLOGON) >>> 0, at);
          done = true;
        } else if (++seen >= maxPdus) done = true;
        out.push(pdu);
      }
      if (done && pending.length) {
        out.push(pending);
        pending = Buffer.alloc(0);
      }
      return out.length === 1 ? out[0]! : Buffer.concat(out);
    },
  };
}
