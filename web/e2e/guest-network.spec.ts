import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import { countPixels, litPixels, xfreerdpScreen } from '../../server/test/helpers/rdp-clients';
import { apiToken, chooseLanguage, freshUser, scaled, shot, signInAs } from './support';

// A desktop on the guest network (the "Debian desktop (RDP)" template, seeded where the server
// has the network): started, it waits for its address, then its card shows it.
const RDP_TEMPLATE_ID = '7d1f6c2e-5b0a-4c3e-9a61-3f2b8e4d0c15';
const NAME = 'RDP journey desktop';
const ADMIN = 'net-card-admin';

test('a desktop on the guest network shows its address on its card', async ({ page, request }) => {
  test.setTimeout(scaled(300_000));
  // An administrator of the journey's own: the Catalan chosen on the way is saved for them.
  await freshUser(request, ADMIN, 'admin');
  const token = await apiToken(request, ADMIN);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  const allowed = await (await request.get('/api/v3/user/hardware/allowed', { headers })).json();
  test.skip(!allowed.interfaces.some((i: { id: string }) => i.id === 'wireguard'), 'this server has no guest network');
  const made = await request.post('/api/v3/persistent_desktop', { headers, data: { template_id: RDP_TEMPLATE_ID, name: NAME } });
  expect(made.ok()).toBe(true);
  const { id } = (await made.json()) as { id: string };
  try {
    await signInAs(page, ADMIN);
    const card = page.locator(`[data-testid=desktop-card][data-desktop-id="${id}"]`);
    await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
    await card.getByTestId('desktop-action-start').click();
    await expect(card.getByTestId('desktop-ip')).toBeVisible({ timeout: scaled(240_000) });
    await expect(card).toHaveAttribute('data-state', 'started');
    await expect(card.getByTestId('desktop-ip')).toContainText(en.desktops.address.replace(' {{ip}}', ''));
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'guest-network-card');
    // In Catalan, then back (the choice is saved for the user).
    await chooseLanguage(page, 'ca-ES');
    await expect(card.getByTestId('desktop-ip')).toContainText(ca.desktops.address.replace(' {{ip}}', ''));
    await shot(page, 'guest-network-card-ca');
    await chooseLanguage(page, 'en-US');
    await expect(card.getByTestId('desktop-ip')).toContainText(en.desktops.address.replace(' {{ip}}', ''));
    await page.setViewportSize({ width: 390, height: 844 });
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'guest-network-card-phone');
  } finally {
    // The page's sign-in ended the API session (one session per user): a fresh one, which ends the page's.
    headers.authorization = `Bearer ${await apiToken(request, ADMIN)}`;
    for (let i = 0; i < 2; i++) await request.get(`/api/v3/desktop/stop/${id}`, { headers });
    await expect.poll(async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((d) => d.id === id)?.state, { timeout: scaled(60_000) }).toBe('Stopped');
    await request.delete(`/api/v3/desktop/${id}`, { headers });
  }
});

