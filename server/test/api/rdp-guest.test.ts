// The journey of issue 14 with the real "Debian desktop (RDP)" guest on the guest network: a
// desktop is created from the template with its own guest credentials and started; the .rdp
// file's gateway lets xfreerdp into the guest's session (the guest reports it on its serial
// console), and Chromium on /rdp shows the session, where a typed line reaches the guest.
import { scaled } from '../helpers/slowdown';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { ensureRdpGuest } from '../../src/engine/guest-image';
import { RDP_TEMPLATE_ID, seedRdpTemplate } from '../../src/seed/rdp-template';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { guestNetworkMissing } from '../helpers/guest-network';
import { describeIf, firstMissing, missingFile, missingPrograms } from '../helpers/can-run';
import { until } from '../helpers/wait';
import { browserRdp, countPixels, typeInSession, xfreerdpScreen } from '../helpers/rdp-clients';

const root = join(import.meta.dirname, '..', '..', '..');
const webDist = join(root, 'web', 'dist');
const shots = join(root, 'artifacts', 'screenshots');
const missing = firstMissing(guestNetworkMissing(), missingPrograms('xfreerdp', 'xvfb-run'), missingFile(join(webDist, 'index.html'), 'the web build'));
const work = mkdtempSync(join(tmpdir(), 'rdp-guest-'));

let server: TestServer;
let token: string;
let id: string;
let ip: string;

beforeAll(async () => {
  if (missing) return;
  server = await startTestServer({ network: true, env: { WEB_DIST: webDist } });
  token = await loginToken(server, 'user');
  await seedRdpTemplate(server.ctx.db, server.ctx.engine, await ensureRdpGuest(testImagesDir()));
  const r = await call(server, '/api/v3/persistent_desktop', {
    token,
    body: { template_id: RDP_TEMPLATE_ID, name: 'Remote desktop', guest_properties: { credentials: { username: 'alice', password: `pw ${randomBytes(6).toString('hex')}` } } },
  });
  expect(r.status).toBe(200);
  id = ((await r.json()) as { id: string }).id;
  await until('the desktop to be made', async () => (await row())?.status === 'Stopped', 60_000);
  expect((await call(server, `/api/v3/desktop/start/${id}`, { token })).status).toBe(200);
  ip = (await until('an address', async () => {
    const d = await row();
    return d?.status === 'Started' && d.guestIp ? d.guestIp : undefined;
  }, 240_000))!;
  await server.ctx.engine.driver.waitForSerial(id, /RDP-DESKTOP READY/, scaled(180_000));
}, scaled(600_000));

afterAll(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

const row = async () => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0];

describeIf(missing)('the "Debian desktop (RDP)" guest through the portal', () => {
  it('xfreerdp opens the downloaded .rdp file through the RD Gateway into the guest’s session, which stays', async () => {
    const res = await call(server, `/api/v3/desktop/${id}/viewer/file-rdpgw`, { token });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { content: string; name: string };
    expect(answer.content).toContain(`full address:s:${ip}\r\n`);
    const file = join(work, 'desktop.rdp');
    writeFileSync(file, answer.content);
    mkdirSync(shots, { recursive: true });
    // A full session: the terminal (white) and the clock are drawn on xfreerdp's screen.
    const shot = await xfreerdpScreen(file, { work, png: join(shots, 'rdp-guest-xfreerdp.png'), waitMs: 120_000, drawn: sessionDrawn });
    expect(shot.drawn, shot.log).toBe(true);
    await server.ctx.engine.driver.waitForSerial(id, /RDP-SESSION started user=alice/, scaled(10_000));
    // The session did not end on its own (it did once: the user could not open a terminal).
    expect(serialLog()).not.toMatch(/RDP-SESSION ended/);
  }, scaled(240_000));

  it('Chromium on /rdp shows the session (not blank), a typed line reaches the guest, and a second viewer reconnects to it', async () => {
    const browser = await browserRdp(server.url, token);
    try {
      const page = await browser.context.newPage();
      const consoleLines: string[] = [];
      page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`.slice(0, 500)));
      const res = await call(server, `/api/v3/desktop/${id}/viewer/browser-rdp`, { token });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { urlp: string };
      mkdirSync(shots, { recursive: true });
      await browser.open(answer.urlp, {
        page,
        whenDrawn: async () => {
          await page.screenshot({ path: join(shots, 'rdp-guest-browser.png') });
          writeFileSync(join(tmpdir(), 'rdp-guest-console.log'), consoleLines.join('\n'));
        },
      });
      await typeLine(page, `echo hello${Date.now()}`, 'rdp-guest-typed');

      // The tab closed and the desktop opened again: a new viewer, the same session (no new one starts).
      const sessions = serialLog().match(/RDP-SESSION started/g)?.length;
      await page.close();
      const second = (await (await call(server, `/api/v3/desktop/${id}/viewer/browser-rdp`, { token })).json()) as { urlp: string };
      const again = await browser.open(second.urlp);
      await typeLine(again, `echo again${Date.now()}`, 'rdp-guest-reopened');
      expect(serialLog().match(/RDP-SESSION started/g)?.length).toBe(sessions);
      expect(serialLog()).not.toMatch(/RDP-SESSION ended/);
    } finally {
      await browser.close();
    }
  }, scaled(240_000));
});

/** Clicks into the session, types a line and waits until the guest reports it (RDP-TYPED on its serial console). */
async function typeLine(page: import('playwright').Page, line: string, shot: string) {
  await typeInSession(page, line);
  await server.ctx.engine.driver
    .waitForSerial(id, new RegExp(`RDP-TYPED ${line}`), scaled(60_000))
    .finally(() => page.screenshot({ path: join(shots, `${shot}.png`) }));
}

const serialLog = () => readFileSync(join(server.config.dataDir, 'run', id, 'serial.log'), 'utf8');

/** xfreerdp's screen shows the session: the terminal's white over a large part of it. */
const sessionDrawn = (rgb: Buffer) => countPixels(rgb, (r, g, b) => r > 240 && g > 240 && b > 240) > 150_000;
