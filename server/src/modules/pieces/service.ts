// This machine's own pieces: the guests' private network (namespace, dnsmasq, the tunnel to the hosts),
// the users' VPN endpoint, the RD Gateway and the bastion's listeners. They are kernel interfaces, daemons
// and fixed ports: one process of the installation runs them at a time, the one holding a PostgreSQL
// advisory lock (`Database.locks`, on the locks' connection of its own). The others try again every 2 s and take
// them over when the holder dies (its lock goes with its connection; each piece adopts what it left).
// Meanwhile they serve what needs the pieces from the holder's state, published through `ctx.peers`:
// desktops get the guest network (their leases are read from the shared DATA_DIR/network), the viewers'
// files name the running gateway, VPN files use the shared server key. docs/decisions/0019.
// On PGlite (one process) the lock is held at once: the pieces run as they always did.
import type { AppContext } from '../../context';
import { LOCK_CLASSES, type LockKey } from '../../db';
import type { VpnService } from '../../vpn/service';
import type { Bastion } from '../bastion/service';
import { followRdpGateway, rdpGatewayPort, startRdpGateway } from '../viewers/rdp';

/** How often a process that does not run the pieces tries to take them. */
export const PIECES_RETRY_MS = 2_000;

/** The pieces' lock (one per installation); `ctx.locks.holders([PIECES_LOCK])` names the process holding it. */
export const PIECES_LOCK: LockKey = [LOCK_CLASSES.pieces, 0];

/** What the process running the pieces tells the others. */
export type PiecesState = {
  holder: string;
  guestNetwork: boolean;
  vpn: boolean;
  rdpGatewayPort: number | null;
  bastion: { ssh: number | null; http: number | null; https: number | null };
};
type Message = { state: PiecesState } | { ask: true } | { vpnSync: true };

export type MachinePieces = ReturnType<typeof createMachinePieces>;

export function createMachinePieces(ctx: AppContext, parts: { vpn: VpnService; bastion: Bastion }) {
  const { config } = ctx;
  const network = ctx.engine.network;
  const configured =
    network.plan !== null || config.vpn.port !== null || config.rdpGateway.port !== null || config.bastion.sshPort !== null || config.bastion.httpPort !== null || config.bastion.httpsPort !== null;
  let lock = false;
  /** a try under way (a session lock is reentrant: two tries at once would hold it twice) */
  let trying = false;
  let offLost = () => {};
  let stopGateway: (() => Promise<void>) | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let unsubscribe = () => {};

  const own = (): PiecesState => ({
    holder: config.serverId,
    guestNetwork: network.available,
    vpn: parts.vpn.available,
    rdpGatewayPort: rdpGatewayPort(ctx),
    bastion: { ...parts.bastion.ports },
  });
  const tell = (message: Message) => ctx.peers.publish('pieces', message);

  /** The holder's pieces, as this process offers them. */
  function follow(state: PiecesState) {
    network.follow(state.guestNetwork);
    parts.vpn.follow(state.vpn, () => void tell({ vpnSync: true }));
    parts.bastion.follow(state.bastion);
    followRdpGateway(ctx, state.rdpGatewayPort);
  }

  async function stopListeners() {
    await stopGateway?.();
    stopGateway = null;
    parts.bastion.close();
    await parts.vpn.close();
  }

  function retry() {
    if (closed || lock) return;
    clearTimeout(timer);
    timer = setTimeout(() => void take(), PIECES_RETRY_MS);
    timer.unref();
  }

  /** The lock's connection dropped: another process may take the pieces now, so their listeners stop here. */
  async function lost() {
    if (!lock || closed) return;
    lock = false;
    ctx.log.warn('the lock of this machine\'s pieces was lost: their listeners stop here, another process takes them');
    await stopListeners().catch(() => undefined);
    network.release();
    retry();
  }

  async function take() {
    if (closed || lock || trying) return;
    let held = false;
    trying = true;
    try {
      [held = false] = await ctx.locks.tryHold([PIECES_LOCK]);
    } catch (err) {
      ctx.log.warn({ err }, 'the lock of this machine\'s pieces could not be tried');
    } finally {
      trying = false;
    }
    if (!held) return retry();
    if (closed) return void (await ctx.locks.release(PIECES_LOCK));
    lock = true;
    const started = Date.now();
    // What was followed gives way to this process's own listeners.
    followRdpGateway(ctx, null);
    parts.bastion.follow({ ssh: null, http: null, https: null });
    await network.take();
    // An endpoint that opens on a later try is announced then.
    await parts.vpn.start({ onReady: () => void tell({ state: own() }) });
    await parts.bastion.start();
    stopGateway = await startRdpGateway(ctx);
    const state = own();
    ctx.log.info({ ms: Date.now() - started, guestNetwork: state.guestNetwork, vpn: state.vpn, rdpGateway: state.rdpGatewayPort, bastion: state.bastion }, 'this process runs the machine\'s pieces');
    await tell({ state });
  }

  async function onMessage(payload: unknown) {
    const message = payload as Message | undefined;
    // After a gap in listening: the holder says its state again, the others ask for it.
    if (!message) return void (await tell(lock ? { state: own() } : { ask: true }));
    if ('ask' in message && lock) await tell({ state: own() });
    else if ('vpnSync' in message && lock) await parts.vpn.sync();
    else if ('state' in message && !lock && message.state.holder !== config.serverId) follow(message.state);
  }

  return {
    /** Whether this process runs the pieces now. */
    get holding() {
      return lock;
    },
    /** Tries the lock (held: the pieces start now); otherwise asks the holder's state and tries again every 2 s. */
    async start() {
      if (!configured) return;
      unsubscribe = ctx.peers.subscribe('pieces', onMessage);
      offLost = ctx.locks.onLost(() => void lost());
      await take();
      if (!lock) await tell({ ask: true });
    },
    /**
     * The server's stop: the listeners end and the lock goes. With other processes that may take over
     * (PostgreSQL), the guest network is left to them as it is (the next holder adopts it, its dnsmasq
     * serves on); alone (PGlite), the engine's stop decides as it always did.
     */
    async close() {
      closed = true;
      clearTimeout(timer);
      unsubscribe();
      offLost();
      await stopListeners();
      if (ctx.peers.shared) network.release();
      if (lock) await ctx.locks.release(PIECES_LOCK).catch(() => undefined);
      lock = false;
    },
  };
}
