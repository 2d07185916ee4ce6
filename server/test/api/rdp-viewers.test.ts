// The RDP viewers against a real RDP server (Debian's xrdp in a network namespace of its own,
// standing in for a desktop's guest at its guest address) and real clients: Chromium on /rdp
// (the IronRDP web client through the portal's RDCleanPath websocket) and xfreerdp opening the
// downloaded .rdp file through the portal's RD Gateway. Each token opens its own desktop's port
// 3389 once; a spent, expired or other desktop's token, and a destination the client picks, are refused.
import { scaled } from '../helpers/slowdown';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright';
import { RDP_WEBSOCKET_PATH } from '@vdi/contracts';
import { schema } from '../../src/db';
import { rdpGatewayPort } from '../../src/modules/viewers/rdp';
import { HRESULT, PKT, client, statusOf } from '../../src/rdp/tsgu';
import { RDCLEANPATH_ERROR, WSA } from '../../src/rdp/rdcleanpath';
import { call, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { startXrdpHost, xrdpMissing, type XrdpHost } from '../helpers/xrdp-host';
import { describeIf, itIf, missingPrograms } from '../helpers/can-run';
import { canvasPixels, cleanPathRequest, countPixels, gatewayTunnel, xfreerdpScreen } from '../helpers/rdp-clients';
import { until } from '../helpers/wait';
import { launchTestBrowser } from '../helpers/browser';

const root = join(import.meta.dirname, '..', '..', '..');
const webDist = join(root, 'web', 'dist');
const shots = join(root, 'artifacts', 'screenshots');

const missing = xrdpMissing();
let server: TestServer;
let xrdp: XrdpHost;
let userToken: string;
let otherToken: string;
let desktopId: string;
let otherDesktopId: string;
const work = mkdtempSync(join(tmpdir(), 'rdp-test-'));

/** A desktop as the guest network leaves it: running, with an address, the RDP viewers ticked and the guest credentials set. */
async function asRunningRdpDesktop(id: string, address: string, credentials: { username: string; password: string }) {
  const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id));
  await server.ctx.db
    .update(schema.domains)
    .set({
      status: 'Started',
      guestIp: address,
      guestProperties: { ...row!.guestProperties, credentials, viewers: { ...row!.guestProperties.viewers, browser_rdp: { options: null }, file_rdpgw: { options: null } } },
    })
    .where(eq(schema.domains.id, id));
}

async function desktopOf(username: string) {
  const uid = await userIdOf(server, username);
  return (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.userId, uid))).find((d) => d.kind === 'desktop')!.id;
}

async function viewer(token: string, id: string, kind: string) {
  const res = await call(server, `/api/v3/desktop/${id}/viewer/${kind}`, { token });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<{ kind: string; protocol: string; viewer?: string; urlp?: string; cookie?: string; values?: Record<string, unknown>; name?: string; ext?: string; content?: string }>;
}
const ticketOf = (cookie: string) => JSON.parse(Buffer.from(cookie, 'base64url').toString()) as { token: string; destination: string; username: string; password: string; exp: number };
const gatewayTokenOf = (content: string) => /^gatewayaccesstoken:s:(.+)$/m.exec(content)![1]!.trim();
const wsUrl = () => `${server.url.replace(/^http/, 'ws')}${RDP_WEBSOCKET_PATH}`;

beforeAll(async () => {
  if (missing) return;
  xrdp = await startXrdpHost();
  server = await startTestServer({ network: true, env: existsSync(join(webDist, 'index.html')) ? { WEB_DIST: webDist } : {} });
  userToken = await loginToken(server, 'user');
  otherToken = await loginToken(server, 'student01');
  desktopId = await desktopOf('user');
  otherDesktopId = await desktopOf('student01');
  await asRunningRdpDesktop(desktopId, xrdp.address, { username: xrdp.username, password: xrdp.password });
  // Another desktop, "running" at an address where no RDP service listens (the host's end of the veth).
  await asRunningRdpDesktop(otherDesktopId, xrdp.address.replace(/\.2$/, '.1'), { username: 'x', password: 'y' });
}, scaled(120_000));

afterAll(async () => {
  await server?.close();
  await xrdp?.stop();
  rmSync(work, { recursive: true, force: true });
});

