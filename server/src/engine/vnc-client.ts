// The server as a VNC client of a machine, for the few things it asks a screen itself (a viewer's bytes only pass
// through the bridge): RFB 3.8 with VNC authentication (type 2), the handshake to the ServerInit, one screen update.
import { createCipheriv } from 'node:crypto';
import type { Socket } from 'node:net';
import type { VncEndpoint } from './driver';
import { openVnc } from './vnc-bridge';

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

/** Reads exact byte counts from a socket (`first`: bytes already read from it). */
export function byteReader(sock: Socket, first: Buffer = Buffer.alloc(0)) {
  let buf = first;
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

export type VncServerInit = { securityTypes: number[]; width: number; height: number; name: string };
export class VncRefusedError extends Error {
  constructor(
    message: string,
    readonly securityTypes: number[] = [],
  ) {
    super(message);
    this.name = 'VncRefusedError';
  }
}

/** From the server's version (read by `read`) to its ServerInit, as a shared client; VncRefusedError when it refuses. */
export async function vncHandshake(sock: Socket, read: (n: number) => Promise<Buffer>, password: string): Promise<VncServerInit> {
  const version = (await read(12)).toString('latin1');
  if (!version.startsWith('RFB ')) throw new VncRefusedError(`not RFB: ${version}`);
  sock.write('RFB 003.008\n');
  const count = (await read(1))[0]!;
  if (count === 0) throw new VncRefusedError('server refused');
  const securityTypes = [...(await read(count))];
  if (!securityTypes.includes(2)) throw new VncRefusedError('no VNC authentication offered', securityTypes);
  sock.write(Buffer.from([2]));
  sock.write(vncAuthResponse(password, await read(16)));
  if ((await read(4)).readUInt32BE(0) !== 0) throw new VncRefusedError('authentication failed', securityTypes);
  sock.write(Buffer.from([1])); // ClientInit, shared: a viewer open meanwhile stays
  const init = await read(24);
  const name = (await read(init.readUInt32BE(20))).toString('utf8');
  return { securityTypes, width: init.readUInt16BE(0), height: init.readUInt16BE(2), name };
}

/**
 * Connects, authenticates and asks the whole screen once, until its update begins; then closes. A machine's VNC server
 * draws its screen for a client the first time at that client's connection and first update (QEMU: the display's whole
 * first refresh): about 100 ms more for that first viewer than for the next when 12 guests are asked at once on a busy
 * 2-core host, 16 ms on a quiet one. A prepared desktop pays it here, before its person connects.
 */
export async function drawScreenOnce(endpoint: VncEndpoint, password: string, timeoutMs = 5000): Promise<void> {
  const { socket, greeting } = await openVnc(endpoint, { timeoutMs });
  const timer = setTimeout(() => socket.destroy(new Error('the screen was not drawn in time')), timeoutMs);
  try {
    const read = byteReader(socket, greeting);
    socket.resume();
    const init = await vncHandshake(socket, read, password);
    const request = Buffer.alloc(10); // FramebufferUpdateRequest, not incremental, the whole screen
    request.writeUInt8(3, 0);
    request.writeUInt16BE(init.width, 6);
    request.writeUInt16BE(init.height, 8);
    socket.write(request);
    // (no SetEncodings sent: the server speaks only FramebufferUpdate (0) and, unasked, Bell (2) or ServerCutText (3))
    for (;;) {
      const type = (await read(1))[0];
      if (type === 0) return;
      if (type === 3) await read(3 + 4).then((h) => read(h.readUInt32BE(3)));
    }
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
