// Pipes a browser WebSocket (noVNC) to a machine's VNC server, byte for byte, and closes both
// sides together. Who may connect is decided by the caller before it gets here (viewer tokens);
// the VNC password set through QMP is the second lock.
//
// The browser is promised the screen's first bytes (the RFB version) within VNC_FIRST_BYTES_MS, or
// a close with a reason it can show: the VNC connection is opened and its greeting awaited under
// one deadline, before anything the browser sends is passed on. Then, until the screen is set up
// (RFB's handshake, a strict question and answer), every message of the browser is answered
// within VNC_ANSWER_MS or the browser is told the same way: a machine that greets and then says
// nothing more must not leave the page connecting forever.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RawData, WebSocket } from 'ws';
import { VNC_CLOSE, VNC_FIRST_BYTES_MS } from '@vdi/contracts';
import type { VncEndpoint } from './driver';
import { untilSocketMayListen } from './unix-socket';

/** ws buffers above this pause reading from VNC (a slow browser must not grow memory without bound). */
const HIGH_WATER = 4 * 1024 * 1024;
/** What the bridge may spend reaching VNC: the rest of the bound is for the token check before it
 *  and for the close frame to travel. */
export const VNC_OPEN_TIMEOUT_MS = VNC_FIRST_BYTES_MS - 500;
/** How long VNC may leave a message of the browser unanswered while the handshake is under way. */
export const VNC_ANSWER_MS = 5000;
/**
 * The handshake's answers the bridge waits for: the security types (to the browser's version), the
 * challenge or the result (to its security type), the result (to its password), the ServerInit (to
 * its ClientInit). With no password the fourth is the first screen, which a full update request
 * also gets at once. After that the browser sends input, which VNC does not answer.
 */
const HANDSHAKE_ANSWERS = 4;

/**
 * Failures worth another try within the deadline. QEMU listens on its VNC socket with a backlog of
 * one: while it is accepting one viewer, another connect fails at once with EAGAIN (unix sockets)
 * — two tabs, or a videowall and a tab, opening the same screen together. A missing socket or a
 * refusal means the machine is gone: the browser is told at once.
 */
const RETRYABLE = new Set(['EAGAIN', 'ECONNRESET']);

export type VncUnavailableKind = keyof typeof VNC_CLOSE;
export class VncUnavailableError extends Error {
  constructor(
    readonly kind: VncUnavailableKind,
    message: string,
  ) {
    super(message);
    this.name = 'VncUnavailableError';
  }
}

/** An open VNC connection and the bytes it greeted with (the RFB version), not yet passed on. */
export type VncConnection = { socket: Socket; greeting: Buffer };

/**
 * Connects to a VNC endpoint and waits for its greeting, both within `timeoutMs`. Throws
 * VncUnavailableError: `unreachable` when no connection could be made, `timeout` when the server
 * was reached but said nothing in time.
 *
 * `launching`: the machine is still coming up (its start's own bound covers that, and says how it ended): its socket
 * may not be there or not listen yet, and QEMU greets once its main loop runs. It is connected to the moment it
 * listens, as one connects to a QEMU started by hand; `timeoutMs` runs from the moment the machine is up, and a start
 * that fails ends the wait at once.
 */