describeIf(missing)('browser RDP viewer', () => {
  it('answers the reference shape: kind browser, protocol rdp, /rdp, a cookie holding a one-time ticket', async () => {
    const answer = await viewer(userToken, desktopId, 'browser-rdp');
    expect(Object.keys(answer).sort()).toEqual(['cookie', 'kind', 'protocol', 'urlp', 'values', 'viewer']);
    expect(answer).toMatchObject({ kind: 'browser', protocol: 'rdp', viewer: '/rdp' });
    expect(answer.urlp).toBe(`/rdp#${answer.cookie}`);
    expect(answer.cookie).toMatch(/^[A-Za-z0-9_-]+$/);
    const ticket = ticketOf(answer.cookie!);
    expect(ticket).toMatchObject({ destination: `${xrdp.address}:3389`, username: xrdp.username, password: xrdp.password });
    expect(ticket.exp).toBeGreaterThan(Date.now() / 1000);
  });

  it('is refused for a stopped desktop and for someone else’s desktop', async () => {
    const res = await call(server, `/api/v3/desktop/${desktopId}/viewer/browser-rdp`, { token: otherToken });
    expect([403, 404]).toContain(res.status);
  });

  it('proxies to the desktop once per token; refuses unknown, spent and foreign destinations', async () => {
    const { token } = ticketOf((await viewer(userToken, desktopId, 'browser-rdp')).cookie!);
    const first = await cleanPathRequest(wsUrl(), { token, destination: `${xrdp.address}:3389` });
    expect(first.answer?.error, JSON.stringify(first)).toBeUndefined();
    expect(first.answer?.x224?.[5]).toBe(0xd0); // the server's X.224 Connection Confirm
    expect(first.answer?.certChain?.length).toBeGreaterThan(0);
    first.ws.terminate();

    const again = await cleanPathRequest(wsUrl(), { token, destination: `${xrdp.address}:3389` });
    expect(again.answer?.error).toMatchObject({ code: RDCLEANPATH_ERROR.general, httpStatus: 401 });
    const unknown = await cleanPathRequest(wsUrl(), { token: 'not-a-token', destination: `${xrdp.address}:3389` });
    expect(unknown.answer?.error?.httpStatus).toBe(401);

    // The page cannot choose where to go: another destination is refused, nothing is dialled.
    const { token: t2 } = ticketOf((await viewer(userToken, desktopId, 'browser-rdp')).cookie!);
    const elsewhere = await cleanPathRequest(wsUrl(), { token: t2, destination: '127.0.0.1:22' });
    expect(elsewhere.answer?.error?.httpStatus).toBe(403);
  });

  it('says rdp-not-running (connection refused) for a desktop whose RDP service does not listen', async () => {
    const { token } = ticketOf((await viewer(otherToken, otherDesktopId, 'browser-rdp')).cookie!);
    const res = await cleanPathRequest(wsUrl(), { token });
    expect(res.answer?.error).toMatchObject({ httpStatus: 502, wsaError: WSA.connectionRefused });
  });

  it('Chromium on /rdp shows the guest session, signed in with the guest credentials, and typing reaches it', async () => {
    if (!existsSync(join(webDist, 'index.html'))) throw new Error('build the web first (npm run build -w @vdi/web)');
    const browser: Browser = await launchTestBrowser();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addCookies([{ name: 'isardvdi_session', value: userToken, url: server.url }]);
      const page = await context.newPage();
      const answer = await viewer(userToken, desktopId, 'browser-rdp');
      await page.goto(`${server.url}${answer.urlp}`);
      await page.locator('[data-testid="rdp-viewer"][data-state="connected"]').waitFor({ timeout: scaled(90_000) });
      // The address bar keeps only the desktop (the ticket is spent and holds a password).
      expect(page.url()).toBe(`${server.url}/rdp?desktop=${desktopId}`);
      const canvas = page.locator('iron-remote-desktop canvas');
      // The xterm's dark blue background fills the session: the canvas is drawn, not blank.
      await until('the session to be drawn', async () => (await bluePixels(page)) > 10_000, 60_000);
      await canvas.click({ position: { x: 200, y: 200 } });
      // Letters, digits and spaces only: Playwright types "~" or ">" without pressing Shift.
      const marker = `typed${Date.now()}`;
      await page.keyboard.type(`touch ${marker}`, { delay: 40 });
      await page.keyboard.press('Enter');
      mkdirSync(shots, { recursive: true });
      await until('the typed marker in the guest', async () => existsSync(join(xrdp.home, marker)), 30_000).finally(() => page.screenshot({ path: join(shots, 'rdp-browser.png') }));
      // The session was opened by the credentials (no second login dialog of xrdp's).
      expect(xrdp.sesmanLog()).toMatch(/created session|session_start|Starting session/i);

      // Reopening the tab: only ?desktop= is left; a signed-in person gets a new ticket and is back.
      await page.reload();
      await page.locator('[data-testid="rdp-viewer"][data-state="connected"]').waitFor({ timeout: scaled(90_000) });

      // A page without a ticket or a desktop says the link is missing.
      await page.goto(`${server.url}/rdp`);
      await page.locator('[data-testid="rdp-viewer"][data-state="cookie_missing"]').waitFor({ timeout: scaled(30_000) });
    } finally {
      await browser.close();
    }
  }, scaled(240_000));
});

