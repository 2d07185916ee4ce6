// Reading where a connection wants to go without answering it: the TLS ClientHello's server name
// (SNI, not terminating TLS) and the HTTP request's Host header. Pure, unit-tested.

export type Peek = { kind: 'need-more' } | { kind: 'none' } | { kind: 'name'; name: string };

/** The SNI host name of a TLS ClientHello at the start of `buf`. */
export function tlsServerName(buf: Buffer): Peek {
  if (buf.length < 5) return { kind: 'need-more' };
  if (buf[0] !== 0x16 || buf[1] !== 0x03) return { kind: 'none' };
  const recordLen = buf.readUInt16BE(3);
  if (recordLen > 16_384) return { kind: 'none' };
  if (buf.length < 5 + recordLen) return { kind: 'need-more' };
  const hs = buf.subarray(5, 5 + recordLen);
  try {
    if (hs[0] !== 0x01) return { kind: 'none' }; // ClientHello
    const hsLen = (hs[1]! << 16) | (hs[2]! << 8) | hs[3]!;
    // A ClientHello longer than one record (huge, post-quantum key shares) is not followed: refused.
    if (hsLen + 4 > hs.length) return { kind: 'none' };
    let p = 4 + 2 + 32; // version, random
    p += 1 + hs[p]!; // session id
    p += 2 + hs.readUInt16BE(p); // cipher suites
    p += 1 + hs[p]!; // compression methods
    if (p + 2 > hs.length) return { kind: 'none' };
    const extEnd = p + 2 + hs.readUInt16BE(p);
    p += 2;
    while (p + 4 <= extEnd && p + 4 <= hs.length) {
      const type = hs.readUInt16BE(p);
      const len = hs.readUInt16BE(p + 2);
      const body = hs.subarray(p + 4, p + 4 + len);
      p += 4 + len;
      if (type !== 0) continue;
      let q = 2; // server_name_list length
      while (q + 3 <= body.length) {
        const nameType = body[q]!;
        const nameLen = body.readUInt16BE(q + 1);
        const name = body.subarray(q + 3, q + 3 + nameLen).toString('latin1');
        if (nameType === 0) return validName(name);
        q += 3 + nameLen;
      }
      return { kind: 'none' };
    }
  } catch {
    return { kind: 'none' };
  }
  return { kind: 'none' };
}

const NAME_RE = /^[A-Za-z0-9.-]{1,253}$/;
const validName = (name: string): Peek => (NAME_RE.test(name) ? { kind: 'name', name: name.toLowerCase() } : { kind: 'none' });

/** The Host of an HTTP/1.x request head at the start of `buf` (port removed). */
export function httpHost(buf: Buffer, maxHead = 16_384): Peek {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return buf.length >= maxHead ? { kind: 'none' } : { kind: 'need-more' };
  const head = buf.subarray(0, end).toString('latin1');
  const lines = head.split('\r\n');
  if (!/^[A-Z]{3,10} \S+ HTTP\/1\.[01]$/.test(lines[0] ?? '')) return { kind: 'none' };
  const hosts = lines.slice(1).filter((l) => /^host:/i.test(l));
  if (hosts.length !== 1) return { kind: 'none' };
  const value = hosts[0]!.slice(5).trim();
  const m = /^([A-Za-z0-9.-]+)(:\d{1,5})?$/.exec(value);
  return m ? validName(m[1]!) : { kind: 'none' };
}
