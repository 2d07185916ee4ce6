// Starts QEMU processes from a small helper process (spawner-helper.mjs) rather than from the server itself:
// a fork costs in proportion to the forking process's memory (measured with Node 22 here: 0.6 ms at 47 MB,
// 16 ms at 350 MB, 46 ms at 850 MB; the server runs at 150–470 MB), and that was spent on every start. The
// helper is forked once, when the driver is made. Without it (it could not start, or died) QEMU is spawned
// here as before. Either way the caller gets the process's pid and its exit status.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';

type ExitStatus = [code: number | null, signal: NodeJS.Signals | null];

/**
 * A QEMU process as the driver follows it: its pid and its exit status. The status is kept: a process that ended at
 * once (the helper's "spawned" and "exit" read in one go, before the caller could listen) still tells a listener that
 * comes later, at once.
 */
export class QemuProcess extends EventEmitter<{ exit: ExitStatus }> {
  #status: ExitStatus | undefined;
  constructor(readonly pid: number) {
    super();
  }

  /** Its exit, told once (to the listeners now, and to any added later). */
  ended(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#status) return;
    this.#status = [code, signal];
    this.emit('exit', code, signal);
  }

  override once<K>(event: K | 'exit', listener: K extends 'exit' ? (...args: ExitStatus) => void : never): this;
  override once(event: 'exit', listener: (...args: ExitStatus) => void): this {
    const status = this.#status;
    if (event === 'exit' && status) {
      queueMicrotask(() => listener(...status));
      return this;
    }
    return super.once(event, listener);
  }
}

type Answer =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'error'; id: number; message: string }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

type Request = { file: string; args: string[]; log: string };
type Pending = Request & { resolve: (p: QemuProcess) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/**
 * A spawn the helper has not answered in this long (a spawn takes milliseconds; far past any load seen here): the
 * helper is taken for stuck, ended, and the spawn is made here.
 */
const ANSWER_MS = 30_000;

export class QemuSpawner {
  #helper: ChildProcess | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #running = new Map<number, QemuProcess>();

  constructor() {
    try {
      const helper = fork(join(import.meta.dirname, 'spawner-helper.mjs'), [], { execArgv: [], stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'json' });
      helper.on('message', (m: Answer) => this.#onAnswer(m));
      helper.on('error', () => this.#lost(helper));
      helper.once('exit', () => this.#lost(helper));
      // Neither the helper nor its channel keeps the server's process alive.
      helper.unref();
      helper.channel?.unref();
      this.#helper = helper;
    } catch {
      this.#helper = null;
    }
  }

  /** Starts `file` with `args`, detached, its stdout and stderr appended to `log`; resolves once it runs. */
  spawn(file: string, args: string[], log: string): Promise<QemuProcess> {
    const helper = this.#helper;
    if (!helper?.connected) return spawnHere(file, args, log);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.#lost(helper), ANSWER_MS);
      this.#pending.set(id, { file, args, log, resolve, reject, timer });
      // An answer awaited keeps this process alive (only then).
      helper.channel?.ref();
      try {
        helper.send({ type: 'spawn', id, file, args, log });
      } catch {
        this.#lost(helper);
      }
    });
  }

  /** The helper ends (the machines it started run on); later spawns happen here. */
  close(): void {
    const helper = this.#helper;
    this.#helper = null;
    if (helper?.connected) helper.disconnect();
  }

  #onAnswer(m: Answer): void {
    if (m.type === 'exit') {
      const p = this.#running.get(m.id);
      this.#running.delete(m.id);
      p?.ended(m.code, m.signal);
      return;
    }
    const pending = this.#pending.get(m.id);
    if (!pending) return;
    this.#settled(m.id);
    if (m.type === 'error') return pending.reject(new Error(m.message));
    const p = new QemuProcess(m.pid);
    this.#running.set(m.id, p);
    pending.resolve(p);
  }

  #settled(id: number): void {
    const p = this.#pending.get(id);
    if (p) clearTimeout(p.timer);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#helper?.channel?.unref();
  }

  /**
   * The helper is gone, or does not answer: it is ended, the spawns it had not answered are made here (a machine it
   * started meanwhile, if any, is found as any stray QEMU), later ones too; exits it would have told are left to the
   * driver's other watchers (QMP closing, the pid).
   */
  #lost(helper: ChildProcess): void {
    if (this.#helper === helper) this.#helper = null;
    try {
      if (helper.connected) helper.disconnect();
      helper.kill('SIGKILL');
    } catch {
      // already gone
    }
    const pending = [...this.#pending.values()];
    for (const p of pending) clearTimeout(p.timer);
    this.#pending.clear();
    this.#running.clear();
    for (const p of pending) spawnHere(p.file, p.args, p.log).then(p.resolve, p.reject);
  }
}

/** The same, from this process (no helper). */
function spawnHere(file: string, args: string[], log: string): Promise<QemuProcess> {
  const fd = openSync(log, 'a', 0o600);
  try {
    const child = spawn(file, args, { detached: true, stdio: ['ignore', fd, fd] });
    child.unref();
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        const p = new QemuProcess(child.pid!);
        child.once('exit', (code, signal) => p.ended(code, signal));
        resolve(p);
      });
    });
  } finally {
    closeSync(fd);
  }
}