describeIf(missing)('browser RDP page states', () => {
  it('shows rdp-not-running after its retries, cookie expired for a spent link, cookie missing without one (English, French, phone)', async () => {
    if (!existsSync(join(webDist, 'index.html'))) throw new Error('build the web first (npm run build -w @vdi/web)');
    const browser: Browser = await launchTestBrowser();
    mkdirSync(shots, { recursive: true });
    try {
      const en = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB' });
      await en.addCookies([{ name: 'isardvdi_session', value: otherToken, url: server.url }]);
      const page = await en.newPage();
      // A desktop whose RDP service does not listen: retried with new tickets, then rdp-not-running.
      const answer = await viewer(otherToken, otherDesktopId, 'browser-rdp');
      await page.goto(`${server.url}${answer.urlp}`);
      await page.locator('[data-testid="rdp-viewer"][data-state="retrying"]').waitFor({ timeout: scaled(60_000) });
      await page.screenshot({ path: join(shots, 'rdp-retrying.png') });
      await page.locator('[data-testid="rdp-viewer"][data-state="rdp_not_running"]').waitFor({ timeout: scaled(90_000) });
      await page.screenshot({ path: join(shots, 'rdp-not-running.png') });
      // The same link again: its token is spent.
      await page.goto('about:blank');
      await page.goto(`${server.url}${answer.urlp}`);
      await page.locator('[data-testid="rdp-viewer"][data-state="cookie_expired"]').waitFor({ timeout: scaled(60_000) });
      await page.screenshot({ path: join(shots, 'rdp-cookie-expired.png') });

      const fr = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'fr-FR' });
      await fr.addCookies([{ name: 'isardvdi_session', value: otherToken, url: server.url }]);
      const phone = await fr.newPage();
      await phone.goto(`${server.url}/rdp`);
      await phone.locator('[data-testid="rdp-viewer"][data-state="cookie_missing"]').waitFor({ timeout: scaled(30_000) });
      await phone.screenshot({ path: join(shots, 'rdp-cookie-missing-fr-phone.png') });
    } finally {
      await browser.close();
    }
  }, scaled(240_000));
});

/** Pixels of the session's xterm background (#1d3557) in the page's canvas. */
const bluePixels = (page: import('playwright').Page) => canvasPixels(page, 'Math.abs(r - 0x1d) < 12 && Math.abs(g - 0x35) < 12 && Math.abs(b - 0x57) < 12');

