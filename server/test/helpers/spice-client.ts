// A real SPICE client for tests: remote-viewer on a virtual X screen (Xvfb) opening a .vv file, and
// the first bytes of the SPICE link a client sends (through a CONNECT proxy or straight).
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';

/** An Xvfb screen of this test process's own; `stop` ends it. */
export async function startXvfb(): Promise<{ display: string; stop: () => void }> {
  const display = `:${90 + (process.pid % 50)}`;
  const xvfb: ChildProcess = spawn('Xvfb', [display, '-screen', '0', '1024x768x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  return { display, stop: () => void xvfb.kill() };
}

/** remote-viewer --debug on `file` until it shows the display or fails (or `timeoutMs`): answers its log. */
export function openWithRemoteViewer(file: string, display: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const rv = spawn('remote-viewer', ['--debug', file], { env: { ...process.env, DISPLAY: display } });
    let log = '';
    const done = () => {
      rv.kill('SIGKILL');
      resolve(log);
    };
    const timer = setTimeout(done, timeoutMs);
    const onData = (d: Buffer) => {
      log += d.toString();
      if (/creating spice display|failed to connect/.test(log)) {
        clearTimeout(timer);
        setTimeout(done, 200);
      }
    };
    rv.stdout.on('data', onData);
    rv.stderr.on('data', onData);
  });
}

/**
 * A SPICE main channel's link through the HTTP CONNECT proxy at `proxy` to `target` (host:port): the
 * proxy's status, and the first 4 bytes the SPICE server answered the link message with ("REDQ").
 */
export function spiceLinkThroughProxy(proxy: string, target: string, timeoutMs: number): Promise<{ status: number; magic: string }> {
  const url = new URL(proxy);
  return new Promise((resolve, reject) => {
    // Host names the target, as SPICE clients send it (GIO's HTTP proxy): HAProxy refuses a CONNECT whose Host differs from it (400).
    const req = request({ host: url.hostname, port: Number(url.port), method: 'CONNECT', path: target, headers: { host: target }, timeout: timeoutMs });
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', reject);
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        return resolve({ status: res.statusCode ?? 0, magic: '' });
      }
      // SpiceLinkHeader (magic, major 2, minor 2, size) and SpiceLinkMess: a new session's main channel, no capabilities.
      const mess = Buffer.alloc(18);
      mess.writeUInt8(1, 4); // channel type: main
      mess.writeUInt32LE(18, 14); // caps offset
      const header = Buffer.alloc(16);
      header.write('REDQ', 0, 'latin1');
      header.writeUInt32LE(2, 4);
      header.writeUInt32LE(2, 8);
      header.writeUInt32LE(mess.length, 12);
      socket.write(Buffer.concat([header, mess]));
      let got = Buffer.alloc(0);
      const timer = setTimeout(() => socket.destroy(new Error('the SPICE server did not answer the link')), timeoutMs);
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length < 4) return;
        clearTimeout(timer);
        socket.destroy();
        resolve({ status: 200, magic: got.subarray(0, 4).toString('latin1') });
      });
      socket.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.end();
  });
}
