import { randomInt } from 'node:crypto';
import { PgBoss, type Queue } from 'pg-boss';
import type { Logger } from 'pino';
import { poolOfDb, type Db } from '../db';

/**
 * pg-boss on the product's PostgreSQL (docs/decisions/0017-jobs-on-pg-boss.md): it decides which live
 * server process runs each job and timed action, once, and hands the work of a process that died to
 * another when its heartbeat lapses. The `jobs` and `scheduled_jobs` rows stay the product's record.
 * One instance per database, shared by the job runner and the scheduler; its own schema `pgboss`,
 * made and migrated by its start. The embedded database (one process) does not use it.
 */
export type WorkQueue = {
  /** Starts pg-boss once for all its users (each `release`s it) and makes the named queue if it is missing; answers pg-boss. */
  open(name: string, options: Omit<Queue, 'name'>): Promise<PgBoss>;
  /** Stops pg-boss when its last user releases it. */
  release(): Promise<void>;
  /**
   * This process's own lane: a job sent with this priority and a start a little ahead is fetched by
   * this process at once (`fetch` with exactly this priority, ignoring the start) and by no other
   * unless this process did not take it in time (the start passed): a job a request queued starts
   * here at once, with the input it was handed in memory.
   */
  lane: number;
};

/** How often a worker here looks for work (jobs taken over, timed actions due). */
export const QUEUE_POLL_MS = 1_000;
/** A job whose process stops sending heartbeats this long is taken over (pg-boss's minimum is 10 s). */
export const HEARTBEAT_SECONDS = 10;
/** How often pg-boss looks for lapsed heartbeats (its monitor) and does its upkeep. */
const MONITOR_SECONDS = 2;

const queues = new WeakMap<Db, WorkQueue>();

/** The work queue of a database, when it has one (PostgreSQL). */
export const queueOf = (db: Db): WorkQueue | undefined => queues.get(db);

/** Gives a PostgreSQL database its work queue (not started: its users open it). */
export function attachQueue(db: Db, log: Logger): WorkQueue {
  const existing = queues.get(db);
  if (existing) return existing;
  // The application's own pool (drizzle's client): no second pool of connections per process.
  const pool = poolOfDb(db);
  let starting: Promise<PgBoss> | null = null;
  let users = 0;
  const queue: WorkQueue = {
    lane: randomInt(1, 2 ** 31 - 1),
    async open(name, options) {
      users++;
      starting ??= (async () => {
        const b = new PgBoss({
          db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) },
          schema: 'pgboss',
          // No cron schedules: timed actions are jobs sent for their instant.
          schedule: false,
          superviseIntervalSeconds: MONITOR_SECONDS,
          monitorIntervalSeconds: MONITOR_SECONDS,
        });
        b.on('error', (err) => log.warn({ err }, 'work queue'));
        await b.start();
        return b;
      })();
      const b = await starting;
      // Made once for the database (pg-boss keeps its options), maybe by another process meanwhile.
      if (!(await b.getQueue(name))) {
        await b.createQueue(name, options).catch(async (err) => {
          if (!(await b.getQueue(name))) throw err;
        });
      }
      return b;
    },
    async release() {
      if (--users > 0 || !starting) return;
      const b = await starting.catch(() => null);
      starting = null;
      // Not graceful: the runner and the scheduler have settled their work by now.
      await b?.stop({ graceful: false, close: false });
    },
  };
  queues.set(db, queue);
  return queue;
}
