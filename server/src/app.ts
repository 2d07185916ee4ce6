import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Config } from './config';
import type { AppContext } from './context';
import type { Database } from './db';
import type { Engine } from './engine';
import { createTokenService } from './auth/tokens';
import { createSessionService } from './auth/sessions';
import { createForgotPasswordLimits, createLoginLimits } from './auth/throttle';
import { authenticationRoutes } from './auth/routes';
import { adminSessionRoutes } from './auth/admin-session';
import { createMailer, type Mailer } from './mail/mailer';
import { createSettings } from './settings';
import { createEventBus } from './socket/bus';
import { createPeers } from './socket/peers';
import { createJobRunner } from './jobs/runner';
import { attachQueue } from './jobs/queue';
import { attachSocketServer } from './socket/server';
import { feedAuditToConsole } from './modules/admin/audit/live';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/errors';
import { authenticateFirst } from './http/guard';
import { registerInputChecks } from './http/input';
import { registerWeb } from './http/web';
import { createLog } from './http/log';
import { registerHealth } from './http/health';
import { userRoutes } from './modules/user/routes';
import { publicCategoryRoutes, systemRoutes } from './modules/system/routes';
import { adminRoutes } from './modules/admin/routes';
import { adminDesktopRoutes } from './modules/admin/desktops/routes';
import { adminContentRoutes } from './modules/admin/content/routes';
import { createDesktopLifecycle, type DesktopLifecycle } from './modules/desktops/lifecycle';
import { desktopRoutes } from './modules/desktops/routes';
import { viewerRoutes } from './modules/viewers/routes';
import { guestFileRoutes } from './modules/viewers/guest-files';
import { attachViewerGateways } from './modules/viewers/gateways';
import { stopViewerHeartbeat } from './modules/viewers/activity';
import { directRoutes } from './modules/direct/routes';
import { domainRoutes } from './modules/domains/routes';
import { desktopImageRoutes } from './modules/domains/images';
import { templateRoutes } from './modules/templates/routes';
import { storageRoutes } from './modules/storage/routes';
import { recycleBinRoutes } from './modules/recycle-bin/routes';
import { startRecycleBinPurge } from './modules/recycle-bin/purge';
import { mediaRoutes } from './modules/media/routes';
import { allowedRoutes } from './modules/allowed/routes';
import { createMediaService } from './modules/media/service';
import { deploymentRoutes } from './modules/deployments/routes';
import { realClock, type Clock } from './scheduler/clock';
import { createBookings } from './modules/bookings/service';
import { bookingRoutes } from './modules/bookings/routes';
import { plannerRoutes } from './modules/reservables/routes';
import { migrationRoutes } from './modules/migration/routes';
import { notificationRoutes } from './modules/notifications/routes';
import { sweepStorage } from './modules/storage/sweep';
import { followInterruptedCreations } from './modules/storage/interrupted';
import { followSettings } from './modules/admin/settings/apply';
import { startAuditSweep } from './modules/admin/audit/sweep';
import { startTemporaryDesktopSweep } from './modules/desktops/temporary-sweep';
import { desktopPoolRoutes } from './modules/desktop-pools/routes';
import type { DesktopPools } from './modules/desktop-pools/service';
import { startUsageRollup } from './modules/usage/rollup';
import { startMetricSampler } from './modules/usage/sampler';
import { reportRoutes } from './modules/usage/routes';
import { followHypervisors, resumeHypervisors, startHypervisorMonitor } from './modules/admin/hypervisors/routes';
import { createAutoShutdown } from './modules/desktops/auto-shutdown';
import { adminReservableRoutes } from './modules/admin/reservables/routes';
import { adminShutdownPolicyRoutes } from './modules/admin/shutdown-policies/routes';
import { formatCidr, overlaps, parseCidr } from './network/plan';
import { createVpnService, type VpnNetwork, type VpnService } from './vpn/service';
import { vpnRoutes } from './modules/vpn/routes';
import { createBastion, type Bastion } from './modules/bastion/service';
import { bastionRoutes } from './modules/bastion/routes';
import { apiTokenRoutes } from './modules/api-tokens/routes';
import { twoFactorAuthenticationRoutes, twoFactorRoutes } from './modules/two-factor/routes';
import { identityAdminRoutes, identityAuthenticationRoutes, identityHooks } from './modules/identity/routes';
import { registerOpenApi } from './http/openapi';
import { createMachinePieces } from './modules/pieces/service';
import { createMetrics } from './metrics';
import { metricsRoutes } from './modules/metrics/routes';

