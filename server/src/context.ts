import type { Logger } from 'pino';
import type { Config } from './config';
import type { Database, Db } from './db';
import type { TokenService } from './auth/tokens';
import type { SessionService } from './auth/sessions';
import type { ForgotPasswordLimits, LoginLimits } from './auth/throttle';
import type { Mailer } from './mail/mailer';
import type { Settings } from './settings';
import type { EventBus } from './socket/bus';
import type { Peers } from './socket/peers';
import type { Engine } from './engine';
import type { JobRunner } from './jobs/runner';
import type { Clock } from './scheduler/clock';
import type { Metrics } from './metrics';

/** What every module receives: the adapters and services, created once in app.ts. */
export type AppContext = {
  config: Config;
  db: Db;
  tokens: TokenService;
  sessions: SessionService;
  loginThrottle: LoginLimits;
  forgotPasswordThrottle: ForgotPasswordLimits;
  mailer: Mailer;
  settings: Settings;
  bus: EventBus;
  /** The other server processes on the same PostgreSQL (shared socket.io rooms, changes to what they hold in memory). */
  peers: Peers;
  engine: Engine;
  log: Logger;
  jobs: JobRunner;
  /** Time for bookings and the scheduler (a manual clock in tests). */
  clock: Clock;
  /** Joins the installation's live processes at start-up (`Database.join`: alone → this one repairs). */
  joinInstallation: Database['join'];
  /** Locks one live process at a time holds (`Database.locks`: the watch of each hypervisor). */
  locks: Database['locks'];
  /** This process's instruments (GET /metrics), and its database pool's numbers. */
  metrics: Metrics;
  databasePool: Database['pool'];
};
