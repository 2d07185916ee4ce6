/**
 * Time as the scheduler and the booking rules see it. Production uses the real clock; tests use
 * a manual one they move forward, which fires the timers that fall due on the way.
 */
export type TimerHandle = { readonly id: number };

export interface Clock {
  /** The wall clock (the database's time follows it too: the work queue's timed jobs can keep to it). */
  readonly real?: boolean;
  now(): Date;
  setTimer(fn: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle | null | undefined): void;
}

/** Node timers cannot wait longer than this; longer waits are re-armed when they fire. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function realClock(): Clock {
  const timers = new Map<number, NodeJS.Timeout>();
  let next = 1;
  return {
    real: true,
    now: () => new Date(),
    setTimer(fn, ms) {
      const id = next++;
      timers.set(
        id,
        setTimeout(() => {
          timers.delete(id);
          fn();
        }, Math.min(Math.max(0, ms), MAX_TIMER_MS)).unref(),
      );
      return { id };
    },
    clearTimer(handle) {
      if (!handle) return;
      clearTimeout(timers.get(handle.id));
      timers.delete(handle.id);
    },
  };
}

export type ManualClock = Clock & {
  /** Moves time forward, firing each timer at its due time, in order. */
  advance(ms: number): void;
  /** Moves time to an instant (never backwards). */
  set(to: Date): void;
  pendingTimers(): number;
};

export function manualClock(start: Date = new Date()): ManualClock {
  let now = start.getTime();
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: ManualClock = {
    now: () => new Date(now),
    setTimer(fn, ms) {
      const id = next++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return { id };
    },
    clearTimer(handle) {
      if (handle) timers.delete(handle.id);
    },
    advance(ms) {
      clock.set(new Date(now + ms));
    },
    set(to) {
      const target = Math.max(now, to.getTime());
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = target;
    },
    pendingTimers: () => timers.size,
  };
  return clock;
}
