// A small QMP (QEMU Machine Protocol) client over a unix socket.
// Written here because no maintained npm client exists (stack-notes §5). The protocol is JSON
// lines: the server greets, the client must send `qmp_capabilities` before anything else, replies
// carry back the `id` we sent, and asynchronous events arrive interleaved at any time.
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { untilSocketMayListen } from './unix-socket';
import { setTimeout as sleep } from 'node:timers/promises';

export type QmpEvent = {
  event: string;
  data: Record<string, unknown>;
  timestamp: { seconds: number; microseconds: number };
};

export type QmpGreeting = {
  version: { qemu: { major: number; minor: number; micro: number }; package: string };
  capabilities: string[];
};

/** Lifecycle events QEMU 7.2 sends that the engine cares about; any other arrives under `event`. */
export type QmpEventName =
  | 'SHUTDOWN' | 'POWERDOWN' | 'RESET' | 'STOP' | 'RESUME' | 'SUSPEND' | 'WAKEUP'
  | 'GUEST_PANICKED' | 'GUEST_CRASHLOADED' | 'VNC_CONNECTED' | 'VNC_DISCONNECTED'
  | 'SPICE_CONNECTED' | 'SPICE_DISCONNECTED' | 'DEVICE_TRAY_MOVED' | 'BLOCK_IO_ERROR';

/** Events: known QMP events under their own name, every event again under `event`, and `close`
 *  once when the connection ends (with the socket error, if any). */
export type QmpEventMap = { event: [QmpEvent]; close: [Error | undefined] } & Record<QmpEventName, [QmpEvent]>;

/** The commands the engine uses, with their argument and return shapes. Others go through
 *  `execute(name, args)` and return `unknown`. */
export type QmpCommands = {
  qmp_capabilities: { args: undefined; ret: Record<string, never> };
  'query-status': { args: undefined; ret: { status: string; running: boolean; singlestep?: boolean } };
  'query-vnc': { args: undefined; ret: { enabled: boolean; auth?: string; service?: string } };
  'query-spice': { args: undefined; ret: { enabled: boolean; port?: number; host?: string; auth?: string } };
  system_powerdown: { args: undefined; ret: Record<string, never> };
  system_reset: { args: undefined; ret: Record<string, never> };
  quit: { args: undefined; ret: Record<string, never> };
  stop: { args: undefined; ret: Record<string, never> };
  cont: { args: undefined; ret: Record<string, never> };
  set_password: { args: { protocol: 'vnc' | 'spice'; password: string; connected?: 'keep' | 'disconnect' | 'fail' }; ret: Record<string, never> };
  expire_password: { args: { protocol: 'vnc' | 'spice'; time: string }; ret: Record<string, never> };
  screendump: { args: { filename: string; format?: 'ppm' | 'png'; device?: string; head?: number }; ret: Record<string, never> };
};

/** A command failed: QMP's error class (GenericError, CommandNotFound, DeviceNotFound…) and text. */
export class QmpError extends Error {
  constructor(
    readonly errorClass: string,
    readonly desc: string,
    readonly command: string,
  ) {
    super(`QMP ${command}: ${errorClass}: ${desc}`);
    this.name = 'QmpError';
  }
}

/** The connection could not be made or was lost (errorClass 'Disconnected' / 'Timeout'). */
export class QmpConnectionError extends QmpError {
  constructor(errorClass: 'Disconnected' | 'Timeout' | 'Protocol', desc: string, command = '(connection)') {
    super(errorClass, desc, command);
    this.name = 'QmpConnectionError';
  }
}

type Pending = { command: string; resolve: (v: unknown) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout };

export type QmpConnectOptions = {
  /** How long to keep retrying while QEMU has not created/listened on the socket yet. */
  timeoutMs?: number;
  /** Default timeout of each command (a hung QEMU must not hang the engine). */
  commandTimeoutMs?: number;
};

export class QmpClient {
  readonly events = new EventEmitter<QmpEventMap>();
  #socket: Socket;
  #buffer = '';
  #nextId = 1;
  #pending = new Map<string, Pending>();
  #closed = false;
  #commandTimeoutMs: number;
  #greeting: QmpGreeting | undefined;
  #onGreeting: ((g: QmpGreeting) => void) | undefined;

