// QEMU's guest agent (qemu-ga) over the unix socket QEMU exposes for the desktop's
// org.qemu.guest_agent.0 virtio-serial port, and the file operations built on the driver's one agent
// operation (HypervisorDriver.guestAgent): send a file into the guest, fetch one back, list a folder.
//
// The agent's protocol is QMP-like JSON without a greeting or ids. A client that connected before us
// may have left half a command in the agent's parser or an answer in the pipe, so every exchange starts
// with `guest-sync-delimited` (the agent flushes its parser on 0xFF and prefixes its answer with 0xFF):
// what comes before our sync's answer is thrown away.
import { randomInt } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { EngineError, type HypervisorDriver } from './driver';

/** The agent answered with an error (its class and text), e.g. a file that does not exist. */
export class GuestAgentError extends Error {
  constructor(
    readonly errorClass: string,
    readonly desc: string,
    readonly command: string,
  ) {
    super(`guest agent ${command}: ${errorClass}: ${desc}`);
    this.name = 'GuestAgentError';
  }
}

/** No agent answers (not installed, not started yet, no port): the caller shows "no agent". */
export const agentUnavailable = (id: string, why: string) =>
  new EngineError('agent-unavailable', `the guest agent of machine ${id} does not answer: ${why}`);

/**
 * One command over `sock`, a connection to the agent (QEMU's chardev socket): sync, then the command; resolves with
 * its `return`. The agent not answering within `timeoutMs` (both steps together), or the connection closing, rejects
 * with EngineError `agent-unavailable`; an error answer with GuestAgentError. The connection stays open: what a late
 * answer leaves in it is thrown away by the next exchange's sync.
 */
function exchangeOver(sock: Socket, id: string, command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const syncId = randomInt(1, 2 ** 31);
    let phase: 'sync' | 'command' = 'sync';
    let buf: Buffer = Buffer.alloc(0);
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.removeListener('data', onData);
      sock.removeListener('close', onClose);
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(agentUnavailable(id, `no answer within ${timeoutMs} ms`))), timeoutMs);
    const onClose = () => finish(() => reject(agentUnavailable(id, 'the connection closed')));
    const onData = (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      if (phase === 'sync') {
        // the answer to our sync comes after a 0xFF; older bytes are another client's or an earlier exchange's leftovers
        for (;;) {
          const ff = buf.indexOf(0xff);
          if (ff < 0) {
            buf = Buffer.alloc(0);
            return;
          }
          const nl = buf.indexOf(0x0a, ff);
          if (nl < 0) {
            buf = buf.subarray(ff);
            return;
          }
          const line = buf.subarray(ff + 1, nl).toString();
          buf = buf.subarray(nl + 1);
          let msg: { return?: unknown } | undefined;
          try {
            msg = JSON.parse(line) as { return?: unknown };
          } catch {
            continue;
          }
          if (msg?.return === syncId) {
            phase = 'command';
            sock.write(`${JSON.stringify(args ? { execute: command, arguments: args } : { execute: command })}\n`);
            break;
          }
        }
      }
      for (;;) {
        const nl = buf.indexOf(0x0a);
        if (nl < 0) return;
        const line = buf.subarray(0, nl).toString().replace(/^\xff/, '');
        buf = buf.subarray(nl + 1);
        if (!line.trim()) continue;
        let msg: { return?: unknown; error?: { class?: string; desc?: string } };
        try {
          msg = JSON.parse(line) as typeof msg;
        } catch {
          continue;
        }
        if (msg.error) {
          const e = msg.error;
          return finish(() => reject(new GuestAgentError(e.class ?? 'GenericError', e.desc ?? '', command)));
        }
        if ('return' in msg) return finish(() => resolve(msg.return));
      }
    };
    // (closed between the connection's hand-over and now: said at once, not at the time limit)
    if (sock.destroyed) return onClose();
    sock.on('data', onData);
    sock.once('close', onClose);
    sock.write(Buffer.concat([Buffer.from([0xff]), Buffer.from(`${JSON.stringify({ execute: 'guest-sync-delimited', arguments: { id: syncId } })}\n`)]));
  });
}

/** After the agent's connection closed (or could not be made) while its machine runs: tried again after this, doubling. */
export const AGENT_RECONNECT_MS = { first: 1_000, most: 30_000 };

/**
 * The host's end of a machine's guest-agent port, held open while the machine runs (as libvirt holds it). QEMU's socket
 * serves one client at a time, and an agent whose port has nobody on the host's end polls it: qemu-ga woke its guest
 * ~100 times a second (measured: an idle demo guest's wakeups 145/s without a client, 39/s with one; its CPU a third).
 * Every exchange goes over the one connection, one after the other. `hold` connects and keeps connecting after a
 * close (AGENT_RECONNECT_MS); `close` lets go, for good.
 */
export class AgentChannel {
  #sock: Socket | null = null;
  #connecting: Promise<Socket> | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #retry: NodeJS.Timeout | null = null;
  #delay = AGENT_RECONNECT_MS.first;
  #closed = false;

  constructor(
    readonly id: string,
    readonly socketPath: string,
  ) {}

