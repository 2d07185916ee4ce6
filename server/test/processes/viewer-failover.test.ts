// Viewers through HAProxy in front of three server processes, a desktop running on a lab hypervisor:
// a SPICE client's CONNECT goes through the balancer to the desktop's SPICE port; a viewer whose
// process is killed (-9) has its screen again through another process within the bound — the raw
// RFB client reconnecting as the page does, and the web's viewer page itself in Chromium ("Reconnecting…",
// then the screen drawn again). One cluster for the file: each kill takes one of its processes.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright';
import { afterAll, beforeAll, expect } from 'vitest';
import { describeIf, firstMissing, itIf, missingFile, missingNetAdmin, missingPrograms } from '../helpers/can-run';
import { labProgramsMissing, labTag } from '../helpers/lab';
import { api } from '../helpers/process';
import { testImagesDir } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { openWithRemoteViewer, spiceLinkThroughProxy, startXvfb } from '../helpers/spice-client';
import { holdViewer, reconnectViewer, startViewerCluster, type ViewerCluster } from '../helpers/viewer-failover';
import { until } from '../helpers/wait';
import { launchTestBrowser } from '../helpers/browser';

const adminUrl = process.env.TEST_DATABASE_URL;
const webDist = join(import.meta.dirname, '..', '..', '..', 'web', 'dist');
const missing = firstMissing(
  adminUrl ? undefined : 'needs TEST_DATABASE_URL',
  missingPrograms('haproxy'),
  missingNetAdmin(),
  labProgramsMissing(),
  missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"),
);
const describe = describeIf(missing);
const it = itIf(missing);

/** The bound of the bench row: kill -9 of a process to the viewer's screen again. */
const BOUND_MS = 10_000;

/** Lit pixels of the noVNC canvas in the viewer page (a new connection draws on a new canvas). */
const litPixels = (page: { evaluate(expression: string): Promise<unknown> }) =>
  page.evaluate(`(() => {
    const c = document.querySelector('[data-testid="viewer-screen"] canvas');
    const g = c && c.getContext('2d');
    if (!g || !c.width) return 0;
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] > 300) n++;
    return n;
  })()`) as Promise<number>;

