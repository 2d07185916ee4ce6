// Pipes a browser WebSocket (noVNC) to a machine's VNC unix socket, byte for byte, and closes both
// sides together. Who may connect is decided by the caller before it gets here (viewer tokens);
// the VNC password set through QMP is the second lock.
import { connect } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import type { VncEndpoint } from './driver';

/** ws buffers above this pause reading from VNC (a slow browser must not grow memory without bound). */
const HIGH_WATER = 4 * 1024 * 1024;

/** Resolves once both sides are closed. Close codes: 1000 when VNC ended the session, 1011 when the
 *  VNC socket could not be reached or failed. */
export function bridgeWebSocketToUnixSocket(ws: WebSocket, socketPath: string): Promise<void> {
  return bridgeWebSocketToVnc(ws, { socket: socketPath });
}

/** Same for any driver's endpoint: a unix socket (QEMU driver) or host:port (libvirt). */
export function bridgeWebSocketToVnc(ws: WebSocket, endpoint: VncEndpoint): Promise<void> {
  return new Promise((resolve) => {
    const vnc = 'socket' in endpoint ? connect(endpoint.socket) : connect(endpoint.port, endpoint.host);
    let wsClosed = ws.readyState === ws.CLOSED;
    let vncClosed = false;
    const maybeDone = () => {
      if (wsClosed && vncClosed) resolve();
    };

    // noVNC may send before the unix connection is up: net.Socket queues writes until connected.
    ws.on('message', (data: RawData) => {
      const chunk = toBuffer(data);
      if (!vnc.write(chunk)) ws.pause();
    });
    vnc.on('drain', () => ws.resume());

    vnc.on('data', (chunk: Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(chunk, { binary: true }, () => {
        if (vnc.isPaused() && ws.bufferedAmount < HIGH_WATER) vnc.resume();
      });
      if (ws.bufferedAmount >= HIGH_WATER) vnc.pause();
    });

    let failed = false;
    vnc.on('error', () => {
      failed = true; // the close handler below does the rest; the reason is not shown to browsers
    });
    vnc.on('close', () => {
      vncClosed = true;
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) {
        ws.close(failed ? 1011 : 1000, failed ? 'display unavailable' : 'display closed');
      }
      maybeDone();
    });

    ws.on('close', () => {
      wsClosed = true;
      vnc.destroy();
      maybeDone();
    });
    ws.on('error', () => vnc.destroy());
    if (wsClosed) vnc.destroy();
  });
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