export async function openVnc(endpoint: VncEndpoint, opts: { timeoutMs?: number; signal?: AbortSignal; launching?: Promise<boolean> } = {}): Promise<VncConnection> {
  const bound = opts.timeoutMs ?? VNC_OPEN_TIMEOUT_MS;
  const launch = { up: opts.launching === undefined, failed: false, deadline: Date.now() + bound };
  const ended = new AbortController();
  const end = () => ended.abort();
  opts.signal?.addEventListener('abort', end, { once: true });
  void opts.launching?.then((ok) => {
    launch.up = ok;
    launch.failed = !ok;
    launch.deadline = Date.now() + bound;
    if (!ok) end();
  });
  if (opts.signal?.aborted) end();
  const deadline = () => (launch.up ? launch.deadline : Infinity);
  const why = () => (launch.failed ? 'the machine did not start' : 'the viewer went away');
  let lastError = 'no attempt';
  let refusals = 0;
  try {
    for (let attempt = 0; ; attempt++) {
      if (ended.signal.aborted) throw new VncUnavailableError('unreachable', why());
      const result = await connectAndGreet(endpoint, deadline, bound, ended.signal);
      if ('greeting' in result) return result;
      if (result.silent) throw new VncUnavailableError('timeout', `VNC sent nothing within the bound (attempt ${attempt + 1})`);
      lastError = result.error;
      if (ended.signal.aborted) throw new VncUnavailableError('unreachable', why());
      // Not made, or not listening, yet: QEMU is still coming up.
      const notYet = !launch.up && (result.error === 'ENOENT' || result.error === 'ECONNREFUSED');
      if (notYet) {
        const code = result.error as 'ENOENT' | 'ECONNREFUSED';
        const wait = code === 'ECONNREFUSED' ? refusals++ : 0;
        if ('socket' in endpoint) await untilSocketMayListen(endpoint.socket, code, wait, bound);
        else await sleep(Math.min(2 ** wait, 50));
        continue;
      }
      if (!result.retryable || Date.now() + 25 >= deadline()) break;
      await sleep(Math.min(25 * (attempt + 1), 100));
    }
  } finally {
    opts.signal?.removeEventListener('abort', end);
  }
  throw new VncUnavailableError('unreachable', `VNC could not be reached: ${lastError}`);
}

type Attempt = VncConnection | { error: string; retryable: boolean; silent?: false } | { silent: true };

/** One connection and its greeting, until `deadline()` (looked at again at least every `bound` ms: it moves while the
 *  machine comes up) or until `cancel`. */
function connectAndGreet(endpoint: VncEndpoint, deadline: () => number, bound: number, cancel: AbortSignal): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = 'socket' in endpoint ? connect(endpoint.socket) : connect(endpoint.port, endpoint.host);
    socket.setNoDelay?.(true);
    const chunks: Buffer[] = [];
    let length = 0;
    let connected = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (a: Attempt) => {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
      socket.removeListener('data', onData);
      socket.removeListener('error', onError);
      socket.removeListener('close', onClose);
      if (!('greeting' in a)) socket.destroy();
      resolve(a);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      // RFB's ProtocolVersion is 12 bytes; the server then waits for ours.
      if (length >= 12) {
        socket.pause();
        finish({ socket, greeting: Buffer.concat(chunks) });
      }
    };
    const onError = (err: NodeJS.ErrnoException) => finish({ error: err.code ?? err.message, retryable: RETRYABLE.has(err.code ?? '') });
    const onClose = () => finish({ error: connected ? 'closed before its greeting' : 'closed', retryable: true });
    const onCancel = () => finish({ error: 'cancelled', retryable: false });
    const arm = () => {
      const left = deadline() - Date.now();
      if (left <= 0) return finish(connected ? { silent: true } : { error: 'connect timed out', retryable: false });
      timer = setTimeout(arm, Math.min(left, bound));
    };
    arm();
    cancel.addEventListener('abort', onCancel, { once: true });
    socket.once('connect', () => (connected = true));
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
  });
}

/** Resolves once both sides are closed (with the reason when the screen could not be opened). */
export function bridgeWebSocketToUnixSocket(ws: WebSocket, socketPath: string): Promise<VncUnavailableError | undefined> {
  return bridgeWebSocketToVnc(ws, { socket: socketPath });
}

/**
 * Same for any driver's endpoint: a unix socket (QEMU driver) or host:port. Close codes: 1000 when
 * VNC ended the session, VNC_CLOSE.timeout when VNC did not greet within the bound or left the
 * handshake unanswered, VNC_CLOSE.unreachable when it could not be reached or its connection
 * failed (the reason: a description_code the page shows). Resolves with the error on those closes,
 * for the caller's log.
 */
