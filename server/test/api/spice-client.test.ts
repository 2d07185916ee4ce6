import { describeIf, missingPrograms } from '../helpers/can-run';
import { scaled } from '../helpers/slowdown';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { openWithRemoteViewer, startXvfb } from '../helpers/spice-client';

// A real SPICE client opens the .vv file the portal hands out: remote-viewer, on a virtual X screen.
const missing = missingPrograms('remote-viewer', 'Xvfb');

let server: TestServer;
let xvfb: Awaited<ReturnType<typeof startXvfb>> | undefined;
const dir = mkdtempSync(join(tmpdir(), 'vs-'));

beforeAll(async () => {
  if (missing) return;
  server = await startTestServer();
  xvfb = await startXvfb();
}, scaled(240_000));
afterAll(async () => {
  xvfb?.stop();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

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
    const log = await openWithRemoteViewer(good, xvfb!.display, scaled(15_000));
    expect(log).toContain('main channel: opened');
    expect(log).toContain('creating spice display');
    expect(existsSync(good)).toBe(false); // delete-this-file=1 is honoured

    const bad = join(dir, 'bad.vv');
    writeFileSync(bad, answer.content.replace(/password=\w+/, 'password=wrongwrongwrong1'));
    expect(await openWithRemoteViewer(bad, xvfb!.display, 8_000)).not.toContain('creating spice display');
    await call(server, `/api/v3/desktop/stop/${d.id}`, { token });
    await call(server, `/api/v3/desktop/stop/${d.id}`, { token });
  }, scaled(120_000));
});
