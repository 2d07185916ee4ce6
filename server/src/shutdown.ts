import type { Logger } from 'pino';

/** A stop ends within this bound, then the process exits anyway (running desktops stay up). */
export const SHUTDOWN_BOUND_MS = 10_000;

type StopLog = Pick<Logger, 'info' | 'warn' | 'error'>;

/**
 * The server's stop on SIGTERM / SIGINT: the steps run in order (web server and sockets, engine,
 * database) and the process exits; whatever a step waits on, the process exits after `boundMs`
 * with a log line naming it. A second signal while stopping exits at once.
 */
export function createStopper(opts: {
  steps: [name: string, run: () => Promise<unknown>][];
  log: StopLog;
  exit: (code: number) => void;
  boundMs?: number;
}) {
  const boundMs = opts.boundMs ?? SHUTDOWN_BOUND_MS;
  const { log, exit } = opts;
  let stopping = false;
  return async function stop(signal: string): Promise<void> {
    if (stopping) {
      log.warn(`${signal} again while stopping: exiting now`);
      return exit(1);
    }
    stopping = true;
    const started = Date.now();
    let step = '';
    log.info(`${signal}: stopping (running desktops keep running; the next start adopts them)`);
    const bound = setTimeout(() => {
      log.error({ step }, `stop not finished after ${boundMs / 1000} s (waiting on: ${step}); exiting anyway`);
      exit(1);
    }, boundMs);
    try {
      for (const [name, run] of opts.steps) {
        step = name;
        await run();
      }
      clearTimeout(bound);
      log.info({ ms: Date.now() - started }, 'stopped');
      exit(0);
    } catch (err) {
      clearTimeout(bound);
      log.error({ err, step }, 'stop failed');
      exit(1);
    }
  };
}