  hold(): void {
    if (this.#closed || this.#retry) return;
    this.#connect().catch(() => this.#later());
  }

  /** One command (see exchangeOver); after the ones asked before it. Connects first when not connected. */
  exchange(command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    const run = this.#queue.then(async () => {
      const deadline = Date.now() + timeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(agentUnavailable(this.id, `no connection within ${timeoutMs} ms`)), timeoutMs)));
      try {
        const sock = await Promise.race([this.#connect(), late]);
        return await exchangeOver(sock, this.id, command, args, Math.max(1, deadline - Date.now()));
      } finally {
        clearTimeout(timer);
      }
    });
    this.#queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  close(): void {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    this.#sock?.destroy();
    this.#sock = null;
  }

  #connect(): Promise<Socket> {
    if (this.#closed) return Promise.reject(agentUnavailable(this.id, 'the machine is gone'));
    if (this.#sock) return Promise.resolve(this.#sock);
    this.#connecting ??= new Promise<Socket>((resolve, reject) => {
      const sock = connect(this.socketPath);
      sock.once('error', (err) => reject(agentUnavailable(this.id, err.message)));
      sock.once('connect', () => {
        if (this.#closed) {
          sock.destroy();
          return reject(agentUnavailable(this.id, 'the machine is gone'));
        }
        this.#sock = sock;
        this.#delay = AGENT_RECONNECT_MS.first;
        sock.on('error', () => undefined); // (its close follows)
        sock.once('close', () => {
          if (this.#sock === sock) this.#sock = null;
          this.#later();
        });
        resolve(sock);
      });
    }).finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  #later(): void {
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.hold();
    }, this.#delay);
    this.#retry.unref();
    this.#delay = Math.min(this.#delay * 2, AGENT_RECONNECT_MS.most);
  }
}

/** Reads and writes go in pieces of this size (base64 in the JSON: 4/3 of it). */
export const AGENT_CHUNK_BYTES = 1024 * 1024;
/** One command's time limit (a chunk through a busy emulated guest included). */
export const AGENT_TIMEOUT_MS = 15_000;

type Agent = Pick<HypervisorDriver, 'guestAgent'>;


const join = (dir: string, name: string) => `${dir.replace(/\/+$/, '')}/${name}`;

/** Writes `data` (pieces of any size) as `dir/name` in the guest, replacing a file of that name. Returns the size written. */
export async function sendFile(driver: Agent, id: string, dir: string, name: string, data: AsyncIterable<Buffer>, timeoutMs = AGENT_TIMEOUT_MS): Promise<number> {
  const handle = (await driver.guestAgent(id, 'guest-file-open', { path: join(dir, name), mode: 'w' }, timeoutMs)) as number;
  let size = 0;
  let pending: Buffer = Buffer.alloc(0);
  const write = async (piece: Buffer) => {
    let off = 0;
    while (off < piece.length) {
      const r = (await driver.guestAgent(id, 'guest-file-write', { handle, 'buf-b64': piece.subarray(off).toString('base64') }, timeoutMs)) as { count: number };
      if (!r || typeof r.count !== 'number' || r.count <= 0) throw new GuestAgentError('GenericError', 'the agent wrote nothing', 'guest-file-write');
      off += r.count;
    }
    size += piece.length;
  };
  try {
    for await (const chunk of data) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= AGENT_CHUNK_BYTES) {
        await write(pending.subarray(0, AGENT_CHUNK_BYTES));
        pending = pending.subarray(AGENT_CHUNK_BYTES);
      }
    }
    if (pending.length) await write(pending);
  } finally {
    await driver.guestAgent(id, 'guest-file-close', { handle }, timeoutMs).catch(() => undefined);
  }
  return size;
}

/** Reads `dir/name` from the guest, a piece at a time (at most `maxBytes`: more is an error before anything is sent). */
export async function* fetchFile(driver: Agent, id: string, dir: string, name: string, timeoutMs = AGENT_TIMEOUT_MS): AsyncGenerator<Buffer> {
  const handle = (await driver.guestAgent(id, 'guest-file-open', { path: join(dir, name), mode: 'r' }, timeoutMs)) as number;
  try {
    for (;;) {
      const r = (await driver.guestAgent(id, 'guest-file-read', { handle, count: AGENT_CHUNK_BYTES }, timeoutMs)) as { count: number; 'buf-b64': string; eof: boolean };
      if (r.count > 0) yield Buffer.from(r['buf-b64'], 'base64');
      if (r.eof || r.count === 0) return;
    }
  } finally {
    await driver.guestAgent(id, 'guest-file-close', { handle }, timeoutMs).catch(() => undefined);
  }
}

export type GuestFile = { name: string; size: number; modified: string };

/**
 * The regular files of `dir` in the guest, through guest-exec (a POSIX shell and `stat`; Debian's
 * qemu-ga allows guest-exec). A folder that does not exist lists empty.
 */
export async function listFiles(driver: Agent, id: string, dir: string, timeoutMs = AGENT_TIMEOUT_MS): Promise<GuestFile[]> {
  const script = 'cd "$1" 2>/dev/null || exit 0; for f in * .[!.]*; do [ -f "$f" ] && [ ! -L "$f" ] && stat -c "%s %Y %n" "$f"; done; exit 0';
  const { pid } = (await driver.guestAgent(id, 'guest-exec', { path: '/bin/sh', arg: ['-c', script, 'sh', dir], 'capture-output': true }, timeoutMs)) as { pid: number };
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const st = (await driver.guestAgent(id, 'guest-exec-status', { pid }, timeoutMs)) as { exited: boolean; exitcode?: number; 'out-data'?: string };
    if (st.exited) {
      const out = Buffer.from(st['out-data'] ?? '', 'base64').toString('utf8');
      const files: GuestFile[] = [];
      for (const line of out.split('\n')) {
        const m = /^(\d+) (\d+) (.+)$/.exec(line);
        if (m) files.push({ name: m[3]!, size: Number(m[1]), modified: new Date(Number(m[2]) * 1000).toISOString() });
      }
      return files.sort((a, b) => a.name.localeCompare(b.name));
    }
    if (Date.now() > deadline) throw agentUnavailable(id, 'the listing did not finish');
    // the agent runs the command in the guest: poll until it has exited (a condition, not a fixed wait)
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 250);
  }
}
