// Start queue: at most N desktop starts run at once on each host, the rest wait in FIFO order. Under
// TCG a boot burns a whole core for ~10 s, and even under KVM a storm of starts (a class of 30
// pressing "start" at 9:00) is smoother in a queue; the web shows each waiting desktop its position.
// Each host is a lane of its own (the original's engine: a worker per hypervisor): a start waits only
// for starts on the same host, which does the work; this server only asks.
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';

export type QueuePositions = {
  /** waiting desktops in start order; position 1 starts next (on its host) */
  waiting: { desktopId: string; position: number }[];
  /** desktops whose start is in progress */
  running: string[];
};

export class StartCancelledError extends Error {
  constructor(readonly desktopId: string) {
    super(`start of ${desktopId} was cancelled while queued`);
    this.name = 'StartCancelledError';
  }
}

type Entry<T> = {
  desktopId: string;
  lane: string;
  startFn: () => Promise<T>;
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
};

export class StartQueue<T = void> extends EventEmitter<{ positions: [QueuePositions] }> {
  #concurrency: number;
  #waiting: Entry<T>[] = [];
  #running = new Map<string, Entry<T>>();
  /** starts running per lane */
  #busy = new Map<string, number>();

  constructor(opts: { concurrency?: number } = {}) {
    super();
    this.#concurrency = validConcurrency(opts.concurrency ?? availableParallelism());
  }

  get concurrency(): number {
    return this.#concurrency;
  }

  /** Raising the limit starts waiting entries at once; lowering it lets running ones finish. */
  setConcurrency(n: number): void {
    this.#concurrency = validConcurrency(n);
    this.#pump();
  }

  /** Queues a start on host `lane` (a hypervisor id; this machine's by default). Enqueuing a desktop that is already waiting or starting returns
   *  the same promise (a double click must not start a machine twice). */
  enqueue(desktopId: string, startFn: () => Promise<T>, lane: string = LOCAL_HYPERVISOR): Promise<T> {
    const existing = this.#running.get(desktopId) ?? this.#waiting.find((e) => e.desktopId === desktopId);
    if (existing) return existing.promise;
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.#waiting.push({ desktopId, lane, startFn, promise, resolve, reject });
    this.#pump();
    this.#emitPositions();
    return promise;
  }

  /** Removes a waiting entry (its promise rejects with StartCancelledError). A start already in
   *  progress cannot be cancelled here: stop the machine instead. */
  cancel(desktopId: string): boolean {
    const i = this.#waiting.findIndex((e) => e.desktopId === desktopId);
    if (i < 0) return false;
    const [entry] = this.#waiting.splice(i, 1);
    entry!.reject(new StartCancelledError(desktopId));
    this.#emitPositions();
    return true;
  }

  /** 1-based place among the waiting of its host, 0 while starting, null when not in the queue. */
  position(desktopId: string): number | null {
    if (this.#running.has(desktopId)) return 0;
    return this.positions().waiting.find((w) => w.desktopId === desktopId)?.position ?? null;
  }

  /** Every lane's (or only `lane`'s) waiting and running starts; positions count within a lane. */
  positions(lane?: string): QueuePositions {
    const ahead = new Map<string, number>();
    const waiting: QueuePositions['waiting'] = [];
    for (const e of this.#waiting) {
      const position = (ahead.get(e.lane) ?? 0) + 1;
      ahead.set(e.lane, position);
      if (lane === undefined || e.lane === lane) waiting.push({ desktopId: e.desktopId, position });
    }
    return { waiting, running: [...this.#running.values()].filter((e) => lane === undefined || e.lane === lane).map((e) => e.desktopId) };
  }

  /** Resolves when nothing is waiting or running (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.#running.size > 0 || this.#waiting.length > 0) {
      const all = [...this.#running.values(), ...this.#waiting].map((e) => e.promise.catch(() => {}));
      await Promise.all(all);
    }
  }

  #pump(): void {
    let started = false;
    for (let i = 0; i < this.#waiting.length; ) {
      const entry = this.#waiting[i]!;
      const busy = this.#busy.get(entry.lane) ?? 0;
      if (busy >= this.#concurrency) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#busy.set(entry.lane, busy + 1);
      this.#running.set(entry.desktopId, entry);
      started = true;
      void this.#run(entry);
    }
    if (started) this.#emitPositions();
  }

  async #run(entry: Entry<T>): Promise<void> {
    try {
      entry.resolve(await entry.startFn());
    } catch (err) {
      entry.reject(err);
    } finally {
      this.#running.delete(entry.desktopId);
      const busy = (this.#busy.get(entry.lane) ?? 1) - 1;
      if (busy > 0) this.#busy.set(entry.lane, busy);
      else this.#busy.delete(entry.lane);
      this.#pump();
      this.#emitPositions();
    }
  }

  #emitPositions(): void {
    this.emit('positions', this.positions());
  }
}

function validConcurrency(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`start concurrency must be a positive integer, got ${n}`);
  return n;
}
