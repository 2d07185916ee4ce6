// Just enough of RFB to time "connect → first framebuffer update", over a websocket (the
// portal's viewer path) or straight over QEMU's unix socket or a libvirt host's TCP port (the raw baselines).
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { vncAuthResponse } from '../src/engine/vnc-client';

type Transport = { write(b: Buffer): void; close(): void; onData(cb: (b: Buffer) => void): void; onEnd(cb: (e: Error) => void): void };

function byteReader(t: Transport) {
  let buf = Buffer.alloc(0);
  let wake: (() => void) | null = null;
  let failed: Error | null = null;
  t.onData((d) => {
    buf = Buffer.concat([buf, d]);
    wake?.();
  });
  t.onEnd((e) => {
    failed = e;
    wake?.();
  });
  return async (n: number) => {
    while (buf.length < n) {
      if (failed) throw failed;
      await new Promise<void>((r) => (wake = r));
    }
    const out = buf.subarray(0, n);
    buf = buf.subarray(n);
    return out;
  };
}

/** When each step of a connection came, in ms from its start (VDI_TRACE): the server's first bytes, the security
 *  result, the ServerInit, the first update. */
export type FrameMarks = { open?: number; banner?: number; auth?: number; init?: number; frame?: number };

async function firstFrame(t: Transport, password: string | null, marks?: FrameMarks): Promise<void> {
  const t0 = performance.now();
  const mark = (k: keyof FrameMarks) => marks && (marks[k] = Math.round(performance.now() - t0));
  const read = byteReader(t);
  await read(12);
  mark('banner');
  t.write(Buffer.from('RFB 003.008\n'));
  const count = (await read(1))[0]!;
  const types = [...(await read(count))];
  const useAuth = password !== null && types.includes(2);
  t.write(Buffer.from([useAuth ? 2 : 1]));
  if (useAuth) t.write(vncAuthResponse(password!, await read(16)));
  if ((await read(4)).readUInt32BE(0) !== 0) throw new Error('VNC authentication failed');
  mark('auth');
  t.write(Buffer.from([1])); // ClientInit, shared
  const init = await read(24);
  mark('init');
  const [w, h] = [init.readUInt16BE(0), init.readUInt16BE(2)];
  await read(init.readUInt32BE(20));
  const req = Buffer.alloc(10);
  req.writeUInt8(3, 0);
  req.writeUInt16BE(w, 6);
  req.writeUInt16BE(h, 8);
  t.write(req);
  for (;;) {
    if ((await read(1))[0] !== 0) continue; // FramebufferUpdate
    mark('frame');
    return t.close();
  }
}

export function firstFrameOverUnix(path: string, password: string | null, marks?: FrameMarks) {
  return firstFrameOverSocket(connect(path), password, marks);
}

/** A libvirt host's VNC server (TCP, the password of the domain's XML): the raw baseline of the cluster rows. */
export function firstFrameOverTcp(host: string, port: number, password: string | null) {
  return firstFrameOverSocket(connect({ host, port }), password);
}

function firstFrameOverSocket(s: Socket, password: string | null, marks?: FrameMarks) {
  return firstFrame(
    { write: (b) => s.write(b), close: () => s.destroy(), onData: (cb) => s.on('data', cb), onEnd: (cb) => (s.on('error', cb), s.on('close', () => cb(new Error('closed')))) },
    password,
    marks,
  );
}

export function firstFrameOverWebSocket(url: string, password: string, marks?: FrameMarks) {
  const ws = new WebSocket(url);
  const queue: Buffer[] = [];
  let open = false;
  const t0 = performance.now();
  ws.on('open', () => {
    if (marks) marks.open = Math.round(performance.now() - t0);
    open = true;
    for (const b of queue.splice(0)) ws.send(b);
  });
  return firstFrame(
    {
      write: (b) => (open ? ws.send(b) : queue.push(Buffer.from(b))),
      close: () => ws.close(),
      onData: (cb) => ws.on('message', (d: Buffer) => cb(d)),
      onEnd: (cb) => (ws.on('error', cb), ws.on('close', () => cb(new Error('closed')))),
    },
    password,
    marks,
  );
}
