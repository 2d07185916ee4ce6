// The embedded database's thread: PGlite runs here, off the server's event loop, and speaks the
// PostgreSQL wire protocol to `pg` clients in the main thread over MessagePorts (see embedded.ts).
// Plain JavaScript so that the thread starts without a TypeScript loader (server, tests, scripts).
//
// PGlite is one PostgreSQL session. Several client connections share it safely because one
// connection owns the session from its first message until a ReadyForQuery leaves the session
// idle (outside a transaction): a transaction, or a Parse/Bind/Execute/Sync cycle, of one
// connection never interleaves with another's. Connections that send while another owns the
// session wait their turn, in order.
import { appendFileSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const { dir, eagerCompile, template } = workerData;
// PostgreSQL's WebAssembly compiled by the optimising compiler at start (about a second of CPU
// more) instead of tiering up while the first rush of requests runs: measured with the bench's
// creation row, the threads other than the main one spent about half the CPU per creation.
if (eagerCompile) setFlagsFromString('--no-liftoff');
const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'
const PARSE = 0x50; // 'P'
const PARSE_COMPLETE = Buffer.from([0x31, 0, 0, 0, 4]); // '1'
const BIND = 0x42; // 'B'
/**
 * VDI_SQL_TIME=<file> (engineers, benches): each turn of a connection on the session, as the time it ended (epoch ms),
 * the session's time it took (ms) and its statement's text, one line each; never the parameters.
 */
const timeFile = process.env.VDI_SQL_TIME;

let db;
try {
  // In memory from an archive of a data directory (`template`: the tests' migrated database, made
  // once per run by server/test/global-db.ts): PGlite's own initdb is most of an in-memory start's CPU (about 7 s of 8).
  db = dir
    ? await PGlite.create(dir, { relaxedDurability: false })
    : template
      ? await PGlite.create({ loadDataDir: new Blob([readFileSync(template)]) })
      : await PGlite.create();
} catch (err) {
  parentPort.postMessage({ type: 'failed', message: err instanceof Error ? err.stack ?? err.message : String(err) });
  process.exit(1);
}

/**
 * Named statements prepared in the session: name → SQL text. Each `pg` connection remembers the
 * statements it parsed, but here they all share one session: a second connection's Parse of a
 * name the session already holds with the same text is answered ParseComplete without parsing
 * again (and a name reused for another text is closed first). A prepared statement is parsed and
 * planned once per server, not on every call (the request guard's query: 0.5 ms each time).
 */
const prepared = new Map();

/** A Parse message's statement name and text (both NUL-terminated after the 5-byte header). */
function parseTarget(message) {
  const nameEnd = message.indexOf(0, 5);
  const textEnd = message.indexOf(0, nameEnd + 1);
  return { name: message.toString('utf8', 5, nameEnd), text: message.toString('utf8', nameEnd + 1, textEnd) };
}

/** A Close message for a named statement. */
function closeStatement(name) {
  const body = Buffer.from(`S${name}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header[0] = 0x43; // 'C'
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

/** Runs one message of a connection, its answers added to `out`; named Parses go through `prepared`. */
async function execute(message, type, out) {
  const target = type === PARSE ? parseTarget(message) : null;
  if (!target?.name) {
    await db.execProtocolRawStream(message, { onRawData: (data) => out.push(Buffer.from(data)) });
    return;
  }
  const known = prepared.get(target.name);
  if (known === target.text) {
    out.push(PARSE_COMPLETE);
    return;
  }
  if (known !== undefined) {
    prepared.delete(target.name);
    await db.execProtocolRawStream(closeStatement(target.name), { onRawData: () => {} });
  }
  const answers = [];
  await db.execProtocolRawStream(message, { onRawData: (data) => answers.push(Buffer.from(data)) });
  if (answers[0]?.[0] === PARSE_COMPLETE[0]) prepared.set(target.name, target.text);
  out.push(...answers);
}

/** @type {Set<Connection>} */
const connections = new Set();
/** @type {Connection | null} */
let owner = null;
/** @type {Connection[]} */
const waiting = [];
let closing = false;

class Connection {
  /** @param {import('node:worker_threads').MessagePort} port */
  constructor(port) {
    this.port = port;
    this.buffer = Buffer.alloc(0);
    this.started = false; // the first message (startup) has no type byte
    /** @type {{ data: Uint8Array, startup: boolean }[]} */
    this.messages = [];
    this.chunks = 0; // chunks received whose messages are not all answered yet
    this.running = false;
    this.closed = false;
    this.text = ''; // (VDI_SQL_TIME) the statement of this turn, and the session's time it took so far
    this.spent = 0;
    port.on('message', (chunk) => this.receive(chunk));
    port.on('close', () => void this.close());
    connections.add(this);
  }

  receive(chunk) {
    if (this.closed) return;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (;;) {
      const header = this.started ? 5 : 4;
      if (this.buffer.length < header) break;
      const length = this.started ? 1 + this.buffer.readInt32BE(1) : this.buffer.readInt32BE(0);
      if (this.buffer.length < length) break;
      this.messages.push({ data: this.buffer.subarray(0, length), startup: !this.started });
      this.buffer = this.buffer.subarray(length);
      this.started = true;
    }
    this.chunks++;
    void this.run();
  }

  async run() {
    if (this.running) return;
    this.running = true;
    /** Answers gathered while this turn runs, posted as one message (a query's Parse…Sync is one turn). */
    const out = [];
    try {
      while (this.messages.length && !this.closed) {
        if (owner !== this) {
          if (owner) {
            if (!waiting.includes(this)) waiting.push(this);
            this.flush(out, false);
            return; // resumed by release()
          }
          owner = this;
        }
        const { data: message, startup } = this.messages.shift();
        const type = startup ? 0 : message[0];
        if (type === TERMINATE) {
          await this.close();
          return;
        }
        if (timeFile) this.note(message, type);
        const t0 = timeFile ? performance.now() : 0;
        await execute(message, type, out);
        if (timeFile) this.spent += performance.now() - t0;
        // These end with ReadyForQuery: the session is free again unless a transaction is open.
        if ((startup || type === SYNC || type === QUERY) && !this.messages.length && !db.isInTransaction()) {
          // Answered before the session passes on, so that this client reads its answer first.
          this.flush(out, this.messages.length === 0);
          if (timeFile) this.timed();
          release(this);
        }
      }
      this.flush(out, !this.messages.length);
    } catch (err) {
      // PGlite itself failed (not an SQL error, which is an ErrorResponse on the wire).
      parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.stack ?? err.message : String(err) });
      await this.close();
    } finally {
      this.running = false;
    }
  }

  /** (VDI_SQL_TIME) The statement a message names: a Parse's text, a Bind's prepared statement, a simple query. */
  note(message, type) {
    if (type === PARSE) this.text = parseTarget(message).text;
    else if (type === QUERY) this.text = message.toString('utf8', 5, message.length - 1);
    else if (type === BIND) {
      const portalEnd = message.indexOf(0, 5);
      const name = message.toString('utf8', portalEnd + 1, message.indexOf(0, portalEnd + 1));
      if (name) this.text = prepared.get(name) ?? this.text;
    }
  }

  timed() {
    appendFileSync(timeFile, `${(performance.timeOrigin + performance.now()).toFixed(1)} ${this.spent.toFixed(2)} ${this.text.replace(/\s+/g, ' ').slice(0, 300)}\n`);
    this.spent = 0;
  }

  /**
   * Posts the answers gathered (one message, its buffer transferred) and, when everything received
   * so far is answered, says in the same message how many chunks that was: `[answers | null, chunks answered]`.
   */
  flush(out, all) {
    if (this.closed) return;
    const answered = all ? this.chunks : 0;
    this.chunks -= answered;
    if (!out.length && !answered) return;
    const data = out.length ? new Uint8Array(out.length === 1 ? out[0] : Buffer.concat(out)) : null;
    out.length = 0;
    this.port.postMessage([data, answered], data ? [data.buffer] : []);
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    connections.delete(this);
    this.messages = [];
    const at = waiting.indexOf(this);
    if (at >= 0) waiting.splice(at, 1);
    if (owner === this) {
      // A client that went away in the middle of a transaction leaves nothing half done.
      if (db.isInTransaction()) await db.exec('ROLLBACK').catch(() => {});
      release(this);
    }
    this.port.close();
  }
}

/** @param {Connection} conn */
function release(conn) {
  if (owner !== conn) return;
  owner = null;
  const next = waiting.shift();
  if (next) {
    owner = next;
    void next.run();
  } else if (closing) {
    void finish();
  }
}

let finished = false;
async function finish() {
  if (finished) return;
  finished = true;
  for (const conn of connections) await conn.close();
  await db.close(); // a clean shutdown: everything committed is on disk
  parentPort.postMessage({ type: 'closed' });
  parentPort.close();
}

parentPort.on('message', (msg) => {
  if (msg.type === 'connect') new Connection(msg.port);
  else if (msg.type === 'close') {
    closing = true;
    if (!owner) void finish();
  }
});
parentPort.postMessage({ type: 'ready' });
