// Opens a browser viewer's websocket the way noVNC does, measures when the screen's first bytes
// arrive, and optionally logs in to VNC with the ticket's password (RFB 3.8, VNC authentication).
import WebSocket from 'ws';
import { vncAuthResponse } from './vnc-probe';
import type { TestServer } from './server';
import { call } from './server';
import { scaled } from './slowdown';

export type ViewerSession = {
  /** from opening the websocket to its first message, or to its close when none came */
  ms: number;
  /** the first bytes (RFB version) when they came */
  banner?: string;
  /** how the websocket ended before any byte came */
  close?: { code: number; reason: string };
  /** VNC accepted the ticket's password (when asked to try) */
  authOk?: boolean;
};

/** A fresh browser-vnc ticket of a desktop through the API. */
export async function vncTicket(base: Pick<TestServer, 'url'>, token: string, desktopId: string) {
  const res = await call(base as TestServer, `/api/v3/desktop/${desktopId}/viewer/browser-vnc`, { token });
  if (res.status !== 200) throw new Error(`viewer answer ${res.status}: ${await res.text()}`);
  const answer = (await res.json()) as { cookie: string };
  return JSON.parse(Buffer.from(answer.cookie, 'base64url').toString()) as { token: string; password: string };
}

export function openViewerSession(baseUrl: string, ticket: { token: string; password: string }, opts: { auth?: boolean; timeoutMs?: number } = {}): Promise<ViewerSession> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/v3/vnc?token=${encodeURIComponent(ticket.token)}`);
    let buf = Buffer.alloc(0);
    let result: ViewerSession | undefined;
    let waiter: (() => void) | null = null;
    let ended = false;
    const done = (r: ViewerSession) => {
      clearTimeout(timer);
      resolve(r);
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.terminate();
    };
    const timer = setTimeout(() => done(result ?? { ms: performance.now() - t0 }), opts.timeoutMs ?? scaled(15_000));
    const read = async (n: number) => {
      while (buf.length < n) {
        if (ended) throw new Error('closed');
        await new Promise<void>((r) => (waiter = r));
        waiter = null;
      }
      const out = buf.subarray(0, n);
      buf = buf.subarray(n);
      return out;
    };
    const login = async () => {
      await read(12);
      ws.send(Buffer.from('RFB 003.008\n'));
      const count = (await read(1))[0]!;
      const types = [...(await read(count))];
      if (!types.includes(2)) return false;
      ws.send(Buffer.from([2]));
      ws.send(vncAuthResponse(ticket.password, await read(16)));
      return (await read(4)).readUInt32BE(0) === 0;
    };
    ws.on('message', (data: Buffer) => {
      buf = Buffer.concat([buf, data]);
      if (!result) {
        result = { ms: performance.now() - t0, banner: buf.subarray(0, 12).toString('latin1') };
        if (!opts.auth) return done(result);
        const first = result;
        login().then(
          (ok) => done({ ...first, authOk: ok }),
          () => done({ ...first, authOk: false }),
        );
      }
      waiter?.();
    });
    ws.on('close', (code, reason) => {
      ended = true;
      waiter?.();
      if (!result) done({ ms: performance.now() - t0, close: { code, reason: reason.toString() } });
    });
    ws.on('error', () => undefined); // followed by close
  });
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};
