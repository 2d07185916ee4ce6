import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export class DataDirLockedError extends Error {}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * PGlite happily opens one directory from two processes and corrupts it; this lock file
 * (created atomically, holding our pid) makes the second process stop with a clear message.
 */
export function acquireDirLock(lockPath: string): () => void {
  mkdirSync(dirname(lockPath), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(lockPath, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && (holder === process.pid || isAlive(holder))) {
        throw new DataDirLockedError(
          `The data directory is in use by another server process (pid ${holder}). ` +
            `Stop it, or point DATA_DIR elsewhere. Lock file: ${lockPath}`,
        );
      }
      rmSync(lockPath, { force: true }); // stale lock of a process that is gone
    }
  }
  throw new DataDirLockedError(`Could not take the lock ${lockPath}`);
}