  private constructor(socket: Socket, commandTimeoutMs: number) {
    this.#socket = socket;
    this.#commandTimeoutMs = commandTimeoutMs;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#onData(chunk));
    socket.on('error', (err) => this.#shutdown(err));
    socket.on('close', () => this.#shutdown(undefined));
  }

  /** Connects (retrying while the socket does not exist or refuses), reads the greeting and
   *  negotiates capabilities. */
  static async connect(socketPath: string, opts: QmpConnectOptions = {}): Promise<QmpClient> {
    const timeoutMs = opts.timeoutMs ?? 5000;
    const deadline = Date.now() + timeoutMs;
    const socket = await connectWithRetry(socketPath, deadline);
    const client = new QmpClient(socket, opts.commandTimeoutMs ?? 30_000);
    try {
      await client.#waitGreeting(Math.max(0, deadline - Date.now()) + 1000);
      await client.execute('qmp_capabilities');
      return client;
    } catch (err) {
      client.#socket.destroy();
      throw err;
    }
  }

  get greeting(): QmpGreeting {
    if (!this.#greeting) throw new QmpConnectionError('Protocol', 'no greeting yet');
    return this.#greeting;
  }

  get closed(): boolean {
    return this.#closed;
  }

  execute<K extends keyof QmpCommands>(
    command: K,
    ...args: QmpCommands[K]['args'] extends undefined ? [] : [QmpCommands[K]['args']]
  ): Promise<QmpCommands[K]['ret']>;
  execute(command: string, args?: Record<string, unknown>, opts?: { timeoutMs?: number }): Promise<unknown>;
  execute(command: string, args?: Record<string, unknown>, opts?: { timeoutMs?: number }): Promise<unknown> {
    if (this.#closed) return Promise.reject(new QmpConnectionError('Disconnected', 'connection closed', command));
    const id = `c${this.#nextId++}`;
    const msg = args === undefined ? { execute: command, id } : { execute: command, arguments: args, id };
    return new Promise((resolve, reject) => {
      const pending: Pending = { command, resolve, reject };
      const timeoutMs = opts?.timeoutMs ?? this.#commandTimeoutMs;
      if (timeoutMs > 0) {
        pending.timer = setTimeout(() => {
          this.#pending.delete(id);
          reject(new QmpConnectionError('Timeout', `no reply within ${timeoutMs} ms`, command));
        }, timeoutMs);
      }
      this.#pending.set(id, pending);
      this.#socket.write(JSON.stringify(msg) + '\n');
    });
  }

  /** Closes the connection (QEMU keeps running). Pending commands fail with 'Disconnected'. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await new Promise<void>((resolve) => {
      this.#socket.once('close', () => resolve());
      this.#socket.end();
      // A peer that never acknowledges the FIN must not keep us waiting.
      setTimeout(() => this.#socket.destroy(), 500).unref();
    });
  }

  #waitGreeting(timeoutMs: number): Promise<QmpGreeting> {
    if (this.#greeting) return Promise.resolve(this.#greeting);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // QMP serves one client at a time: a second client waits silently in the backlog.
        reject(new QmpConnectionError('Timeout', 'no QMP greeting (is another client connected?)'));
      }, timeoutMs);
      this.#onGreeting = (g) => {
        clearTimeout(timer);
        resolve(g);
      };
      this.events.once('close', (err) => {
        clearTimeout(timer);
        reject(new QmpConnectionError('Disconnected', err?.message ?? 'closed before greeting'));
      });
    });
  }

  #onData(chunk: string): void {
    this.#buffer += chunk;
    let nl: number;
    while ((nl = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, nl).trim();
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line) this.#onMessage(line);
    }
  }

  #onMessage(line: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // not JSON: ignore rather than tear down a working connection
    }
    if (isObject(msg.QMP)) {
      this.#greeting = msg.QMP as QmpGreeting;
      this.#onGreeting?.(this.#greeting);
      return;
    }
    if (typeof msg.event === 'string') {
      const ev: QmpEvent = {
        event: msg.event,
        data: isObject(msg.data) ? msg.data : {},
        timestamp: isObject(msg.timestamp)
          ? (msg.timestamp as QmpEvent['timestamp'])
          : { seconds: 0, microseconds: 0 },
      };
      this.events.emit(ev.event as QmpEventName, ev); // unknown names simply have no listener
      this.events.emit('event', ev);
      return;
    }
    const id = typeof msg.id === 'string' ? msg.id : undefined;
    const pending = id ? this.#pending.get(id) : undefined;
    if (!id || !pending) return; // a reply to a command that timed out, or not ours
    this.#pending.delete(id);
    if (pending.timer) clearTimeout(pending.timer);
    if (isObject(msg.error)) {
      const e = msg.error as { class?: unknown; desc?: unknown };
      pending.reject(new QmpError(String(e.class ?? 'GenericError'), String(e.desc ?? ''), pending.command));
    } else {
      pending.resolve(msg.return);
    }
  }

  #shutdown(err: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    for (const p of this.#pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new QmpConnectionError('Disconnected', err?.message ?? 'connection closed', p.command));
    }
    this.#pending.clear();
    this.events.emit('close', err);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function connectWithRetry(path: string, deadline: number): Promise<Socket> {
  let refusals = 0;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(path);
        s.once('connect', () => {
          s.removeListener('error', reject);
          resolve(s);
        });
        s.once('error', reject);
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOENT: QEMU has not created the socket yet; ECONNREFUSED: created but not listening yet.
      const retryable = code === 'ENOENT' || code === 'ECONNREFUSED';
      if (!retryable || Date.now() >= deadline) {
        throw new QmpConnectionError('Disconnected', `cannot connect to ${path}: ${(err as Error).message}`);
      }
      await untilSocketMayListen(path, code, code === 'ECONNREFUSED' ? refusals++ : 0, deadline - Date.now());
    }
  }
}
