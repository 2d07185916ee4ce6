/**
 * The portal's side of the RDP doors (the protocol pieces are in src/rdp/): a one-time viewer
 * token leads to its desktop's own RDP endpoint (guest address, port 3389) while the desktop is
 * running and has an address; nothing else is ever dialled.
 * - the browser viewer's RDCleanPath websocket on the portal's port (RDP_WEBSOCKET_PATH);
 * - the RD Gateway for .rdp files on its own TLS port (RDP_GATEWAY_PORT).
 */
import type { WebSocket } from 'ws';
import { RDP_PORT, statusIn, VIEWABLE, type TViewer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { Authorization } from '../../rdp/cleanpath-proxy';
import { serveCleanPath } from '../../rdp/cleanpath-proxy';
import { createRdpGateway } from '../../rdp/gateway';
import { gatewayCertificate } from '../../rdp/tls-cert';
import { findDomain } from '../shared/domains';
import { viewerOpened } from './activity';
import { consumeViewerToken } from './tokens';

/** Token protocols: one for the browser page, one for the gateway (a token opens only its own door). */
export const RDP_TOKEN = { browser: 'rdp', gateway: 'rdpgw' } as const;
/** The .rdp file's token lives longer than the page's: a person downloads it, then opens it. */
export const RDP_GATEWAY_TOKEN_SECONDS = 300;

/** Spends a token and answers its desktop's RDP endpoint, or why not (401 unknown, spent or
 *  expired; 409 the desktop is not running or has no address). */
export async function authorizeRdp(ctx: AppContext, token: string, protocol: string): Promise<Authorization> {
  const grant = await consumeViewerToken(ctx.db, token, protocol);
  if (!grant) return { ok: false, status: 401 };
  const row = await findDomain(ctx.db, grant.desktopId);
  if (!row || !statusIn(VIEWABLE, row.status) || !row.guestIp) return { ok: false, status: 409 };
  return { ok: true, desktopId: row.id, target: { host: row.guestIp, port: RDP_PORT } };
}

const relayCounted = (ctx: AppContext, desktopId: string, what: string, protocol: TViewer) => {
  const opened = viewerOpened(ctx, desktopId, protocol);
  return (why: string) => {
    void opened.then((close) => close());
    ctx.log.info({ desktop: desktopId, why }, `${what} closed`);
  };
};

/** One browser viewer websocket, from its RDCleanPath request to its end. */
export function serveRdpWebSocket(ctx: AppContext, ws: WebSocket) {
  void serveCleanPath(ws, {
    authorize: (token) => authorizeRdp(ctx, token, RDP_TOKEN.browser),
    // The web client never sets INFO_AUTOLOGON: without it xrdp asks for the password again.
    autologon: true,
    onRelay: (desktopId) => {
      ctx.log.info({ desktop: desktopId }, 'browser RDP viewer connected');
      return relayCounted(ctx, desktopId, 'browser RDP viewer', 'browser-rdp');
    },
    onFailure: (why, desktopId) => ctx.log.warn({ desktop: desktopId, why }, 'browser RDP viewer refused'),
  });
}

type RunningGateway = { port: number; close(): Promise<void> };
const gateways = new WeakMap<AppContext, RunningGateway>();

/** the port of the gateway another process of this machine runs (modules/pieces) */
const followed = new WeakMap<AppContext, number | null>();

/** The gateway's port while it runs here or in the process of this machine that runs it (null: off, or it could not start). */
export const rdpGatewayPort = (ctx: AppContext) => gateways.get(ctx)?.port ?? followed.get(ctx) ?? null;

/** Another process of this machine runs the gateway on `port` (null: none does). */
export const followRdpGateway = (ctx: AppContext, port: number | null) => void followed.set(ctx, port);

/** Starts the RD Gateway when configured; a failure to start is logged, and the .rdp viewer is then unavailable. */
export async function startRdpGateway(ctx: AppContext): Promise<() => Promise<void>> {
  const { port, certFile, keyFile, publicAddress } = ctx.config.rdpGateway;
  if (port === null) return async () => undefined;
  try {
    const tls = await gatewayCertificate({
      dataDir: ctx.config.dataDir,
      certFile,
      keyFile,
      hostname: publicAddress?.replace(/:\d+$/, '') ?? (ctx.config.publicUrl ? new URL(ctx.config.publicUrl).hostname : undefined),
    });
    const gateway = createRdpGateway({
      cert: tls.cert,
      key: tls.key,
      authorize: (token) => authorizeRdp(ctx, token, RDP_TOKEN.gateway),
      onRelay: (desktopId) => {
        ctx.log.info({ desktop: desktopId }, 'RD Gateway connection opened');
        return relayCounted(ctx, desktopId, 'RD Gateway connection', 'file-rdpgw');
      },
      onFailure: (why, desktopId) => ctx.log.warn({ desktop: desktopId, why }, 'RD Gateway connection refused'),
    });
    const bound = await gateway.listen(port, ctx.config.host);
    const running = { port: bound, close: () => gateway.close() };
    gateways.set(ctx, running);
    ctx.log.info({ port: bound, certificate: tls.generated ? tls.certPath : 'TLS_CERT' }, 'RD Gateway listening');
    return async () => {
      gateways.delete(ctx);
      await running.close();
    };
  } catch (err) {
    ctx.log.error({ err: { message: (err as Error).message, code: (err as NodeJS.ErrnoException).code } }, 'RD Gateway not started: the .rdp gateway viewer is unavailable');
    return async () => undefined;
  }
}
