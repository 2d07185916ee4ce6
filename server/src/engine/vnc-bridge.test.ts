import { scaled } from '../../test/helpers/slowdown';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { VNC_CLOSE, VNC_FIRST_BYTES_MS } from '@vdi/contracts';
import { bridgeWebSocketToUnixSocket, bridgeWebSocketToVnc, VncUnavailableError } from './vnc-bridge';
import type { VncEndpoint } from './driver';

/** A stand-in VNC server on a unix socket: sends the RFB version, then echoes. */
function fakeVnc(path: string): Promise<{ server: Server; conns: Socket[] }> {
  const conns: Socket[] = [];
  const server = createServer((s) => {
    conns.push(s);
    s.write('RFB 003.008\n');
    s.on('data', (d) => s.write(d));
    s.on('error', () => {});
  });
  return new Promise((r) => server.listen(path, () => r({ server, conns })));
}

describe('bridgeWebSocketToUnixSocket', () => {
  let dir: string;
  let wss: WebSocketServer;
  let bridges: Promise<VncUnavailableError | undefined>[];
  let port: number;
  let sockPath: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vnc-bridge-'));
    sockPath = join(dir, 'vnc.sock');
    bridges = [];
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    wss.on('connection', (ws) => bridges.push(bridgeWebSocketToUnixSocket(ws, sockPath)));
    await new Promise((r) => wss.once('listening', r));
    port = (wss.address() as { port: number }).port;
  });
  afterEach(async () => {
    await new Promise((r) => wss.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    const frames: Buffer[] = [];
    ws.on('message', (d) => frames.push(d as Buffer));
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    return { ws, frames };
  };
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(cond()).toBe(true);
  };

  it('pipes binary frames both ways', async () => {
    const vnc = await fakeVnc(sockPath);
    const { ws, frames } = await open();
    await until(() => frames.length >= 1);
    expect(frames[0]!.toString()).toBe('RFB 003.008\n');
    ws.send(Buffer.from([1, 2, 3, 255]));
    await until(() => frames.length >= 2);
    expect([...frames[1]!]).toEqual([1, 2, 3, 255]);
    ws.close();
    await bridges[0];
    await until(() => vnc.conns[0]!.destroyed);
    await new Promise((r) => vnc.server.close(r));
  });

  it('closes the browser side when VNC goes away', async () => {
    const vnc = await fakeVnc(sockPath);
    const { ws } = await open();
    await until(() => vnc.conns.length === 1);
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    vnc.conns[0]!.end();
    expect(await closed).toBe(1000);
    await bridges[0];
    await new Promise((r) => vnc.server.close(r));
  });

  const closeOf = (ws: WebSocket) =>
    new Promise<{ code: number; reason: string; at: number }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString(), at: performance.now() })));

  it('closes with a reason the page can show when the VNC socket does not exist, within the bound', async () => {
    const t0 = performance.now();
    const { ws } = await open();
    const closed = await closeOf(ws);
    expect(closed).toMatchObject({ code: VNC_CLOSE.unreachable.code, reason: 'viewer_display_unreachable' });
    expect(closed.at - t0).toBeLessThan(scaled(500)); // a machine that is gone is said at once
    expect((await bridges[0])?.kind).toBe('unreachable');
  });

  it('closes with a reason when VNC accepts but says nothing, within the bound', async () => {
    const silent = createServer((s) => s.on('error', () => {}));
    await new Promise<void>((r) => silent.listen(sockPath, () => r()));
    const t0 = performance.now();
    const { ws, frames } = await open();
    const closed = await closeOf(ws);
    expect(frames).toHaveLength(0);
    expect(closed).toMatchObject({ code: VNC_CLOSE.timeout.code, reason: 'viewer_display_timeout' });
    expect(closed.at - t0).toBeLessThan(scaled(VNC_FIRST_BYTES_MS)); // the bound, as this machine keeps timers
    await bridges[0];
    await new Promise((r) => silent.close(r));
  });

  it('passes on what the browser sent before VNC greeted, after the greeting', async () => {
    const got: Buffer[] = [];
    const slow = createServer((s) => {
      setTimeout(() => s.write('RFB 003.008\n'), 200);
      s.on('data', (d) => got.push(d));
      s.on('error', () => {});
    });
    await new Promise<void>((r) => slow.listen(sockPath, () => r()));
    const { ws, frames } = await open();
    ws.send(Buffer.from('early'));
    await until(() => frames.length >= 1);
    expect(frames[0]!.toString()).toBe('RFB 003.008\n');
    await until(() => Buffer.concat(got).toString() === 'early');
    ws.close();
    expect(await bridges[0]).toBeUndefined();
    await new Promise((r) => slow.close(r));
  });

  /** A bridge of its own to `endpoint`, with a short bound for VNC's answers in the handshake. */
  const bridged = async (endpoint: VncEndpoint, answerTimeoutMs: number) => {
    const own = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    let bridge!: Promise<VncUnavailableError | undefined>;
    own.on('connection', (ws) => (bridge = bridgeWebSocketToVnc(ws, endpoint, { answerTimeoutMs })));
    await new Promise((r) => own.once('listening', r));
    const ws = new WebSocket(`ws://127.0.0.1:${(own.address() as { port: number }).port}/`);
    const frames: Buffer[] = [];
    ws.on('message', (d) => frames.push(d as Buffer));
    const closed = closeOf(ws);
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    return { ws, frames, closed, bridge: () => bridge, close: () => new Promise((r) => own.close(r)) };
  };

  it('closes with a reason when VNC greets and then leaves the handshake unanswered', async () => {
    const mute = createServer((s) => {
      s.write('RFB 003.008\n'); // and nothing more, whatever the browser says (a machine that froze)
      s.resume();
      s.on('error', () => {});
    });
    await new Promise<void>((r) => mute.listen(sockPath, () => r()));
    const v = await bridged({ socket: sockPath }, 300);
    await until(() => v.frames.length === 1);
    const asked = performance.now();
    v.ws.send(Buffer.from('RFB 003.008\n'));
    const closed = await v.closed;
    expect(closed).toMatchObject({ code: VNC_CLOSE.timeout.code, reason: 'viewer_display_timeout' });
    expect(closed.at - asked).toBeGreaterThanOrEqual(250);
    expect((await v.bridge())?.kind).toBe('timeout');
    await v.close();
    await new Promise((r) => mute.close(r));
  });

  it('does not wait for answers once the handshake is done (input is not answered)', async () => {
    // Answers the browser's first four messages (version, security type, password, ClientInit),
    // then answers nothing; it speaks once more by itself after three answer bounds.
    const vnc = createServer((s) => {
      let heard = 0;
      s.write('RFB 003.008\n');
      s.on('data', () => {
        if (++heard <= 4) s.write(Buffer.from([heard]));
        if (heard === 5) setTimeout(() => s.write('later'), 900);
      });
      s.on('error', () => {});
    });
    await new Promise<void>((r) => vnc.listen(sockPath, () => r()));
    const v = await bridged({ socket: sockPath }, 300);
    for (let i = 1; i <= 4; i++) {
      v.ws.send(Buffer.from([i]));
      await until(() => v.frames.length === i + 1);
    }
    v.ws.send(Buffer.from('a key'));
    await until(() => v.frames.at(-1)?.toString() === 'later');
    expect(v.ws.readyState).toBe(WebSocket.OPEN);
    v.ws.close();
    expect(await v.bridge()).toBeUndefined();
    await v.close();
    await new Promise((r) => vnc.close(r));
  });

  it('closes with a reason and reports it when the VNC connection fails later', async () => {
    const tcp = createServer((c) => {
      c.write('RFB 003.008\n');
      c.once('data', () => c.resetAndDestroy());
      c.on('error', () => {});
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    const v = await bridged({ host: '127.0.0.1', port: (tcp.address() as { port: number }).port }, 5000);
    await until(() => v.frames.length === 1);
    v.ws.send(Buffer.from('RFB 003.008\n'));
    expect(await v.closed).toMatchObject({ code: VNC_CLOSE.unreachable.code, reason: 'viewer_display_unreachable' });
    expect((await v.bridge())?.message).toMatch(/ECONNRESET/);
    await v.close();
    await new Promise((r) => tcp.close(r));
  });

  it('also reaches a VNC server on host:port (a libvirt hypervisor)', async () => {
    const tcp = createServer((c) => c.end('RFB 003.008\n'));
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    const vncPort = (tcp.address() as { port: number }).port;
    const tcpWss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    tcpWss.on('connection', (ws) => void bridgeWebSocketToVnc(ws, { host: '127.0.0.1', port: vncPort }));
    await new Promise((r) => tcpWss.once('listening', r));
    const ws = new WebSocket(`ws://127.0.0.1:${(tcpWss.address() as { port: number }).port}/`);
    const first = await new Promise<Buffer>((r) => ws.once('message', (d) => r(d as Buffer)));
    expect(first.toString()).toBe('RFB 003.008\n');
    ws.close();
    await new Promise((r) => tcpWss.close(r));
    await new Promise((r) => tcp.close(r));
  });
});
