// One running QEMU process as the driver sees it: its QMP connection (reconnected on demand), its guest
// agent's connection (held while it runs, see AgentChannel), the mapping of QMP events to machine events,
// and exit detection from three sources (our child's exit, QMP closing, a pid poll for machines adopted
// after a restart) that finish exactly once.
import type { MachineEvent, MachineRuntime, MachineSpec } from '../driver';
import { AgentChannel } from '../guest-agent';
import { QmpClient, type QmpEvent } from '../qmp';
import { isOurQemu, readTail } from './process';
import { removeRunDir, type RunPaths } from './run-dir';
import type { QemuProcess } from './spawner';

export type MachineHooks = {
  emit(e: MachineEvent): void;
  /** called once the process is gone and the run dir removed (and awaited before `stopped` is emitted) */
  gone(m: QemuMachine): void | Promise<void>;
};

/** QEMU's last words when a host's signal (SIGTERM, SIGINT, SIGHUP) ends it: it shuts down as asked. */
const SIGNALLED = /: terminating on signal \d+/;

export class QemuMachine {
  readonly spec: MachineSpec;
  readonly paths: RunPaths;
  readonly runtime: MachineRuntime & { pid: number };
  /** aborted when the machine stops: serial waiters and the like give up at once */
  readonly stopped = new AbortController();
  /** resolves after the run dir is cleaned and `stopped` was emitted */
  readonly gone: Promise<void>;
  /** the guest agent's port, held from the moment QMP answers (QEMU listens) until the machine stops or is let go */
  readonly agent: AgentChannel;

