import { Duplex } from 'node:stream';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

/**
 * The embedded PGlite, run in a worker thread (`pglite-worker.mjs`) so that no query runs on the
 * event loop that answers requests. `pg` clients reach it through `stream()`: each connection is a
 * MessagePort carrying the PostgreSQL wire protocol, so the same driver (`pg.Pool` + drizzle's
 * node-postgres) serves the embedded database and PostgreSQL. No socket or port is opened.
 * The thread belongs to this process: it cannot outlive it, whatever kills the process.
 */
export type EmbeddedServer = {
  /** A new wire-protocol connection, for `pg`'s `stream` option. */
  stream: () => Duplex;
  /** Stops PGlite cleanly (checkpoint, files closed); call after the pool has ended. */
  close: () => Promise<void>;
};

type WorkerMessage = { type: 'ready' | 'closed' } | { type: 'failed' | 'error'; message: string };

/** `template`: in memory, from an archive of a data directory (PGlite's `dumpDataDir`: the tests' migrated database) instead of a new cluster. */
export async function startEmbedded(dir: string | undefined, opts: { eagerCompile?: boolean; template?: string } = {}): Promise<EmbeddedServer> {
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), { workerData: { dir, eagerCompile: opts.eagerCompile ?? false, template: opts.template } });
  const streams = new Set<PortStream>();
  let failure: Error | null = null;
  const fail = (err: Error) => {
    if (!failure) process.stderr.write(`${err.message}\n`); // every later query fails with it too
    failure ??= err;
    for (const s of streams) s.destroy(err);
  };

  await new Promise<void>((resolve, reject) => {
    const onMessage = (msg: WorkerMessage) => {
      if (msg.type === 'ready') resolve();
      else if (msg.type === 'failed') reject(new Error(`The embedded database could not start: ${msg.message}`));
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`The embedded database stopped while starting (exit ${code})`)));
  });
  worker.removeAllListeners();
  worker.on('message', (msg: WorkerMessage) => {
    if (msg.type === 'error') fail(new Error(`The embedded database failed: ${msg.message}`));
  });
  worker.on('error', (err) => fail(err));
  let closed = false;
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      if (!closed) fail(new Error(`The embedded database stopped (exit ${code})`));
      resolve();
    }),
  );
  worker.unref(); // idle connections and the thread alone do not keep the process alive

  return {
    stream: () => {
      const s = new PortStream(worker, () => failure);
      streams.add(s);
      s.once('close', () => streams.delete(s));
      return s;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      worker.ref();
      worker.postMessage({ type: 'close' });
      await exited;
    },
  };
}

/** One wire-protocol connection over a MessagePort; shaped like the socket `pg` expects. */
class PortStream extends Duplex {
  #port: MessagePort | null = null;
  #pending = 0; // chunks written and not yet answered: the port keeps the process alive meanwhile

  constructor(
    private readonly worker: Worker,
    private readonly failure: () => Error | null,
  ) {
    super();
  }

  connect() {
    const failure = this.failure();
    if (failure) {
      process.nextTick(() => this.destroy(failure));
      return this;
    }
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    port1.on('message', ([data, answered]: [Uint8Array | null, number]) => {
      if (data) this.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      if (answered && (this.#pending -= answered) === 0) port1.unref();
    });
    port1.on('close', () => this.push(null));
    port1.unref();
    this.worker.postMessage({ type: 'connect', port: port2 }, [port2]);
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  /** Writes of the same tick (pg writes a query's Parse, Bind, Describe, Execute and Sync one by one) go as one message. */
  #queued: Buffer[] = [];

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void) {
    if (!this.#port) return done(new Error('not connected'));
    if (this.#queued.push(chunk) === 1) queueMicrotask(() => this.#flush());
    done();
  }

  #flush() {
    const chunks = this.#queued;
    this.#queued = [];
    if (!this.#port || chunks.length === 0) return;
    // Its own buffer (pg's may be a slice of a shared one), transferred without another copy.
    const copy = new Uint8Array(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    if (this.#pending++ === 0) this.#port.ref();
    this.#port.postMessage(copy, [copy.buffer]);
  }

  override _read() {}

  override _final(done: () => void) {
    this.#close();
    done();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void) {
    this.#close();
    done(err);
  }

  #close() {
    const port = this.#port;
    this.#port = null;
    port?.close();
  }

  setNoDelay() {
    return this;
  }
  setKeepAlive() {
    return this;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
}
