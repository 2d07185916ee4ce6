// Test helper: speaks just enough RFB 3.8 to check that a machine's VNC server is there and that
// the password set through the driver is the one it accepts (VNC authentication, type 2).
import { createCipheriv } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { VncEndpoint } from '../../src/engine/driver';

export type VncProbeResult =
  | { ok: true; securityTypes: number[]; width: number; height: number; name: string }
  | { ok: false; securityTypes: number[]; reason: string };

/** Reads exact byte counts from a socket. */
function reader(sock: Socket) {
  let buf = Buffer.alloc(0);
  let waiter: (() => void) | null = null;
  let ended: Error | null = null;
  sock.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    waiter?.();
  });
  const end = (e?: Error) => {
    ended = e ?? new Error('connection closed');
    waiter?.();
  };
  sock.on('error', end);
  sock.on('close', () => end());
  return async (n: number): Promise<Buffer> => {
    while (buf.length < n) {
      if (ended) throw ended;
      await new Promise<void>((r) => (waiter = r));
      waiter = null;
    }
    const out = buf.subarray(0, n);
    buf = buf.subarray(n);
    return out;
  };
}

/** VNC's DES: the password (padded to 8 bytes) with each byte's bits reversed is the key. Node's
 *  OpenSSL 3 has no single DES, but 3DES with three equal keys is exactly DES. */
export function vncAuthResponse(password: string, challenge: Buffer): Buffer {
  const key = Buffer.alloc(8);
  Buffer.from(password, 'latin1').copy(key, 0, 0, 8);
  for (let i = 0; i < 8; i++) {
    let reversed = 0;
    for (let bit = 0; bit < 8; bit++) reversed |= ((key[i]! >> bit) & 1) << (7 - bit);
    key[i] = reversed;
  }
  const cipher = createCipheriv('des-ede3-ecb', Buffer.concat([key, key, key]), null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(challenge), cipher.final()]);
}

export async function probeVnc(endpoint: VncEndpoint, password: string, timeoutMs = 5000): Promise<VncProbeResult> {
  const sock = 'socket' in endpoint ? connect(endpoint.socket) : connect(endpoint.port, endpoint.host);
  const timer = setTimeout(() => sock.destroy(new Error('VNC probe timed out')), timeoutMs);
  const read = reader(sock);
  try {
    const version = (await read(12)).toString('latin1');
    if (!version.startsWith('RFB ')) return { ok: false, securityTypes: [], reason: `not RFB: ${version}` };
    sock.write('RFB 003.008\n');
    const count = (await read(1))[0]!;
    if (count === 0) return { ok: false, securityTypes: [], reason: 'server refused' };
    const securityTypes = [...(await read(count))];
    if (!securityTypes.includes(2)) return { ok: false, securityTypes, reason: 'no VNC authentication offered' };
    sock.write(Buffer.from([2]));
    const challenge = await read(16);
    sock.write(vncAuthResponse(password, challenge));
    const result = (await read(4)).readUInt32BE(0);
    if (result !== 0) return { ok: false, securityTypes, reason: 'authentication failed' };
    sock.write(Buffer.from([1])); // ClientInit, shared
    const init = await read(24);
    const name = (await read(init.readUInt32BE(20))).toString('utf8');
    return { ok: true, securityTypes, width: init.readUInt16BE(0), height: init.readUInt16BE(2), name };
  } finally {
    clearTimeout(timer);
    sock.destroy();
  }
}
