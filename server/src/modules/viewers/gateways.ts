import { viewerOpened } from './activity';
import type { IncomingMessage, Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { RDP_WEBSOCKET_PATH, statusIn, VIEWABLE, VNC_CLOSE, VNC_FIRST_BYTES_MS, VNC_WEBSOCKET_PATH } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { VncEndpoint } from '../../engine/driver';
import { bridgeWebSocketToVnc, VNC_OPEN_TIMEOUT_MS } from '../../engine/vnc-bridge';
import { findDomain } from '../shared/domains';
import { consumeViewerToken } from './tokens';
import { viewableWhileStarting } from './service';
import { serveRdpWebSocket } from './rdp';

/** How long a viewer opened with a start waits for its machine (a start may wait in its host's queue) before it is told
 *  the screen is unreachable (the page then asks again). */
export const STARTING_VIEWER_WAIT_MS = 60_000;
/** How often that wait looks again besides the driver's event (a machine another process started on a host this one reaches). */
const STARTING_VIEWER_LOOK_MS = 250;

/**
 * The screen of a desktop whose start was claimed, once its hypervisor launches it (a driver that offers its screen while
 * it comes up, with `launched`: how the start ends) or runs it: at this process's driver's `launched` or `started`
 * event, or a look every STARTING_VIEWER_LOOK_MS; none when its start ends otherwise, the wait's bound passes, or the
 * browser leaves.
 */
async function screenWhenUp(ctx: AppContext, id: string, ws: WebSocket): Promise<{ vnc?: VncEndpoint; launched?: Promise<boolean> } | undefined> {
  const deadline = Date.now() + STARTING_VIEWER_WAIT_MS;
  let poked = false;
  let wake: () => void = () => {};
  const poke = () => {
    poked = true;
    wake();
  };
  const off = ctx.engine.driver.onEvent((e) => e.id === id && (e.type === 'launched' || e.type === 'started') && poke());
  ws.once('close', poke);
  try {
    while (ws.readyState === ws.OPEN && Date.now() < deadline) {
      poked = false;
      const launching = ctx.engine.driver.launchingScreen?.(id);
      if (launching) return launching;
      const machine = (await ctx.engine.driver.list()).find((m) => m.id === id);
      if (machine) return machine;
      const row = await findDomain(ctx.db, id);
      if (!row || (row.status !== 'Starting' && !statusIn(VIEWABLE, row.status))) return undefined;
      if (poked) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(STARTING_VIEWER_LOOK_MS, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return undefined;
  } finally {
    off();
    ws.off('close', poke);
  }
}

const refuse = (socket: Duplex, status: string) => {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
};

/**
 * An upgraded or CONNECT socket is the handler's own from the first moment: Node's server no longer
 * listens for its errors, and a client's reset while the ticket or the machine is looked up (or after
 * a refusal; a balancer resets often) would end the process as an unhandled 'error'.
 */
const ownErrors = (socket: Duplex) => socket.on('error', () => socket.destroy());

/**
 * Three doors to running machines on the portal's own port:
 * - the noVNC websocket (/api/v3/vnc?token=…): a one-time viewer token opens one desktop's screen;
 * - the browser RDP websocket (/api/v3/rdp): RDCleanPath, its one-time token inside the first
 *   message, to the desktop's own RDP port (modules/viewers/rdp.ts);
 * - HTTP CONNECT for SPICE clients (the .vv file's proxy=): only to the SPICE endpoint of a
 *   running desktop, which still asks for its one-time password.
 */
export function attachViewerGateways(server: Server, ctx: AppContext) {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  // The upgrade names the process holding the viewer, as every HTTP answer does (X-Server-Id).
  wss.on('headers', (headers) => headers.push(`X-Server-Id: ${ctx.config.serverId}`));

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://portal');
    if (url.pathname === RDP_WEBSOCKET_PATH || url.pathname === VNC_WEBSOCKET_PATH) ownErrors(socket);
    if (url.pathname === RDP_WEBSOCKET_PATH) {
      wss.handleUpgrade(req, socket, head, (ws) => serveRdpWebSocket(ctx, ws));
      return;
    }
    if (url.pathname !== VNC_WEBSOCKET_PATH) return; // the live socket handles its own path
    const asked = Date.now();
    void (async () => {
      const token = url.searchParams.get('token');
      const grant = token ? await consumeViewerToken(ctx.db, token, 'vnc') : undefined;
      const row = grant ? await findDomain(ctx.db, grant.desktopId) : undefined;
      const runtime = row && statusIn(VIEWABLE, row.status) ? (await ctx.engine.driver.list()).find((m) => m.id === row.id) : undefined;
      // A desktop still starting (its ticket was asked with the start): the websocket opens now, its screen once the machine runs.
      const starting = !runtime && row !== undefined && viewableWhileStarting(row);
      if (!runtime?.vnc && !starting) return refuse(socket, '401 Unauthorized');
      wss.handleUpgrade(req, socket, head, (ws) => {
        void (async () => {
          const screen = runtime ?? (await screenWhenUp(ctx, row!.id, ws));
          if (ws.readyState !== ws.OPEN) return;
          if (!screen?.vnc) return ws.close(VNC_CLOSE.unreachable.code, VNC_CLOSE.unreachable.reason);
          ctx.log.info({ desktop: row!.id }, 'browser viewer connected');
          const opened = viewerOpened(ctx, row!.id, 'browser-vnc', grant?.userId ?? null);
          ws.once('close', () => void opened.then((close) => close()));
          // The bound runs from the request (or from the machine's start): what the token check took is not the bridge's to spend.
          const from = runtime ? asked : Date.now();
          const timeoutMs = Math.min(VNC_OPEN_TIMEOUT_MS, Math.max(500, VNC_FIRST_BYTES_MS - 250 - (Date.now() - from)));
          const unavailable = await bridgeWebSocketToVnc(ws, screen.vnc, { timeoutMs, launching: 'launched' in screen ? screen.launched : undefined });
          if (unavailable) ctx.log.warn({ desktop: row!.id, why: unavailable.kind, detail: unavailable.message }, 'browser viewer closed: screen unavailable');
        })().catch((err) => ctx.log.warn({ err }, 'viewer bridge ended'));
      });
    })().catch((err) => {
      ctx.log.error({ err }, 'viewer upgrade failed');
      refuse(socket, '500 Internal Server Error');
    });
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    ownErrors(client);
    void (async () => {
      const [host, portText] = (req.url ?? '').split(':');
      const port = Number(portText);
      const machines = await ctx.engine.driver.list();
      const target = machines.find((m) => m.spice && m.spice.host === host && m.spice.port === port);
      if (!target?.spice) return refuse(client, '403 Forbidden');
      const opened = viewerOpened(ctx, target.id, 'file-spice');
      const upstream = connect(target.spice.port, target.spice.host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      const close = () => {
        void opened.then((close) => close()); // once: a close after the first does nothing
        upstream.destroy();
        client.destroy();
      };
      upstream.on('error', close);
      client.on('error', close);
      upstream.on('close', close);
      client.on('close', close);
    })().catch(() => refuse(client, '500 Internal Server Error'));
  });

  /** The server stops: open viewers are told (1001, going away) and their bridges end, or the HTTP
   *  server would wait for them forever (an upgraded socket still counts as its connection). */
  return () => {
    for (const ws of wss.clients) {
      ws.close(1001, 'server stopping');
      setTimeout(() => ws.terminate(), 1000).unref(); // a browser that never answers the close
    }
    wss.close();
  };
}
