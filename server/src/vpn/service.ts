// The user VPN: keys per user (made on the server, kept in `user_vpn`), the file users download,
// the reset, and the endpoint kept in step with the database: its peers (every active user with
// keys) and its firewall (each user's address → the addresses of that user's started desktops).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import { REACHABLE, type TVpnConfig } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import { precondition } from '../http/errors';
import { freeAddress, rangesOverlap, usersRange, type UsersRange } from './addresses';
import { wgEndpoint, wgUserConfig } from './config-file';
import { VpnEndpoint, type VpnPeer } from './endpoint';
import type { ReachPair } from './firewall';
import { generateWgKeyPair, wgPublicKeyOf } from './keys';

/** What the VPN needs of the guest network (network/): its namespace and range. */
export type VpnNetwork = { available: boolean; namespace: string; ifname: string; guestCidr: string };

const SYNC_MS = 2000;
/** An endpoint that could not open (wireguard-go slow to start on a loaded host, a link left busy) is tried again: first after this, doubling to a minute. */
const REOPEN_FIRST_MS = 5000;
const REOPEN_MAX_MS = 60_000;

/** The server's key pair: made once under DATA_DIR/vpn (0600), never printed. */
function serverKeys(stateDir: string) {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = join(stateDir, 'server.key');
  if (!existsSync(file)) writeFileSync(file, `${generateWgKeyPair().privateKey}\n`, { mode: 0o600, flag: 'wx' });
  const privateKey = readFileSync(file, 'utf8').trim();
  return { privateKey, publicKey: wgPublicKeyOf(privateKey) };
}

export type VpnService = ReturnType<typeof createVpnService>;

