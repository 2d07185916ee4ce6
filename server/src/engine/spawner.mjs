// A small helper process that runs qemu-img for the server. Starting a child process from the
// server itself costs time in proportion to the server's memory (the embedded database makes it
// large: hundreds of ms per start on a loaded machine); from this small process it stays cheap.
// Requests come over the IPC channel: { id, file, args, timeoutMs, maxBuffer }; answers { id, err?, stdout, stderr }.
// `nice`: the program's CPU priority is lowered to it as it starts (background work such as qemu-img).
import { execFile } from 'node:child_process';
import { setPriority } from 'node:os';

process.on('message', (m) => {
  const child = execFile(m.file, m.args, { maxBuffer: m.maxBuffer, timeout: m.timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
    process.send?.({
      id: m.id,
      err: err ? { message: err.message, code: typeof err.code === 'number' ? err.code : null } : undefined,
      stdout,
      stderr,
    });
  });
  if (m.nice && child.pid) {
    try {
      setPriority(child.pid, m.nice);
    } catch {
      // Gone already, or refused: it runs at this helper's priority.
    }
  }
});
// The server went away: so does this helper.
process.on('disconnect', () => process.exit(0));
// A stop signal to the whole process group (a service manager, Ctrl+C) is the server's to handle:
// its stop still runs programs through this helper (the guest network's teardown), and this helper
// ends with it (above).
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => {});