  #hooks: MachineHooks;
  #qmp: QmpClient | null = null;
  #connecting: Promise<QmpClient> | null = null;
  #child: QemuProcess | null;
  #childExited: Promise<void> | null = null;
  #onChildExit = (code: number | null, sig: NodeJS.Signals | null) => {
    this.#exitStatus = code !== null ? `exit-code-${code}` : `signal-${sig ?? 'unknown'}`;
    this.#cleanExit = code === 0;
    void this.#finish();
  };
  #poll: NodeJS.Timeout;
  #shutdownReason: string | undefined;
  #exitStatus: string | undefined;
  #cleanExit = false;
  #destroyRequested = false;
  #finishing = false;
  /** set by detach(): another driver instance may own the machine from now on */
  #detached = false;
  #resolveGone!: () => void;

  constructor(opts: {
    spec: MachineSpec;
    paths: RunPaths;
    runtime: MachineRuntime & { pid: number };
    child: QemuProcess | null;
    qmp: QmpClient | null;
    hooks: MachineHooks;
    pollMs: number;
  }) {
    this.spec = opts.spec;
    this.paths = opts.paths;
    this.runtime = opts.runtime;
    this.#hooks = opts.hooks;
    this.agent = new AgentChannel(opts.spec.id, opts.paths.qga);
    this.#child = opts.child;
    this.gone = new Promise((r) => (this.#resolveGone = r));
    if (opts.qmp) this.#attach(opts.qmp);
    if (this.#child) {
      const child = this.#child;
      this.#childExited = new Promise((r) => child.once('exit', () => r()));
      child.once('exit', this.#onChildExit);
    }
    // The child's exit event covers machines we started; the poll covers adopted ones (and
    // anything that slips through, e.g. a lost SIGCHLD).
    this.#poll = setInterval(() => this.#checkAlive(), opts.pollMs);
    this.#poll.unref();
  }

  get pid(): number {
    return this.runtime.pid;
  }

  /**
   * Whether QEMU runs. Its open QMP connection says so (QEMU closes it as it exits, and the close makes this machine look
   * closely): no look into /proc, which `list()` otherwise made for every machine at every call (30 machines, a class
   * opening its viewers: thousands of reads of the event loop's time).
   */
  alive(): boolean {
    if (this.#finishing) return false;
    if (this.#qmp && !this.#qmp.closed) return true;
    return isOurQemu(this.pid, this.paths.qmp);
  }

  markDestroying(): void {
    this.#destroyRequested = true;
  }

  /** The QMP connection, reconnecting if it was lost while QEMU still runs. */
  async qmp(): Promise<QmpClient> {
    if (this.#qmp && !this.#qmp.closed) return this.#qmp;
    this.#connecting ??= QmpClient.connect(this.paths.qmp, { timeoutMs: 2000 })
      .then((c) => {
        this.#attach(c);
        return c;
      })
      .finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  /** Stops watching without touching the machine (driver close / server shutdown). */
  async detach(): Promise<void> {
    this.#detached = true;
    clearInterval(this.#poll);
    this.#child?.removeListener('exit', this.#onChildExit);
    this.#child = null;
    this.#childExited = null;
    this.agent.close();
    const q = this.#qmp;
    this.#qmp = null;
    await q?.close();
  }

  /** Checks right now whether QEMU is gone, and finishes if so. */
  checkNow(): void {
    if (!this.#finishing && !isOurQemu(this.pid, this.paths.qmp)) void this.#finish();
  }

  #attach(client: QmpClient): void {
    this.#qmp = client;
    this.agent.hold();
    client.events.on('SHUTDOWN', (e) => {
      this.#shutdownReason = typeof e.data.reason === 'string' ? e.data.reason : 'shutdown';
    });
    client.events.on('RESET', (e) => this.#emit('reset', reasonOf(e)));
    client.events.on('RESUME', () => this.#emit('resumed'));
    client.events.on('GUEST_PANICKED', (e) => this.#emit('crashed', `guest-panicked${actionOf(e)}`));
    client.events.on('STOP', () => void this.#onStop(client));
    client.events.on('close', () => {
      if (this.#qmp === client) this.#qmp = null;
      if (this.#detached) return;
      // QEMU closes its sockets as it exits: look closely for a moment instead of waiting a poll.
      void this.#watchExitFor(3000);
    });
  }

  async #onStop(client: QmpClient): Promise<void> {
    // STOP is sent for a pause and for a failure (KVM internal error, I/O error): the run state says which.
    const status = await client.execute('query-status').catch(() => null);
    if (!status) return;
    if (status.status === 'internal-error' || status.status === 'guest-panicked' || status.status === 'io-error') {
      this.#emit('crashed', status.status);
    } else if (status.status === 'paused') {
      this.#emit('paused');
    }
  }

  async #watchExitFor(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.#finishing && !this.#detached && Date.now() < deadline) {
      if (!isOurQemu(this.pid, this.paths.qmp)) return this.#finish();
      await new Promise((r) => setTimeout(r, 50).unref());
    }
  }

  #checkAlive(): void {
    // An open QMP connection says QEMU runs (its close looks closely at once): /proc is read for the others only, not
    // for each of a class's thirty machines every second.
    if (!this.#qmp || this.#qmp.closed) this.checkNow();
  }

  #emit(type: MachineEvent['type'], reason?: string): void {
    if (this.#finishing) return;
    this.#hooks.emit(reason === undefined ? { id: this.spec.id, type } : { id: this.spec.id, type, reason });
  }

  async #finish(): Promise<void> {
    if (this.#finishing || this.#detached) return;
    this.#finishing = true;
    clearInterval(this.#poll);
    if (this.#child && this.#exitStatus === undefined && this.#childExited) {
      // The pid may vanish (reaped) a moment before Node delivers the child's exit status, which
      // tells a kill from a clean exit: wait for it briefly.
      await Promise.race([this.#childExited, new Promise((r) => setTimeout(r, 500).unref())]);
    }
    this.#child?.removeListener('exit', this.#onChildExit);
    this.agent.close();
    const q = this.#qmp;
    this.#qmp = null;
    await q?.close().catch(() => {});
    let reason: string;
    let crashed = false;
    if (this.#destroyRequested) reason = 'destroyed';
    else if (this.#shutdownReason) reason = this.#shutdownReason;
    else {
      const tail = (await readTail(this.paths.log, 600)).trim().split('\n').at(-1);
      if (tail && SIGNALLED.test(tail)) {
        // A host's signal, which QEMU told in its SHUTDOWN event; that event may never be read: a command written as
        // QEMU exits fails, and the failed write closes the socket with the event unread in it.
        reason = 'host-signal';
      } else {
        // gone without telling us why: killed (OOM, SIGKILL) or QEMU itself failed
        reason = this.#exitStatus ?? 'process-gone';
        crashed = !this.#cleanExit;
        if (tail) reason += `: ${tail}`;
      }
    }
    await removeRunDir(this.paths).catch(() => {});
    this.stopped.abort(new Error(`machine ${this.spec.id} stopped (${reason})`));
    await Promise.resolve()
      .then(() => this.#hooks.gone(this))
      .catch(() => {});
    const id = this.spec.id;
    if (crashed) this.#hooks.emit({ id, type: 'crashed', reason });
    this.#hooks.emit({ id, type: 'stopped', reason });
    this.#resolveGone();
  }
}

function reasonOf(e: QmpEvent): string | undefined {
  return typeof e.data.reason === 'string' ? e.data.reason : undefined;
}

function actionOf(e: QmpEvent): string {
  return typeof e.data.action === 'string' ? ` (${e.data.action})` : '';
}
