import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { RDP_PORT, statusIn, VIEWABLE, VIEWERS_NEEDING_IP, type TBrowserViewerTicket, type TRdpViewerTicket, type TViewer, type TViewerAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { MachineRuntime } from '../../engine/driver';
import { drawScreenOnce } from '../../engine/vnc-client';
import { ApiError, notFound, precondition } from '../../http/errors';
import type { DomainRow } from '../shared/domains';
import { viewersOf } from '../shared/desktop-view';
import { rdpGatewayFile, spiceFile, viewerFileName } from './files';
import { RDP_GATEWAY_TOKEN_SECONDS, RDP_TOKEN, rdpGatewayPort } from './rdp';
import { rdpVpnViewer } from './rdpvpn';
import { issueViewerToken, passwordOf, VIEWER_TOKEN_SECONDS, viewerPassword } from './tokens';

const PASSWORD_SECONDS = 120;
/** A VNC password is set to live this long, and set again (the same) by a process that hands it out with less than two token lives left. */
const VNC_PASSWORD_SECONDS = 300;
const VNC_PASSWORD_RESET_SECONDS = 2 * VIEWER_TOKEN_SECONDS;

/**
 * QEMU keeps one VNC password per display. A new one for every ticket locked out the viewers
 * still connecting with the one before (two tabs, the owner and the videowall, a reconnect), and
 * so did a password per server process: behind the balancer, two tickets of one desktop come from
 * two processes. So a desktop's run has ONE password, the same in every process without asking
 * each other: derived from the installation's secret, the desktop and the moment its run's start
 * was claimed (its row's `run_claimed_at`; rows of runs claimed before that column existed: their
 * `started_at`); a restarted desktop gets another. Known from the claim on, a ticket asked while the
 * desktop starts holds the password its machine is launched with. Handing it out sets it again with a fresh
 * expiry when this process's last setting is near its end: setting the same password locks no one
 * out, and it expires a while after the last ticket. The one-time token, not the password, is what
 * opens the bridge.
 */
export function vncPasswordOf(ctx: AppContext, row: Pick<DomainRow, 'id' | 'startedAt' | 'runClaimedAt'>): string {
  const mac = createHmac('sha256', ctx.config.secret).update(`vnc-password:${row.id}:${(row.runClaimedAt ?? row.startedAt)?.toISOString() ?? ''}`).digest();
  return passwordOf(mac.subarray(0, 8));
}

/** Per app instance (a process): when it set each machine run's password last, until when. Keyed by
 *  the machine's run as this process sees it (a restarted QEMU has no password). */
const vncPasswordsSet = new WeakMap<AppContext, Map<string, Promise<number>>>();


const passwordsSetOf = (ctx: AppContext) => {
  let set = vncPasswordsSet.get(ctx);
  if (!set) vncPasswordsSet.set(ctx, (set = new Map()));
  return set;
};
const runKey = (runtime: MachineRuntime, password: string) => `${runtime.id}:${runtime.pid ?? ''}:${new Date(runtime.startedAt).getTime()}:${password}`;

/**
 * A machine launched with its run's password (the spec's `vncPassword`; its runtime says `vncPasswordSet`): this
 * process knows it is set, so the first ticket asks the hypervisor nothing. Its expiry is set meanwhile (resolves
 * then), as a first ticket's setting would.
 */
export function vncPasswordLaunched(ctx: AppContext, row: Pick<DomainRow, 'id' | 'startedAt' | 'runClaimedAt'>, runtime: MachineRuntime): Promise<void> {
  const password = vncPasswordOf(ctx, row);
  const until = Date.now() + VNC_PASSWORD_SECONDS * 1000;
  passwordsSetOf(ctx).set(runKey(runtime, password), Promise.resolve(until));
  return ctx.engine.driver.setViewerPassword(runtime.id, 'vnc', password, VNC_PASSWORD_SECONDS);
}

/** The run's password, set again when this process's setting ends within VNC_PASSWORD_RESET_SECONDS (+ `aheadSeconds`). */
export async function sharedVncPassword(ctx: AppContext, row: DomainRow, runtime: MachineRuntime, aheadSeconds = 0): Promise<string> {
  const password = vncPasswordOf(ctx, row);
  const set = passwordsSetOf(ctx);
  const now = Date.now();
  for (const [key, entry] of set) if ((await entry.catch(() => 0)) <= now) set.delete(key);
  const key = runKey(runtime, password);
  const until = await set.get(key)?.catch(() => 0);
  if (until && until - now >= (VNC_PASSWORD_RESET_SECONDS + aheadSeconds) * 1000) return password;
  const setting = ctx.engine.driver.setViewerPassword(runtime.id, 'vnc', password, VNC_PASSWORD_SECONDS).then(() => now + VNC_PASSWORD_SECONDS * 1000);
  set.set(key, setting); // set before awaiting: a concurrent request waits for this one
  setting.catch(() => set.get(key) === setting && set.delete(key));
  await setting;
  return password;
}

/** The run's VNC passwords of running desktops set (again) in their machines, when they have a VNC display here and this
 *  process's last setting nears its end, or will within `aheadSeconds` (a pool keeps its prepared desktops' so, ahead of
 *  its next pass: the one given opens at once, its ticket asking the machine nothing). `draw`: their screens are also
 *  drawn once by this process when not drawn within `everyMs`, one after the other while `quiet()` says so (`drawScreens`). */
export async function readyVncPasswords(ctx: AppContext, rows: readonly DomainRow[], aheadSeconds = 0, draw?: { everyMs: number; quiet?: () => boolean }): Promise<void> {
  if (rows.length === 0) return;
  const machines = new Map((await ctx.engine.driver.list()).map((m) => [m.id, m]));
  const ready = rows.flatMap((row) => {
    const runtime = machines.get(row.id);
    return runtime?.vnc ? [{ row, runtime }] : [];
  });
  await Promise.all(ready.map(({ row, runtime }) => sharedVncPassword(ctx, row, runtime, aheadSeconds)));
  if (draw) await drawScreens(ctx, ready, draw.everyMs, draw.quiet);
}

/** Per app instance: when it last drew each machine run's screen (ms), and whether a drawing round is under way. */
const screensDrawn = new WeakMap<AppContext, { at: Map<string, number>; busy: boolean }>();

/**
 * Each machine's screen drawn once, as a first viewer would have it drawn (`drawScreenOnce`), when this process has not
 * within `everyMs` (its guest may have drawn since: a boot that ended). One at a time, so a class's thirty prepared
 * desktops never ask the host at once; a round still under way is not doubled; the round ends when `quiet` says no
 * more (a class taking its desktops now: their screens come first). A screen that cannot be drawn is left to the next
 * round (its desktop's own checks tell of a broken machine).
 */
async function drawScreens(ctx: AppContext, machines: readonly { row: DomainRow; runtime: MachineRuntime }[], everyMs: number, quiet: () => boolean = () => true) {
  let state = screensDrawn.get(ctx);
  if (!state) screensDrawn.set(ctx, (state = { at: new Map(), busy: false }));
  if (state.busy) return;
  state.busy = true;
  try {
    const now = Date.now();
    // (a run drawn longer ago is drawn again when asked: given, stopped and gone ones are forgotten)
    for (const [key, at] of state.at) if (now - at >= everyMs) state.at.delete(key);
    for (const { row, runtime } of machines) {
      const password = vncPasswordOf(ctx, row);
      const key = runKey(runtime, password);
      if (state.at.has(key)) continue;
      if (!quiet()) break;
      const drawn = await drawScreenOnce(runtime.vnc!, password).then(
        () => true,
        (err: unknown) => (ctx.log.debug({ err, desktop: row.id }, 'a prepared screen was not drawn'), false),
      );
      if (drawn) state.at.set(key, Date.now());
    }
  } finally {
    state.busy = false;
  }
}

/**
 * A browser screen may be asked from the moment a start is claimed: its ticket holds the password the run is launched
 * with, and the bridge waits for the machine (gateways.ts). The page that starts a desktop to open it is connecting while
 * QEMU comes up, as a person starting QEMU by hand connects the moment its socket listens (decision 0037).
 */
export const viewableWhileStarting = (row: Pick<DomainRow, 'status' | 'runClaimedAt'>) => row.status === 'Starting' && row.runClaimedAt !== null;

/** The viewers a desktop pool lets its people open (its permissions now), for a pool's desktop; null for any other, and
 *  for one whose pool is gone (its desktop then keeps the viewers it was made with). */
async function poolViewersOf(ctx: AppContext, row: Pick<DomainRow, 'poolId'>): Promise<readonly TViewer[] | null> {
  if (row.poolId === null) return null;
  const [pool] = await ctx.db.select({ permissions: schema.desktopPools.permissions }).from(schema.desktopPools).where(eq(schema.desktopPools.id, row.poolId));
  return pool?.permissions.viewers ?? null;
}

/**
 * A viewer of a running desktop: a browser ticket (one-time token + VNC password) or a SPICE
 * file (one-time password that expires), never the session cookie alone. A pool's desktop offers only the viewers its
 * pool allows now (`poolViewers`: those, when the caller has the pool at hand).
 */
export async function viewerFor(ctx: AppContext, row: DomainRow, viewer: TViewer, opts: { userId: string | null; proxy: string; poolViewers?: readonly TViewer[] }): Promise<TViewerAnswer> {
  const starting = viewer === 'browser-vnc' && viewableWhileStarting(row);
  if (!starting && !statusIn(VIEWABLE, row.status)) throw precondition('viewer_not_started', 'Start the desktop before opening a viewer');
  if (VIEWERS_NEEDING_IP.includes(viewer) && !ctx.engine.network.available) {
    throw precondition('guest_network_unavailable', 'The RDP viewers need the private network, which this server does not have');
  }
  if (!viewersOf(row).includes(viewer)) throw notFound('unable_to_get_viewer', `The desktop does not offer ${viewer}`);
  const poolViewers = opts.poolViewers ?? (await poolViewersOf(ctx, row));
  if (poolViewers && !poolViewers.includes(viewer)) throw notFound('unable_to_get_viewer', `The desktop's pool does not allow ${viewer}`);
  if (viewer === 'browser-rdp' || viewer === 'file-rdpgw') return rdpViewer(ctx, row, viewer, opts);
  const runtime = (await ctx.engine.driver.list()).find((m) => m.id === row.id);
  if (!runtime && !starting) throw precondition('viewer_not_started', 'The desktop is not running');

  if (viewer === 'browser-vnc') {
    // (its machine not up yet: the password it is being launched with)
    const password = runtime ? await sharedVncPassword(ctx, row, runtime) : vncPasswordOf(ctx, row);
    const token = await issueViewerToken(ctx.db, row.id, opts.userId, 'vnc');
    // The guest's clipboard agent has one port: SPICE's when SPICE is on, else QEMU's own for VNC (engine/qemu/args.ts).
    const ticket: TBrowserViewerTicket = { token, password, name: row.name, desktopId: row.id, clipboard: runtime ? !runtime.spice : !row.guestProperties.viewers.file_spice };
    const cookie = Buffer.from(JSON.stringify(ticket)).toString('base64url');
    // The original's shape: clients written for it store `cookie` in a `browser_viewer` cookie and
    // open `viewer`; ours open `urlp`, the same page with the ticket in the fragment.
    return {
      kind: 'browser',
      protocol: 'vnc',
      viewer: '/viewer/vnc',
      urlp: `/viewer/vnc#${cookie}`,
      cookie,
      values: { vmName: row.name, exp: Math.floor(Date.now() / 1000) + VIEWER_TOKEN_SECONDS },
    };
  }
  if (!runtime) throw precondition('viewer_not_started', 'The desktop is not running');
  if (viewer === 'file-spice') {
    if (!runtime.spice) throw notFound('unable_to_get_viewer', 'SPICE is not enabled on this desktop');
    const password = viewerPassword(16);
    await ctx.engine.driver.setViewerPassword(row.id, 'spice', password, PASSWORD_SECONDS);
    return {
      kind: 'file',
      protocol: 'spice',
      name: viewerFileName(row.name),
      ext: 'vv',
      mime: 'application/x-virt-viewer',
      content: spiceFile({
        proxy: opts.proxy,
        host: runtime.spice.host,
        port: runtime.spice.port,
        password,
        title: row.name,
        fullscreen: row.guestProperties.fullscreen,
      }),
    };
  }
  if (viewer === 'file-rdpvpn') return rdpVpnViewer(row);
  throw new ApiError('not_found', 'viewer_protocol_not_implemented', `${viewer} is not available on this server`);
}

/**
 * The RDP viewers of a running desktop with an address (`viewersOf` offers them only then): the
 * browser page's ticket (one-time token for the RDCleanPath proxy, the guest credentials) or the
 * .rdp file for the RD Gateway (a short-lived one-time token as `gatewayaccesstoken`). Either
 * token opens only this desktop's port 3389.
 */
async function rdpViewer(ctx: AppContext, row: DomainRow, viewer: 'browser-rdp' | 'file-rdpgw', opts: { userId: string | null; proxy: string }): Promise<TViewerAnswer> {
  const address = row.guestIp;
  if (!address) throw notFound('unable_to_get_viewer', 'The desktop has no address yet');
  const { username, password } = row.guestProperties.credentials;
  if (viewer === 'browser-rdp') {
    const token = await issueViewerToken(ctx.db, row.id, opts.userId, RDP_TOKEN.browser);
    const exp = Math.floor(Date.now() / 1000) + VIEWER_TOKEN_SECONDS;
    const ticket: TRdpViewerTicket = { token, username, password, destination: `${address}:${RDP_PORT}`, name: row.name, desktopId: row.id, exp };
    const cookie = Buffer.from(JSON.stringify(ticket)).toString('base64url');
    return {
      kind: 'browser',
      protocol: 'rdp',
      viewer: '/rdp',
      urlp: `/rdp#${cookie}`,
      cookie,
      values: { vmName: row.name, exp },
    };
  }
  const port = rdpGatewayPort(ctx);
  if (port === null) throw new ApiError('not_found', 'viewer_protocol_not_implemented', 'The RD Gateway is not running on this server');
  const token = await issueViewerToken(ctx.db, row.id, opts.userId, RDP_TOKEN.gateway, RDP_GATEWAY_TOKEN_SECONDS);
  return {
    kind: 'file',
    protocol: 'rdpgw',
    name: viewerFileName(row.name),
    ext: 'rdp',
    mime: 'application/x-rdp',
    content: rdpGatewayFile({
      address,
      gateway: ctx.config.rdpGateway.publicAddress ?? `${new URL(opts.proxy).hostname}:${port}`,
      token,
      username,
      password,
      fullscreen: row.guestProperties.fullscreen,
    }),
  };
}
