// The QEMU driver's spawner (spawner.ts): a small process that starts QEMU processes on request. Forking
// copies the forking process's page tables, so a spawn costs about 5 ms per 100 MB of its memory: from the
// server (hundreds of MB) that was 10–25 ms of every start, from this process well under 1 ms.
// Requests and answers are IPC messages: { type: 'spawn', id, file, args, log } →
// { type: 'spawned', id, pid } | { type: 'error', id, message }, then { type: 'exit', id, code, signal }.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

const tell = (message) => {
  try {
    if (process.connected) process.send(message);
  } catch {
    // the server went away: nobody to tell
  }
};

process.on('message', (m) => {
  if (!m || m.type !== 'spawn') return;
  let fd;
  try {
    // Detached in its own process group with stdio to its log: the machine outlives the server and this process.
    fd = openSync(m.log, 'a', 0o600);
    const child = spawn(m.file, m.args, { detached: true, stdio: ['ignore', fd, fd] });
    child.once('spawn', () => tell({ type: 'spawned', id: m.id, pid: child.pid }));
    child.once('error', (err) => tell({ type: 'error', id: m.id, message: err.message }));
    child.once('exit', (code, signal) => tell({ type: 'exit', id: m.id, code, signal }));
  } catch (err) {
    tell({ type: 'error', id: m.id, message: err instanceof Error ? err.message : String(err) });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
});
// The server is gone (or closed its driver): the machines started here run on, re-parented.
process.on('disconnect', () => process.exit(0));