export async function bridgeWebSocketToVnc(
  ws: WebSocket,
  endpoint: VncEndpoint,
  opts: { timeoutMs?: number; answerTimeoutMs?: number; launching?: Promise<boolean> } = {},
): Promise<VncUnavailableError | undefined> {
  // What noVNC sends before VNC is there is kept, in order (an RFB client waits for the greeting,
  // but nothing here relies on that).
  const early: Buffer[] = [];
  const keep = (data: RawData) => early.push(toBuffer(data));
  ws.on('message', keep);
  const gone = new AbortController();
  const wsClosed = new Promise<void>((r) => {
    if (ws.readyState === ws.CLOSED) return r();
    ws.once('close', () => r());
  });
  void wsClosed.then(() => gone.abort());
  ws.on('error', () => undefined); // a broken browser connection ends in 'close'

  let vnc: VncConnection;
  try {
    vnc = await openVnc(endpoint, { timeoutMs: opts.timeoutMs, signal: gone.signal, launching: opts.launching });
  } catch (err) {
    ws.removeListener('message', keep);
    const why = err instanceof VncUnavailableError ? err : new VncUnavailableError('unreachable', String(err));
    closeWith(ws, why);
    await wsClosed;
    return why;
  }
  ws.removeListener('message', keep);
  if (gone.signal.aborted) {
    vnc.socket.destroy();
    return undefined;
  }
  return pipe(ws, vnc, early, wsClosed, opts.answerTimeoutMs ?? VNC_ANSWER_MS);
}

/** Closes the browser side with the reason the page shows for this failure. */
function closeWith(ws: WebSocket, why: VncUnavailableError) {
  if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(VNC_CLOSE[why.kind].code, VNC_CLOSE[why.kind].reason);
}

function pipe(ws: WebSocket, { socket: vnc, greeting }: VncConnection, early: Buffer[], wsClosed: Promise<void>, answerMs: number): Promise<VncUnavailableError | undefined> {
  return new Promise((resolve) => {
    let vncClosed = false;
    let wsDone = false;
    let failure: VncUnavailableError | undefined;
    const maybeDone = () => {
      if (wsDone && vncClosed) resolve(failure);
    };

    // The handshake's watch: armed when the browser has said something VNC has not answered yet.
    let answers = 0;
    let unanswered: NodeJS.Timeout | undefined;
    const awaitAnswer = () => {
      if (answers >= HANDSHAKE_ANSWERS || unanswered || vncClosed) return;
      unanswered = setTimeout(() => {
        failure = new VncUnavailableError('timeout', `VNC left step ${answers + 1} of the viewer's handshake unanswered for ${answerMs} ms`);
        closeWith(ws, failure);
        vnc.destroy();
      }, answerMs);
    };
    const answered = () => {
      if (!unanswered) return;
      clearTimeout(unanswered);
      unanswered = undefined;
      answers++;
    };

    const forward = (chunk: Buffer) => {
      answered();
      if (ws.readyState !== ws.OPEN) return;
      ws.send(chunk, { binary: true }, () => {
        if (vnc.isPaused() && ws.bufferedAmount < HIGH_WATER) vnc.resume();
      });
      if (ws.bufferedAmount >= HIGH_WATER) vnc.pause();
    };
    forward(greeting);
    for (const chunk of early) vnc.write(chunk);
    if (early.length) awaitAnswer();

    ws.on('message', (data: RawData) => {
      if (!vnc.write(toBuffer(data))) ws.pause();
      awaitAnswer();
    });
    vnc.on('drain', () => ws.resume());
    vnc.on('data', forward);
    vnc.resume();

    vnc.on('error', (err: NodeJS.ErrnoException) => {
      // The close handler below tells the browser; the error's code is for the log (a browser that
      // left first is no failure of the screen).
      if (!wsDone) failure ??= new VncUnavailableError('unreachable', `the VNC connection failed: ${err.code ?? 'error'}`);
    });
    vnc.on('close', () => {
      vncClosed = true;
      clearTimeout(unanswered);
      if (failure) closeWith(ws, failure);
      else if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000, 'display closed');
      maybeDone();
    });

    void wsClosed.then(() => {
      wsDone = true;
      clearTimeout(unanswered);
      vnc.destroy();
      maybeDone();
    });
  });
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
