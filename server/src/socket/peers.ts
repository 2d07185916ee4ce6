import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createAdapter } from '@socket.io/postgres-adapter';
import type { Logger } from 'pino';

/** Topics other server processes are told of (each subscriber reloads what its topic covers). */
export type PeerTopic = 'setting' | 'hypervisors' | 'start_queue' | 'pieces';
type Handler = (payload: unknown) => void | Promise<void>;

/** The PostgreSQL channel of `publish` (the socket.io adapter has its own, `socket.io#<namespace>`). */
const CHANNEL = 'vdi_peers';
/** The socket.io adapter's table for messages over NOTIFY's 8,000 bytes (its cleanup deletes them after 30 s). */
const ATTACHMENTS = 'socket_io_attachments';
const RECONNECT_MS = 2_000;
const CLOSE_MS = 5_000;

/** NOTIFY's payload must stay under 8,000 bytes; a payload this close to it goes out alone (no sequence number added). */
const NOTIFY_ROOM = 7_950;

/**
 * The pool as socket.io's PostgreSQL adapter sees it, its `pg_notify`s batched: every one asked for
 * while a batch is on its way leaves in the next, as ONE statement, in the order asked, one batch at
 * a time. The adapter sends one NOTIFY per emit and delivers locally only once it is sent: a change
 * that tells 500 people (a deployment made visible) paid 500 round trips in a row
 * (docs/decisions/0015-socket-adapter.md). Each payload gets a sequence number (the adapter ignores
 * the field), since PostgreSQL delivers identical notifications of one transaction once.
 * `settle()` (the process stopping, before its pool ends): what was asked is sent, and anything asked after is left
 * unsent (socket.io's closing still emits; a send on the ended pool failed, a warning each).
 */
export function batchingNotifies(pool: pg.Pool): pg.Pool & { settle: () => Promise<void> } {
  type Item = { channel: string; payload: string; done: (err?: unknown) => void };
  let queue: Item[] = [];
  let sending = false;
  let settled = false;
  let drained: Promise<void> = Promise.resolve();
  let seq = 0;
  const send = async (batch: Item[]) => {
    const channels: string[] = [];
    const payloads: string[] = [];
    for (const { channel, payload } of batch) {
      channels.push(channel);
      payloads.push(payload.startsWith('{') && Buffer.byteLength(payload) < NOTIFY_ROOM ? `{"seq":${++seq},${payload.slice(1)}` : payload);
    }
    await pool.query('SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS t(c, p)', [channels, payloads]);
  };
  const drain = async () => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      // A payload near the limit alone, in its place: a failure must not take the batch with it.
      for (let i = 0; i < batch.length; ) {
        let j = i;
        while (j < batch.length && Buffer.byteLength(batch[j]!.payload) < NOTIFY_ROOM) j++;
        const part = j > i ? batch.slice(i, j) : [batch[i]!];
        try {
          await send(part);
          for (const item of part) item.done();
        } catch (err) {
          for (const item of part) item.done(err);
        }
        i += part.length;
      }
    }
    sending = false;
  };
  const query = ((text: string, values?: unknown[]) => {
    if (text !== 'SELECT pg_notify($1, $2)' || !values) return pool.query(text, values);
    if (settled) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      queue.push({ channel: String(values[0]), payload: String(values[1]), done: (err) => (err ? reject(err) : resolve()) });
      // After the code under way: the emits of one loop leave together.
      if (!sending) {
        sending = true;
        drained = new Promise((done) => queueMicrotask(() => void drain().then(done)));
      }
    });
  }) as pg.Pool['query'];
  // The adapter keeps the client it LISTENs on checked out and listens for its 'end' only: its connection
  // cut (the database restarting or dropped) would throw from an 'error' event nobody listens to. The
  // adapter reconnects on 'end'.
  const ignore = () => {};
  const connect = async () => {
    const client = await pool.connect();
    if (!client.listeners('error').includes(ignore)) client.on('error', ignore);
    return client;
  };
  const settle = async () => {
    settled = true;
    await drained;
  };
  return { connect, query, settle } as unknown as pg.Pool & { settle: () => Promise<void> };
}

/**
 * The other server processes on the same database: a change one process makes to something they
 * hold in memory reaches them at once, and socket.io rooms are shared (`socketAdapter`).
 *
 * On PostgreSQL: LISTEN/NOTIFY on the product's own database (docs/decisions/0015-socket-adapter.md),
 * through a small pool of its own: one connection listens for `publish`, one for the socket.io
 * adapter, one sends the adapter's messages in batches (`batchingNotifies`), in the order they were
 * emitted (a desktop's "Started" never overtakes its "Starting"). A listening connection that drops is opened again, and
 * then every subscriber runs with no payload ("reload everything"): a notification sent while it was
 * away is not lost. Embedded (PGlite, one process): `publish` is a local call, socket.io keeps its
 * in-memory adapter.
 */
