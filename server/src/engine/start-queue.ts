// Start queue: at most N desktop starts run at once, the rest wait in FIFO order. Under TCG a boot
// burns a whole core for ~10 s, and even under KVM a storm of starts (a class of 30 pressing
// "start" at 9:00) is smoother in a queue; the web shows each waiting desktop its position.
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';

export type QueuePositions = {
  /** waiting desktops in start order; position 1 starts next */
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
  startFn: () => Promise<T>;
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
};

export class StartQueue<T = void> extends EventEmitter<{ positions: [QueuePositions] }> {
  #concurrency: number;
  #waiting: Entry<T>[] = [];
  #running = new Map<string, Entry<T>>();

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

  /** Queues a start. Enqueuing a desktop that is already waiting or starting returns the same
   *  promise (a double click must not start a machine twice). */
  enqueue(desktopId: string, startFn: () => Promise<T>): Promise<T> {
    const existing = this.#running.get(desktopId) ?? this.#waiting.find((e) => e.desktopId === desktopId);
    if (existing) return existing.promise;
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.#waiting.push({ desktopId, startFn, promise, resolve, reject });
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

  /** 1-based place among the waiting, 0 while starting, null when not in the queue. */
  position(desktopId: string): number | null {
    if (this.#running.has(desktopId)) return 0;
    const i = this.#waiting.findIndex((e) => e.desktopId === desktopId);
    return i < 0 ? null : i + 1;
  }

  positions(): QueuePositions {
    return {
      waiting: this.#waiting.map((e, i) => ({ desktopId: e.desktopId, position: i + 1 })),
      running: [...this.#running.keys()],
    };
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
    while (this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      const entry = this.#waiting.shift()!;
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
