import { describeIf, missingPrograms } from '../helpers/can-run';
import { scaled } from '../helpers/slowdown';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';

// A real SPICE client opens the .vv file the portal hands out: remote-viewer, on a virtual X screen.
const missing = missingPrograms('remote-viewer', 'Xvfb');

let server: TestServer;
let xvfb: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'vs-'));
const display = `:${90 + (process.pid % 50)}`;

beforeAll(async () => {
  if (missing) return;
  server = await startTestServer();
  xvfb = spawn('Xvfb', [display, '-screen', '0', '1024x768x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
}, scaled(240_000));
afterAll(async () => {
  xvfb?.kill();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function openWithRemoteViewer(file: string, timeoutMs: number): Promise<string> {
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

describeIf(missing)('SPICE viewer file', () => {
  it('opens in remote-viewer through the portal, and only with its password', async () => {
    const token = await loginToken(server, 'advanced');
    const [d] = await (await call(server, '/api/v3/user/desktops', { token })).json();
    await call(server, `/api/v3/desktop/start/${d.id}`, { token });
    const until = Date.now() + 20_000;
    let answer;
    for (;;) {
      const r = await call(server, `/api/v3/desktop/${d.id}/viewer/file-spice`, { token });
      if (r.status === 200) {
        answer = await r.json();
        break;
      }
      if (Date.now() > until) throw new Error('the desktop did not start');
      await new Promise((res) => setTimeout(res, 200));
    }
    const good = join(dir, 'good.vv');
    writeFileSync(good, answer.content);
    const log = await openWithRemoteViewer(good, scaled(15_000));
    expect(log).toContain('main channel: opened');
    expect(log).toContain('creating spice display');
    expect(existsSync(good)).toBe(false); // delete-this-file=1 is honoured

    const bad = join(dir, 'bad.vv');
    writeFileSync(bad, answer.content.replace(/password=\w+/, 'password=wrongwrongwrong1'));
    expect(await openWithRemoteViewer(bad, 8_000)).not.toContain('creating spice display');
    await call(server, `/api/v3/desktop/stop/${d.id}`, { token });
    await call(server, `/api/v3/desktop/stop/${d.id}`, { token });
  }, scaled(120_000));
});