describe('viewers through the balancer when a server process dies', () => {
  let vc: ViewerCluster;
  let desktop: { token: string; id: string };

  beforeAll(async () => {
    vc = await startViewerCluster({
      adminUrl: adminUrl!,
      firstPort: 19900,
      prefix: 'i26reconn',
      subnet: '10.232.43.0/24',
      tag: labTag('rc'),
      owners: ['user'],
      // The processes serve the built web (the viewer page) when there is one.
      env: existsSync(join(webDist, 'index.html')) ? { WEB_DIST: webDist } : {},
      timeoutMs: scaled(60_000),
    });
    desktop = vc.desktops[0]!;
  }, scaled(240_000));

  afterAll(async () => {
    await vc?.close();
  }, scaled(60_000));

  it("a SPICE client's CONNECT goes through the balancer to the desktop's SPICE port (its link answered; remote-viewer shows it)", async () => {
    const r = await api<{ content: string }>(vc.cluster.url, desktop.token, `/desktop/${desktop.id}/viewer/file-spice`);
    expect(r.status).toBe(200);
    const field = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(r.body.content)?.[1];
    // The .vv names the balancer as its proxy (the address the person reached), and the host's SPICE endpoint.
    expect(field('proxy')).toBe(vc.cluster.url);
    expect(field('host')).toBe(vc.lab.hosts[0]!.address);
    const link = await spiceLinkThroughProxy(field('proxy')!, `${field('host')}:${field('port')}`, scaled(10_000));
    expect(link).toEqual({ status: 200, magic: 'REDQ' });
    // Nothing else is reached through it.
    expect((await spiceLinkThroughProxy(field('proxy')!, `${field('host')}:22`, scaled(10_000))).status).toBe(403);

    if (missingPrograms('remote-viewer', 'Xvfb')) return;
    const xvfb = await startXvfb();
    const dir = mkdtempSync('/tmp/i26reconn-vv-');
    try {
      const file = join(dir, 'desktop.vv');
      writeFileSync(file, r.body.content);
      const log = await openWithRemoteViewer(file, xvfb.display, scaled(20_000));
      expect(log).toContain('main channel: opened');
      expect(log).toContain('creating spice display');
    } finally {
      xvfb.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    // The tunnels' ends (the client gone first) leave every process up.
    await new Promise((r) => setTimeout(r, 1_000));
    for (let i = 0; i < 3; i++) {
      const p = vc.cluster.process(i)!;
      if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${vc.cluster.ids[i]} ended:\n${p.output().slice(-4000)}`);
    }
  }, scaled(60_000));

  it('a raw viewer, its process killed (-9), has its first frame again through another process within 10 s', async () => {
    const viewer = await holdViewer(vc.cluster.url, desktop.token, desktop.id);
    const held = vc.cluster.ids.indexOf(viewer.server);
    expect(held).toBeGreaterThanOrEqual(0);
    const killedAt = Date.now();
    await vc.cluster.kill(held);
    expect(await viewer.ended).toBe(1006); // gone without a close frame: the page reconnects on it
    const again = await reconnectViewer(vc.cluster.url, desktop.token, desktop.id, scaled(30_000));
    const ms = Date.now() - killedAt;
    again.close();
    console.log(`raw viewer: kill -9 of ${viewer.server} → first frame again through ${again.server} in ${ms} ms`);
    expect(again.server).not.toBe(viewer.server);
    expect(ms).toBeLessThan(scaled(BOUND_MS));
  }, scaled(60_000));

  it('the viewer page, its process killed (-9), says "Reconnecting…" then shows the screen again through another process', async () => {
    if (!existsSync(join(webDist, 'index.html'))) throw new Error('build the web first (npm run build -w @vdi/web)');
    const browser: Browser = await launchTestBrowser();
    try {
      const context = await browser.newContext({ viewport: { width: 1024, height: 700 }, locale: 'en-GB' });
      await context.addCookies([{ name: 'isardvdi_session', value: desktop.token, url: vc.cluster.url }]);
      const page = await context.newPage();
      const logs: string[] = [];
      page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
      page.on('requestfailed', (r) => logs.push(`failed: ${r.method()} ${r.url().replace(/token=[^&]+/, 'token=…')} ${r.failure()?.errorText}`));
      page.on('response', (r) => r.status() >= 400 && logs.push(`${r.status()}: ${r.request().method()} ${r.url().replace(/token=[^&]+/, 'token=…')}`));
      // Which process answered each viewer websocket (the upgrade's X-Server-Id).
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      const holders: string[] = [];
      cdp.on('Network.webSocketHandshakeResponseReceived', (e) => {
        const h = Object.entries(e.response.headers).find(([k]) => k.toLowerCase() === 'x-server-id');
        if (h) holders.push(h[1]);
      });
      const answer = await api<{ urlp: string }>(vc.cluster.url, desktop.token, `/desktop/${desktop.id}/viewer/browser-vnc`);
      expect(answer.status).toBe(200);
      await page.goto(`${vc.cluster.url}${answer.body.urlp}`);
      const viewerPage = page.getByTestId('vnc-viewer');
      await viewerPage.and(page.locator('[data-status="connected"]')).waitFor({ timeout: scaled(30_000) });
      await until('the screen drawn', async () => (await litPixels(page)) > 100, 60_000);
      const killed = holders.at(-1)!;
      const held = vc.cluster.ids.indexOf(killed);
      expect(held).toBeGreaterThanOrEqual(0);

      const killedAt = Date.now();
      await vc.cluster.kill(held);
      await page.getByTestId('viewer-reconnecting').waitFor({ timeout: scaled(5_000) });
      const reconnectingMs = Date.now() - killedAt;
      await viewerPage.and(page.locator('[data-status="connected"]')).waitFor({ timeout: scaled(30_000) }).catch(async (err: Error) => {
        // What the page shows instead, and what it said.
        const state = await page.evaluate(`[document.querySelector('[data-testid="vnc-viewer"]')?.dataset.status, document.querySelector('[data-testid="viewer-ended"]')?.dataset.reason, document.querySelector('[data-testid="viewer-reconnect-error"]')?.textContent]`);
        throw new Error(`${err.message}\npage: ${JSON.stringify(state)}; websockets answered by ${holders.join(', ')}\n${logs.join('\n')}\n${vc.cluster.output().slice(-3000)}`);
      });
      await until('the screen drawn again', async () => (await litPixels(page)) > 100, 30_000);
      const ms = Date.now() - killedAt;
      console.log(`viewer page: kill -9 of ${killed} → "Reconnecting…" after ${reconnectingMs} ms, the screen again through ${holders.at(-1)} after ${ms} ms`);
      expect(holders.at(-1)).not.toBe(killed);
      expect(await page.getByTestId('viewer-disconnected').count()).toBe(0);
      expect(ms).toBeLessThan(scaled(BOUND_MS));
    } finally {
      await browser.close();
    }
  }, scaled(120_000));
});
