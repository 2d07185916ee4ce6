import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a connection waits at most before trying again (the watch below misses nothing it can see). */
const SOCKET_RECHECK_MS = 50;

/**
 * The wait before connecting again to a unix socket a process is still setting up (QEMU's QMP and VNC sockets while it
 * starts): until the socket appears (ENOENT: not made yet; a poll interval here was most of what a start spent between
 * QEMU's spawn and its greeting), or a moment growing from 1 ms (ECONNREFUSED: made, not listening yet). At most `ms`.
 */
export async function untilSocketMayListen(path: string, code: 'ENOENT' | 'ECONNREFUSED', attempt: number, ms: number): Promise<void> {
  const most = Math.max(0, Math.min(SOCKET_RECHECK_MS, ms));
  if (code === 'ENOENT') await created(path, most);
  else await sleep(Math.min(2 ** attempt, most));
}

/** Resolves when `path` appears in its directory (inotify), or after `ms` (no watch possible, or not yet there). */
function created(path: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | undefined;
    const done = () => {
      clearTimeout(timer);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(done, ms);
    try {
      watcher = watch(dirname(path), { persistent: false }, (_, name) => name === basename(path) && done());
      watcher.on('error', done);
    } catch {
      // no directory to watch, or no inotify: the timer tries again
    }
    // made between the refused connect and the watch
    if (existsSync(path)) done();
  });
}