/** A route as registered: its method, URL pattern and zod schemas (params, querystring, body). */
export type RegisteredRoute = {
  method: string;
  url: string;
  schema?: { params?: unknown; querystring?: unknown; body?: unknown; response?: unknown };
  /** A session is required (a `requireAuth` guard, run before anything reads the input). */
  authenticated: boolean;
};

declare module 'fastify' {
  interface FastifyInstance {
    registeredRoutes: RegisteredRoute[];
    lifecycle: DesktopLifecycle;
    vpn: VpnService;
    bastion: Bastion;
    /** The desktop pools' manager (its passes; tests await one). */
    desktopPools: DesktopPools;
    /** The stop's first step: the health route answers 503 (a balancer drains this process), resolved `ms` later. */
    drain: (ms: number) => Promise<void>;
  }
}

/** The guest network as the VPN sees it (null: none configured); its endpoint runs where the network is run (modules/pieces). */
function vpnNetworkOf(ctx: AppContext): VpnNetwork | null {
  const net = ctx.engine.network;
  if (!net.plan) return null;
  // The link prefix of the network (its links are <prefix>h, <prefix>t…): the VPN's is <prefix>wg.
  return {
    get available() {
      return net.held;
    },
    namespace: net.namespace,
    ifname: `${net.names.hostLink.slice(0, -1)}wg`,
    guestCidr: formatCidr(net.plan.subnet),
  };
}

/** How long requests under way may take to finish once the server stops. */
const REQUEST_GRACE_MS = 3_000;