describeIf(missing)('RD Gateway and the .rdp file', () => {
  it('answers the reference .rdp file: gateway, short-lived token, guest address and credentials, screen options', async () => {
    const answer = await viewer(userToken, desktopId, 'file-rdpgw');
    expect(answer).toMatchObject({ kind: 'file', protocol: 'rdpgw', ext: 'rdp', mime: 'application/x-rdp' });
    const lines = answer.content!.split('\r\n');
    expect(lines).toContain(`full address:s:${xrdp.address}`);
    expect(lines).toContain(`gatewayhostname:s:127.0.0.1:${rdpGatewayPort(server.ctx)}`);
    expect(lines).toContain(`username:s:${xrdp.username}`);
    expect(lines).toContain(`password:s:${xrdp.password}`);
    expect(lines).toContain('gatewayusagemethod:i:1');
    expect(lines).toContain('screen mode id:i:1');
    expect(gatewayTokenOf(answer.content!)).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  });

  it('lets a token reach its own desktop once: spent, expired, unknown and other desktops’ tokens are refused', async () => {
    const port = rdpGatewayPort(server.ctx)!;
    const token = gatewayTokenOf((await viewer(userToken, desktopId, 'file-rdpgw')).content!);
    const ok = await gatewayTunnel(port, token);
    expect(ok.gw.status).toBe('HTTP/1.1 101 Switching Protocols');
    expect(ok.tunnelStatus).toBe(0);
    ok.gw.send(client.tunnelAuth('test'));
    expect(statusOf((await ok.gw.next())!)).toBe(0);
    ok.gw.send(client.channelCreate(xrdp.address, 3389));
    const channel = (await ok.gw.next())!;
    expect(channel.type).toBe(PKT.channelResponse);
    expect(statusOf(channel)).toBe(0);
    ok.gw.close();

    const spent = await gatewayTunnel(port, token);
    expect(spent.tunnelStatus).toBe(HRESULT.cookieAccessDenied);
    spent.gw.close();
    const unknown = await gatewayTunnel(port, 'nope');
    expect(unknown.tunnelStatus).toBe(HRESULT.cookieAccessDenied);
    unknown.gw.close();

    const stale = gatewayTokenOf((await viewer(userToken, desktopId, 'file-rdpgw')).content!);
    await server.ctx.db.update(schema.viewerTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(schema.viewerTokens.desktopId, desktopId));
    const expired = await gatewayTunnel(port, stale);
    expect(expired.tunnelStatus).toBe(HRESULT.cookieAccessDenied);
    expired.gw.close();

    // The other desktop's token, asking for this desktop (or any other endpoint): the channel is refused.
    for (const [host, p] of [[xrdp.address, 3389], [xrdp.address.replace(/\.2$/, '.1'), 22]] as const) {
      const foreign = gatewayTokenOf((await viewer(otherToken, otherDesktopId, 'file-rdpgw')).content!);
      const t = await gatewayTunnel(port, foreign);
      expect(t.tunnelStatus).toBe(0);
      t.gw.send(client.tunnelAuth('test'));
      await t.gw.next();
      t.gw.send(client.channelCreate(host, p));
      expect(statusOf((await t.gw.next())!)).toBe(HRESULT.rapAccessDenied);
      t.gw.close();
    }
    // The browser viewer's token does not open the gateway, nor the reverse.
    const browserToken = ticketOf((await viewer(userToken, desktopId, 'browser-rdp')).cookie!).token;
    const crossed = await gatewayTunnel(port, browserToken);
    expect(crossed.tunnelStatus).toBe(HRESULT.cookieAccessDenied);
    crossed.gw.close();
  });

  itIf(missingPrograms('xfreerdp', 'xvfb-run'))('xfreerdp opens the downloaded .rdp file through the gateway into the guest session; a reused file is refused', async () => {
    const answer = await viewer(userToken, desktopId, 'file-rdpgw');
    const file = join(work, `${answer.name}.rdp`);
    writeFileSync(file, answer.content!);
    const shot = await xfreerdpScreen(file, { work, png: join(shots, 'rdp-gateway-xfreerdp.png'), drawn: xtermBlue });
    // The session's xterm background fills most of the screen.
    expect(shot.drawn, shot.log).toBe(true);

    // The same file again: its token is spent, the gateway refuses, no session is drawn.
    const again = await xfreerdpScreen(file, { work, waitMs: 8_000, drawn: xtermBlue });
    expect(again.drawn).toBe(false);
    expect(again.log).toMatch(/gateway|tunnel|denied|failed|0x800759F8/i);
  }, scaled(180_000));
});

/** The host session's xterm background (#1d3557) over most of the screen. */
const xtermBlue = (rgb: Buffer) => countPixels(rgb, (r, g, b) => Math.abs(r - 0x1d) < 12 && Math.abs(g - 0x35) < 12 && Math.abs(b - 0x57) < 12) > 200_000;