export function createVpnService(ctx: AppContext, network: VpnNetwork | null) {
  const stateDir = join(ctx.config.dataDir, 'vpn');
  let endpoint: VpnEndpoint | null = null;
  let reason: string | null = null;
  let range: UsersRange | null = null;
  let keys: { privateKey: string; publicKey: string } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let syncing: Promise<void> | null = null;
  let again = false;
  /** another process of this machine runs the endpoint (`follow`); `nudge` asks it to apply a change now */
  let followed = false;
  let nudge: (() => void) | null = null;
  /** the next try to open an endpoint that failed to, and its delay; `onReady`: called when a later try opens it */
  let reopen: NodeJS.Timeout | null = null;
  let reopenMs = REOPEN_FIRST_MS;
  let onReady: (() => void) | null = null;
  /** counts starts and closes: a try that ends after a close leaves no endpoint behind */
  let generation = 0;
  let closedWith: { stop?: boolean } = {};

  async function desired(): Promise<{ peers: VpnPeer[]; reach: ReachPair[] }> {
    const peers = await ctx.db
      .select({ publicKey: schema.userVpn.publicKey, address: schema.userVpn.address })
      .from(schema.userVpn)
      .innerJoin(schema.users, eq(schema.users.id, schema.userVpn.userId))
      .where(and(eq(schema.users.active, true), isNull(schema.users.deletedAt)));
    const reach = await ctx.db
      .select({ user: schema.userVpn.address, guest: schema.domains.guestIp })
      .from(schema.userVpn)
      .innerJoin(schema.users, eq(schema.users.id, schema.userVpn.userId))
      .innerJoin(schema.domains, eq(schema.domains.userId, schema.userVpn.userId))
      .where(
        and(
          eq(schema.users.active, true),
          isNull(schema.users.deletedAt),
          eq(schema.domains.kind, 'desktop'),
          inArray(schema.domains.status, [...REACHABLE]),
          isNotNull(schema.domains.guestIp),
        ),
      );
    const pairs = reach.map((r) => ({ user: r.user, guest: r.guest ?? '' }));
    // Admins by policy (setting `vpn`): every started desktop.
    if ((await ctx.settings.get('vpn')).admins_reach_all) {
      const admins = await ctx.db
        .select({ address: schema.userVpn.address })
        .from(schema.userVpn)
        .innerJoin(schema.users, eq(schema.users.id, schema.userVpn.userId))
        .where(and(eq(schema.users.roleId, 'admin'), eq(schema.users.active, true), isNull(schema.users.deletedAt)));
      if (admins.length) {
        const guests = await ctx.db
          .select({ ip: schema.domains.guestIp })
          .from(schema.domains)
          .where(and(eq(schema.domains.kind, 'desktop'), inArray(schema.domains.status, [...REACHABLE]), isNotNull(schema.domains.guestIp)));
        for (const a of admins) for (const g of guests) pairs.push({ user: a.address, guest: g.ip ?? '' });
      }
    }
    return { peers, reach: pairs };
  }

  /** Brings the endpoint in step with the database now (a call during a sync runs once more after it).
   *  `force`: applies everything again even if nothing changed here (something else touched it). */
  let forced = false;
  function sync(force = false): Promise<void> {
    if (!endpoint) {
      nudge?.();
      return Promise.resolve();
    }
    forced ||= force;
    if (syncing) {
      again = true;
      return syncing;
    }
    syncing = (async () => {
      try {
        do {
          again = false;
          const want = await desired();
          const f = forced;
          forced = false;
          await endpoint?.apply(want.peers, want.reach, f);
        } while (again);
      } finally {
        syncing = null;
      }
    })();
    return syncing;
  }

  async function start(opts: { onReady?: () => void } = {}): Promise<void> {
    followed = false;
    nudge = null;
    reason = null;
    onReady = opts.onReady ?? null;
    generation++;
    reopenMs = REOPEN_FIRST_MS;
    const port = ctx.config.vpn.port;
    if (port === null) reason = 'VPN_PORT is off';
    else if (!network?.available) reason = 'the VPN needs the guest network';
    else if (rangesOverlap(ctx.config.vpn.usersNetwork, network.guestCidr)) reason = 'VPN_USERS_NETWORK overlaps GUEST_NETWORK';
    if (reason || !network || port === null) {
      ctx.log.info({ reason }, 'user VPN not available');
      return;
    }
    range = usersRange(ctx.config.vpn.usersNetwork);
    keys = serverKeys(stateDir);
    await open(network, port);
  }

  /** Opens the endpoint; a failure is tried again later (until `close`), its reason answered meanwhile. */
  async function open(net: VpnNetwork, port: number): Promise<void> {
    reopen = null;
    const mine = generation;
    try {
      const opened = await VpnEndpoint.open(
        {
          namespace: net.namespace,
          ifname: net.ifname,
          stateDir,
          port,
          privateKey: keys!.privateKey,
          address: `${range!.endpoint}/${range!.prefix}`,
          log: ctx.log,
        },
        await desired(),
      );
      if (mine !== generation) return void (await opened.close(closedWith));
      endpoint = opened;
      reason = null;
      timer = setInterval(() => void sync().catch((err) => ctx.log.warn({ err: String(err) }, 'vpn sync failed')), SYNC_MS);
      timer.unref();
      ctx.log.info({ ifname: net.ifname, port }, 'user VPN ready');
    } catch (err) {
      reason = `could not start the VPN endpoint: ${err instanceof Error ? err.message : String(err)}`;
      endpoint = null;
      ctx.log.warn({ reason, retryInMs: reopenMs }, 'user VPN not available');
      if (mine !== generation) return;
      reopen = setTimeout(() => {
        void open(net, port).then(() => {
          if (endpoint && mine === generation) onReady?.();
        });
      }, reopenMs);
      reopen.unref();
      reopenMs = Math.min(REOPEN_MAX_MS, reopenMs * 2);
    }
  }

  async function userKeys(userId: string) {
    const [row] = await ctx.db.select().from(schema.userVpn).where(eq(schema.userVpn.userId, userId));
    if (row) return row;
    return createKeys(userId);
  }

  async function createKeys(userId: string) {
    for (let attempt = 0; attempt < 20; attempt++) {
      const taken = (await ctx.db.select({ a: schema.userVpn.address }).from(schema.userVpn)).map((r) => r.a);
      const address = freeAddress(range!, taken);
      if (!address) throw precondition('no_wireguard_keys', 'The VPN range has no free address');
      const pair = generateWgKeyPair();
      const inserted = await ctx.db
        .insert(schema.userVpn)
        .values({ userId, address, privateKey: pair.privateKey, publicKey: pair.publicKey })
        .onConflictDoNothing()
        .returning();
      if (inserted[0]) {
        await sync();
        return inserted[0];
      }
      const [mine] = await ctx.db.select().from(schema.userVpn).where(eq(schema.userVpn.userId, userId));
      if (mine) return mine; // made meanwhile by another request
    }
    throw precondition('no_wireguard_keys', 'Could not give the VPN an address');
  }

  function assertAvailable() {
    if (!(endpoint || followed) || !keys || !range) throw precondition('no_wireguard_keys', 'The VPN is not available on this server');
  }

  return {
    start,
    sync,
    /**
     * Another process of this machine runs the endpoint (`available`: it is up there, with the server key
     * under the shared DATA_DIR/vpn): files and resets are answered here, `onChange` asks that process to
     * apply a change at once (it also applies the database every 2 s).
     */
    follow(available: boolean, onChange: () => void) {
      if (endpoint) return;
      followed = available && network !== null && ctx.config.vpn.port !== null;
      nudge = followed ? onChange : null;
      if (followed) {
        range = usersRange(ctx.config.vpn.usersNetwork);
        keys = serverKeys(stateDir);
      }
    },
    get available() {
      return endpoint !== null;
    },
    get reason() {
      return reason;
    },
    get ifname() {
      return endpoint?.ifname ?? null;
    },
    /** The user's file (keys made on first use). `hostOf`: VPN_HOST, else the configured public address's host name. */
    async configFile(userId: string, hostOf: () => Promise<string>): Promise<TVpnConfig> {
      assertAvailable();
      const host = await hostOf();
      const row = await userKeys(userId);
      return {
        kind: 'file',
        name: 'isard-vpn',
        ext: 'conf',
        mime: 'text/plain',
        content: wgUserConfig({
          address: row.address,
          privateKey: row.privateKey,
          serverPublicKey: keys!.publicKey,
          endpoint: wgEndpoint(host, ctx.config.vpn.port!),
          allowedIps: network!.guestCidr,
        }),
      };
    },
    /** New keys (same address); the old peer is off the endpoint before this answers. */
    async reset(userId: string): Promise<void> {
      assertAvailable();
      const pair = generateWgKeyPair();
      const updated = await ctx.db
        .update(schema.userVpn)
        .set({ privateKey: pair.privateKey, publicKey: pair.publicKey, createdAt: new Date() })
        .where(eq(schema.userVpn.userId, userId))
        .returning({ userId: schema.userVpn.userId });
      if (!updated[0]) await createKeys(userId);
      await sync();
    },
    async close(opts: { stop?: boolean } = {}) {
      if (timer) clearInterval(timer);
      timer = null;
      if (reopen) clearTimeout(reopen);
      reopen = null;
      onReady = null;
      generation++;
      closedWith = opts;
      await syncing?.catch(() => undefined);
      await endpoint?.close(opts);
      endpoint = null;
    },
  };
}