export function createPeers(databaseUrl: string | undefined, log: Logger) {
  const handlers = new Map<PeerTopic, Set<Handler>>();
  const self = randomUUID();
  const run = async (topic: PeerTopic, payload: unknown) => {
    for (const h of handlers.get(topic) ?? []) {
      try {
        await h(payload);
      } catch (err) {
        log.warn({ err, topic }, 'a change from another server process was not applied');
      }
    }
  };
  const reloadAll = async () => {
    for (const topic of handlers.keys()) await run(topic, undefined);
  };

  let pool: pg.Pool | undefined;
  let adapter: ReturnType<typeof createAdapter> | undefined;
  let notifies: ReturnType<typeof batchingNotifies> | undefined;
  let closed = false;
  let listener: pg.PoolClient | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;

  async function listen(again: boolean) {
    if (!pool || closed) return;
    try {
      const client = await pool.connect();
      client.on('notification', (msg) => {
        if (msg.channel !== CHANNEL || !msg.payload) return;
        try {
          const { from, topic, payload } = JSON.parse(msg.payload) as { from: string; topic: PeerTopic; payload: unknown };
          if (from !== self) void run(topic, payload);
        } catch (err) {
          log.warn({ err }, 'an unreadable notification from another server process');
        }
      });
      client.on('error', () => {});
      client.on('end', () => {
        if (listener !== client || closed) return;
        listener = undefined;
        retry = setTimeout(() => void listen(true), RECONNECT_MS);
      });
      await client.query(`LISTEN ${CHANNEL}`);
      listener = client;
      if (again) await reloadAll();
    } catch (err) {
      log.warn({ err }, 'listening to the other server processes failed; trying again');
      retry = setTimeout(() => void listen(true), RECONNECT_MS);
    }
  }

  /** The adapter's table, made once whichever process starts first (an advisory lock against the race of IF NOT EXISTS). */
  async function ensureAttachments(p: pg.Pool) {
    const client = await p.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [ATTACHMENTS]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${ATTACHMENTS} (id bigserial PRIMARY KEY, created_at timestamptz DEFAULT now(), payload bytea)`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  return {
    /** Whether other processes may share this one's rooms and memory (PostgreSQL). */
    shared: Boolean(databaseUrl),

    /** Connects to the others (the server's start; until then and without PostgreSQL, `publish` is local only). */
    async start() {
      if (!databaseUrl || pool || closed) return;
      pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
      pool.on('error', () => {});
      await ensureAttachments(pool);
      await listen(false);
    },

    /**
     * The socket.io adapter shared by the processes once started (undefined: socket.io's in-memory one).
     * Made when asked for: its listening connection goes back to the pool when socket.io closes it.
     */
    get socketAdapter() {
      if (pool && !adapter && !closed) adapter = createAdapter((notifies = batchingNotifies(pool)), { errorHandler: (err) => log.warn({ err }, 'socket.io adapter') });
      return adapter;
    },

    /** Applies a change here (awaited), then tells the other processes, whose subscribers run with the same payload. */
    async publish(topic: PeerTopic, payload: unknown) {
      await run(topic, payload);
      if (!pool || closed) return;
      try {
        await pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ from: self, topic, payload })]);
      } catch (err) {
        // Applied here and stored; the others reload everything when their listening connection comes back.
        log.warn({ err, topic }, 'the other server processes were not told of a change');
      }
    },

    /** `handler` runs for each change of `topic` (payload undefined: after a gap, reload everything of it). */
    subscribe(topic: PeerTopic, handler: Handler): () => void {
      let set = handlers.get(topic);
      if (!set) handlers.set(topic, (set = new Set()));
      set.add(handler);
      return () => set.delete(handler);
    },

    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(retry);
      listener?.release(true);
      listener = undefined;
      // The adapter's messages asked for before are sent first, then the pool ends (bounded: a connection still checked
      // out, e.g. by an adapter socket.io never closed, would hold it for good).
      const ending = (notifies?.settle() ?? Promise.resolve()).then(() => pool?.end()).catch(() => undefined);
      await Promise.race([ending, new Promise((r) => setTimeout(r, CLOSE_MS).unref())]);
    },
  };
}
export type Peers = ReturnType<typeof createPeers>;