// The journey of issue 14: a user makes a desktop of the "Debian desktop (RDP)" template, starts it,
// opens it by RDP in the browser (typing reaches the guest, reopening reconnects) and with FreeRDP
// through the portal's RD Gateway. The guest tells what it received on its serial console, which
// the server keeps under its data directory.
const root = join(import.meta.dirname, '..', '..');
const dataDir = process.env.E2E_DATA_DIR ?? join(root, '.tmp', 'e2e-data');
const serial = (id: string) => {
  const file = join(dataDir, 'run', id, 'serial.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};
const hasFreerdp = existsSync('/usr/bin/xfreerdp') && existsSync('/usr/bin/xvfb-run') && existsSync('/usr/bin/xwd');

async function hasGuestNetwork(request: APIRequestContext, token: string) {
  const allowed = await (await request.get('/api/v3/user/hardware/allowed', { headers: { authorization: `Bearer ${token}` } })).json();
  return (allowed.interfaces as { id: string }[]).some((i) => i.id === 'wireguard');
}

async function typeInto(viewer: Page, id: string, line: string) {
  await expect(viewer.getByTestId('rdp-viewer')).toHaveAttribute('data-state', 'connected', { timeout: scaled(120_000) });
  await expect.poll(() => litPixels(viewer), { timeout: scaled(60_000) }).toBeGreaterThan(2_000);
  await viewer.locator('iron-remote-desktop canvas').click({ position: { x: 300, y: 300 } });
  await viewer.keyboard.type(line, { delay: 50 });
  await viewer.keyboard.press('Enter');
  await expect.poll(() => serial(id), { timeout: scaled(60_000) }).toContain(`RDP-TYPED ${line}`);
}

test('a user opens the Debian desktop (RDP) in the browser, again after closing it, and with FreeRDP through the gateway', async ({ page, context, request }) => {
  test.setTimeout(scaled(12 * 60_000));
  const person = `rdp-user-${Date.now().toString(36)}`;
  await freshUser(request, person);
  test.skip(!(await hasGuestNetwork(request, await apiToken(request, person))), 'this server has no guest network');
  const work = mkdtempSync(join(tmpdir(), 'rdp-journey-'));
  let id = '';
  try {
    await signInAs(page, person);
    await page.getByTestId('new-desktop').first().click();
    await page.locator('[data-testid=new-desktop-template][data-template-name="Debian desktop (RDP)"]').click();
    await page.getByTestId('new-desktop-name').fill('Remote lab');
    // The template's RDP viewers come ticked.
    await expect(page.getByTestId('viewer-browser_rdp').getByRole('checkbox')).toBeChecked();
    await expect(page.getByTestId('viewer-file_rdpgw').getByRole('checkbox')).toBeChecked();
    await page.getByTestId('new-desktop-create').click();
    await expect(page).toHaveURL(/\/desktops$/);
    const card = page.locator('[data-testid=desktop-card][data-name="Remote lab"]');
    await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: scaled(60_000) });
    id = (await card.getAttribute('data-desktop-id'))!;

    // Started, it waits for its address (the RDP viewers not offered yet), then shows it.
    await card.getByTestId('desktop-action-start').click();
    await expect(card).toHaveAttribute('data-state', 'waitingip', { timeout: scaled(120_000) });
    await shot(page, 'rdp-journey-waiting-ip');
    await expect(card.getByTestId('desktop-ip')).toBeVisible({ timeout: scaled(300_000) });
    await expect(card).toHaveAttribute('data-state', 'started');
    await expect.poll(() => serial(id), { timeout: scaled(180_000) }).toContain('RDP-DESKTOP READY');

    // Open with → RDP in the browser: the session, signed in with the desktop's guest credentials.
    await card.getByTestId('desktop-viewers').click();
    const [viewer] = await Promise.all([context.waitForEvent('page'), page.getByTestId('viewer-option-browser-rdp').click()]);
    await expect(viewer).toHaveURL(/\/rdp/);
    await typeInto(viewer, id, `echo first${Date.now()}`);
    await shot(viewer, 'rdp-journey-browser');
    await viewer.close();

    // Reopened from the card (the last choice is its main button now): the same session.
    const sessions = serial(id).match(/RDP-SESSION started/g)?.length;
    await expect(card.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'browser-rdp');
    const [again] = await Promise.all([context.waitForEvent('page'), card.getByTestId('desktop-open').click()]);
    await typeInto(again, id, `echo again${Date.now()}`);
    expect(serial(id).match(/RDP-SESSION started/g)?.length).toBe(sessions);
    await again.close();

    // Open with → RDP gateway: a .rdp file that FreeRDP opens through the portal's gateway.
    if (hasFreerdp) {
      await card.getByTestId('desktop-viewers').click();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('viewer-option-file-rdpgw').click()]);
      // Named by the desktop and the kind (a desktop has two .rdp files: through the gateway, through the VPN).
      expect(download.suggestedFilename()).toMatch(/-rdpgw\.rdp$/);
      const file = join(work, 'desktop.rdp');
      await download.saveAs(file);
      expect(readFileSync(file, 'utf8')).toMatch(/^gatewayaccesstoken:s:/m);
      mkdirSync(join(root, 'artifacts', 'screenshots'), { recursive: true });
      const screen = await xfreerdpScreen(file, {
        work,
        png: join(root, 'artifacts', 'screenshots', 'rdp-journey-xfreerdp.png'),
        waitMs: 120_000,
        // The session's terminal (white) over a large part of FreeRDP's screen.
        drawn: (rgb) => countPixels(rgb, (r, g, b) => r > 240 && g > 240 && b > 240) > 150_000,
      });
      expect(screen.drawn, screen.log).toBe(true);
    }
    expect(serial(id)).not.toMatch(/RDP-SESSION ended/);
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (id) {
      // The page's sign-in holds the person's session: a fresh one for the clean-up (which ends the page's).
      const headers = { authorization: `Bearer ${await apiToken(request, person)}` };
      for (let i = 0; i < 2; i++) await request.get(`/api/v3/desktop/stop/${id}`, { headers });
      await expect
        .poll(async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((d) => d.id === id)?.state, { timeout: scaled(60_000) })
        .toBe('Stopped');
      await request.delete(`/api/v3/desktop/${id}`, { headers });
    }
  }
});