export function createContext(config: Config, database: Database, engine: Engine, overrides: { mailer?: Mailer; clock?: Clock; log?: Logger } = {}): AppContext {
  const tokens = createTokenService(config.secret);
  // Several processes of one installation write to one place: each line names its process.
  const log = (overrides.log ?? createLog(config.logLevel)).child({ server: config.serverId });
  // On PostgreSQL, jobs and timed actions go through pg-boss (several processes: each runs once, a dead one's are taken over).
  if (database.kind === 'postgres') attachQueue(database.db, log);
  return {
    config,
    db: database.db,
    joinInstallation: database.join,
    locks: database.locks,
    tokens,
    sessions: createSessionService(database.db, tokens, config.session),
    loginThrottle: createLoginLimits(database.db, { addressFailuresPerHour: config.loginAddressFailuresPerHour }),
    forgotPasswordThrottle: createForgotPasswordLimits(database.db),
    mailer: overrides.mailer ?? createMailer(config),
    settings: createSettings(database.db),
    bus: createEventBus(),
    peers: createPeers(database.url, log),
    engine,
    log,
    jobs: createJobRunner(database.db, log),
    clock: overrides.clock ?? realClock(),
    metrics: createMetrics({ server: config.serverId }),
    databasePool: database.pool,
  };
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log as unknown as FastifyBaseLogger,
    // Forwarded headers only from the proxies named in TRUST_PROXY; otherwise the peer is the client.
    trustProxy: ctx.config.trustProxy.length > 0 ? ctx.config.trustProxy : false,
    bodyLimit: 2 * 1024 * 1024,
    // Refusals by the router and by the HTTP parser answer the catalogue body too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // Unique across the installation's processes: the log's reqId and an error answer's request_id.
    genReqId: () => randomUUID(),
  });
  // Every answer says its request id (a person quotes it; the log has it on the request's lines).
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Each answer counted for monitoring, by the route's pattern (a path would make a series per desktop).
  app.addHook('onResponse', async (request, reply) => {
    ctx.metrics.http(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
  // A request without a body has `null` as its body: a route whose body is optional takes it as none.
  app.setValidatorCompiler((route: Parameters<typeof validatorCompiler>[0]) => {
    const validate = validatorCompiler(route);
    return route.httpPart === 'body' ? (data: unknown) => validate(data ?? undefined) : validate;
  });
  app.setSerializerCompiler(serializerCompiler);
  // Every registered route, for the suites that are generated from them (authorisation matrix, bad input).
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    const authenticated = authenticateFirst(route);
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url, schema: route.schema as RegisteredRoute['schema'], authenticated });
    }
  });
  await app.register(cookie);
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: 1024 * 1024, files: 1, fields: 50 } });
  // Multipart forms become `{field: value}` bodies; strings the database cannot hold are refused (400).
  registerInputChecks(app);
  // GET /api/v3/health for a load balancer, and X-Server-Id on every answer.
  app.decorate('drain', registerHealth(app, ctx.config.serverId).drain);

  const webDist = ctx.config.webDist ?? join(import.meta.dirname, '..', '..', 'web', 'dist');
  registerErrorHandling(app, await registerWeb(app, webDist));

  await app.register(async (scope) => {
    await authenticationRoutes(scope, ctx, identityHooks(ctx));
    await identityAuthenticationRoutes(scope, ctx);
    await twoFactorAuthenticationRoutes(scope, ctx);
    await publicCategoryRoutes(scope, ctx);
  }, { prefix: '/authentication' });
  // The admin app's session, shared with the portal's (its pages come later).
  await app.register(async (scope) => adminSessionRoutes(scope, ctx), { prefix: '/isard-admin' });

  // Settings held by live services (mail transport, session lifetimes), as stored, and as changed by any process.
  await ctx.peers.start();
  await followSettings(ctx);
  // This machine's pieces — the guest network, the user VPN (on it), the bastion's listeners and the RD
  // Gateway for .rdp files (RDP_GATEWAY_PORT) — run in one process of the installation (modules/pieces):
  // taken now when no other runs them (before the repairs below, which wait for guests' addresses),
  // else followed and taken over when that process dies.
  const vpn = createVpnService(ctx, vpnNetworkOf(ctx));
  // The bastion connects only to addresses on the guest network (when there is one).
  const bastion = createBastion(ctx, {
    isAllowedAddress: (ip) => {
      const guestSubnet = ctx.engine.network.available ? ctx.engine.network.plan?.subnet : undefined;
      if (!guestSubnet) return true;
      const a = parseCidr(`${ip}/32`);
      return a !== null && overlaps(a, guestSubnet);
    },
  });
  const pieces = createMachinePieces(ctx, { vpn, bastion });
  await pieces.start();
  const lifecycle = createDesktopLifecycle(ctx);
  // Alone (no other process of the installation running): this one repairs what a stop left — adopts
  // running machines, corrects states, finishes interrupted creations, sweeps the storage. Beside live
  // processes those would be their work under way; a process starting beside this one waits until
  // `joined.ready()` below.
  // (A start that fails on the way ends the process or its database, and the start-up lock with it.)
  const joined = await ctx.joinInstallation();
  if (joined.alone) await lifecycle.reconcile();
  lifecycle.runQueue(joined.self);
  // After the reconciliation, which leaves the desktops of hosts not online yet as they are.
  await resumeHypervisors(ctx);
  const unfollowHypervisors = followHypervisors(ctx);
  app.decorate('lifecycle', lifecycle);
  const media = createMediaService(ctx);
  // Bookings and their scheduler (booking starts and ends, warnings, plan boundaries).
  const bookings = createBookings(ctx, lifecycle);
  app.decorate('bookings', bookings);
  // Auto-shutdown policies of running desktops, on the same scheduler.
  const autoShutdown = createAutoShutdown(ctx, lifecycle, bookings.scheduler);
  app.decorate('autoShutdown', autoShutdown);
  ctx.jobs.register(media.handler);

  app.decorate('vpn', vpn);
  app.decorate('bastion', bastion);

  let desktopPools: DesktopPools | undefined;
  await app.register(async (scope) => {
    await userRoutes(scope, ctx, bastion);
    await vpnRoutes(scope, ctx, vpn);
    await bastionRoutes(scope, ctx, bastion);
    await systemRoutes(scope, ctx);
    await adminRoutes(scope, ctx, lifecycle);
    await reportRoutes(scope, ctx);
    await adminDesktopRoutes(scope, ctx, lifecycle);
    await desktopRoutes(scope, ctx, lifecycle);
    await viewerRoutes(scope, ctx);
    await guestFileRoutes(scope, ctx);
    await directRoutes(scope, ctx, lifecycle);
    await domainRoutes(scope, ctx, lifecycle);
    await templateRoutes(scope, ctx, lifecycle);
    await mediaRoutes(scope, ctx, media);
    await allowedRoutes(scope, ctx, { lifecycle, media });
    await storageRoutes(scope, ctx, lifecycle);
    await recycleBinRoutes(scope, ctx);
    const deploymentEvents = await deploymentRoutes(scope, ctx, lifecycle);
    desktopPools = await desktopPoolRoutes(scope, ctx, lifecycle);
    app.decorate('desktopPools', desktopPools);
    await adminContentRoutes(scope, ctx, { lifecycle, media, deploymentEvents });
    await bookingRoutes(scope, ctx, bookings);
    await plannerRoutes(scope, ctx, bookings);
    await adminReservableRoutes(scope, ctx, bookings);
    await adminShutdownPolicyRoutes(scope, ctx, autoShutdown);
    await migrationRoutes(scope, ctx);
    await notificationRoutes(scope, ctx);
    await apiTokenRoutes(scope, ctx);
    await twoFactorRoutes(scope, ctx);
    await identityAdminRoutes(scope, ctx);
    registerOpenApi(scope, routes);
  }, { prefix: '/api/v3' });

  // GET /metrics for the installation's monitoring (Prometheus).
  await metricsRoutes(app, ctx);

  // Desktop covers, where the original static host served them: /assets/img/desktops/{stock,user}/…
  await desktopImageRoutes(app, ctx);

  // Every module has registered its job handlers. After a restart: jobs that cannot resume fail
  // (and undo their work), the storage is swept (interrupted creations finished, files without
  // a record quarantined, records without a file failed), then the other jobs go on.
  if (joined.alone) {
    await ctx.jobs.failInterrupted();
    await sweepStorage(ctx);
  }
  await ctx.jobs.resumeAll();
  await joined.ready();
  // Beside other live processes: a desktop creation cut short by one's death is finished by another.
  const unfollowCreations = followInterruptedCreations(ctx);
  await bookings.start();
  await autoShutdown.replanAll();

  const io = attachSocketServer(app.server, ctx);
  const stopAuditFeed = feedAuditToConsole(ctx);
  const closeGateways = attachViewerGateways(app.server, ctx);
  // Connections the HTTP server no longer waits on as requests (upgraded to a websocket, CONNECT
  // tunnels to SPICE) and all the others, so that a stop can end them.
  const connections = new Set<Duplex>();
  const longLived = new Set<Duplex>();
  const track = (set: Set<Duplex>) => (socket: Duplex) => {
    set.add(socket);
    socket.once('close', () => set.delete(socket));
  };
  app.server.on('connection', track(connections));
  app.server.on('upgrade', (_req, socket: Duplex) => track(longLived)(socket));
  app.server.on('connect', (_req, socket: Duplex) => track(longLived)(socket));
  // Recycle bin retention: entries older than their cutoff hours are deleted for good.
  const stopPurge = startRecycleBinPurge(ctx);
  // Audit log retention (the `audit` setting).
  const stopAuditSweep = startAuditSweep(ctx);
  // Temporary desktops nobody views (the `temporary_desktops` setting).
  const stopTemporarySweep = startTemporaryDesktopSweep(ctx, lifecycle);
  // Desktop pools: prepared desktops kept at each pool's target, given ones taken back (one pass per pool at a time).
  desktopPools?.start();
  // Usage rolled up per hour for the reports (one process at a time).
  const stopUsageRollup = startUsageRollup(ctx);
  // The dashboard's history: a row a minute (the first process to reach it writes it).
  const stopMetricSampler = startMetricSampler(ctx);
  // The hypervisors' live numbers for the admins' consoles.
  const stopHypervisorMonitor = startHypervisorMonitor(ctx);
  // Before the listener closes (it waits for every open connection): live sockets, viewer
  // websockets and SPICE tunnels end now, idle keep-alive connections too; requests under way
  // get a moment to finish. Running machines are left alone (the next start adopts them).
  app.addHook('preClose', async () => {
    const jobsStopped = ctx.jobs.stopAll();
    stopPurge();
    stopAuditSweep();
    stopTemporarySweep();
    stopUsageRollup();
    stopMetricSampler();
    stopHypervisorMonitor();
    await bookings.scheduler.stop();
    await jobsStopped;
    await desktopPools?.close();
    lifecycle.close();
    closeGateways();
    await pieces.close();
    io.disconnectSockets(true);
    io.engine.close();
    for (const socket of longLived) socket.destroy();
    app.server.closeIdleConnections();
    const late = setTimeout(() => {
      for (const socket of connections) socket.destroy();
    }, REQUEST_GRACE_MS).unref();
    app.server.once('close', () => clearTimeout(late));
  });
  app.addHook('onClose', async () => {
    stopAuditFeed();
    unfollowHypervisors();
    unfollowCreations();
    stopViewerHeartbeat(ctx);
    await io.close();
    await ctx.peers.close();
  });
  return app;
}
