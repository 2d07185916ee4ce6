import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminCall, apiToken, chooseProfileLanguage, freshUser, notice, signInAs, windowShot } from './support';

// The user VPN (navbar download, the profile's dialog with its reset) and the bastion (the admin's
// switch, the desktop menu's dialog with the keys and the addresses), as a person uses them.

const api = async (request: APIRequestContext, token: string, method: string, path: string, data?: unknown) =>
  request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });

const publicKey = () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnb-e2e-'));
  try {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'me@laptop', '-f', join(dir, 'k')]);
    return readFileSync(join(dir, 'k.pub'), 'utf8').trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

async function desktopOf(request: APIRequestContext, username: string) {
  const token = await apiToken(request, username);
  const mine = (await (await api(request, token, 'GET', '/user/desktops')).json()) as { id: string; name: string }[];
  if (mine[0]) return mine[0];
  const templates = (await (await api(request, token, 'GET', '/user/templates/allowed/all')).json()) as { id: string; name: string }[];
  const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0]!;
  const made = await api(request, token, 'POST', '/persistent_desktop', { name: 'Bastion desktop', template_id: template.id });
  expect(made.ok()).toBe(true);
  return { id: ((await made.json()) as { id: string }).id, name: 'Bastion desktop' };
}

async function openBastion(page: Page, name: string) {
  const card = page.getByTestId('desktop-card').filter({ hasText: name });
  await expect(card).toBeVisible();
  await card.getByTestId('desktop-menu').click();
  await page.getByTestId('desktop-bastion').click();
  await expect(page.getByTestId('bastion-dialog')).toBeVisible();
}

test.describe('vpn and bastion', () => {
  test('the VPN: the navbar downloads the file, the profile explains it and resets it', async ({ page, request }) => {
    await freshUser(request, 'vpnb-user');
    // (One session per person: API calls as this user come before the page signs in.)
    const config = await (await api(request, await apiToken(request, 'vpnb-user'), 'GET', '/user/vpn/config')).json();
    await signInAs(page, 'vpnb-user');
    if (config.description_code) {
      // No guest network on this machine: the navbar's download says so, the dialog too.
      await page.getByTestId('nav-vpn').click();
      await expect(page.getByText(/could not be downloaded/)).toBeVisible();
      await page.goto('/profile/vpn');
      await page.getByTestId('vpn-download').click();
      await expect(page.getByTestId('vpn-unavailable')).toBeVisible();
      await windowShot(page, 'vpn-profile-unavailable');
      return;
    }
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('nav-vpn').click()]);
    expect(download.suggestedFilename()).toBe('isard-vpn.conf');
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text).toMatch(/^\[Interface\]\nAddress = [\d.]+\nPrivateKey = /);

    await page.goto('/profile/vpn');
    await expect(page.getByTestId('vpn-panel')).toBeVisible();
    await windowShot(page, 'vpn-profile-en');
    await page.getByTestId('vpn-reset').click();
    await windowShot(page, 'vpn-profile-reset-confirm');
    await page.getByTestId('vpn-reset-confirm').click();
    await expect(notice(page, 'The VPN was reset: download the new file.')).toBeVisible();
    const [again] = await Promise.all([page.waitForEvent('download'), page.getByTestId('vpn-download').click()]);
    const renewed = readFileSync((await again.path())!, 'utf8');
    expect(renewed.match(/PrivateKey = (.*)/)![1]).not.toBe(text.match(/PrivateKey = (.*)/)![1]);

    // The same dialog in Catalan, on a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/profile');
    await chooseProfileLanguage(page, 'Català');
    await page.goto('/profile/vpn');
    await expect(page.getByTestId('vpn-panel')).toBeVisible();
    await expect(page.getByTestId('vpn-download')).toHaveText('Descarrega el fitxer VPN');
    await windowShot(page, 'vpn-profile-ca-phone');
    // A failure of the download (the server cannot give a file): the unavailable notice.
    await page.route('**/api/v3/user/vpn/config', (r) =>
      r.fulfill({ status: 428, contentType: 'application/json', body: JSON.stringify({ error: 'precondition_required', msg: 'x', description: 'x', description_code: 'no_wireguard_keys', params: null }) }),
    );
    await page.getByTestId('vpn-download').click();
    await expect(page.getByTestId('vpn-unavailable')).toBeVisible();
    await windowShot(page, 'vpn-profile-error-ca-phone');
  });

  test('the bastion: the admin turns it on; the owner pastes keys (a bad one is refused with its line) and sees the addresses', async ({ page, request, browser }) => {
    await adminCall(request, 'PUT', '/admin/settings/bastion', { enabled: false });
    await freshUser(request, 'vpnb-dev');
    const desk = await desktopOf(request, 'vpnb-dev');

    // Off: no bastion entry in the desktop menu.
    await signInAs(page, 'vpnb-dev');
    const card = page.getByTestId('desktop-card').filter({ hasText: desk.name });
    await card.getByTestId('desktop-menu').click();
    await expect(page.getByTestId('desktop-reset')).toBeVisible();
    await expect(page.getByTestId('desktop-bastion')).toHaveCount(0);
    await page.keyboard.press('Escape');

    // The admin's switch, in a browser of their own.
    const admin = await browser.newPage();
    await signInAs(admin, 'admin');
    await admin.goto('/isard-admin/settings');
    const sw = admin.getByTestId('bastion-card');
    await expect(sw).toBeVisible();
    await admin.getByTestId('bastion-setting-enabled').check();
    await admin.getByTestId('bastion-card-save').click();
    await expect(admin.getByTestId('bastion-card-save')).toBeDisabled(); // saved: nothing left to save
    await sw.scrollIntoViewIfNeeded();
    await expect(admin.getByTestId('vpn-card')).toBeVisible();
    // The two cards as the admin sees them (the console's frame is fixed: a whole-page shot would cut it).
    await admin.getByTestId('bastion-card').screenshot({ path: join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots', 'bastion-admin-setting.png') });
    await admin.getByTestId('vpn-card').screenshot({ path: join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots', 'vpn-admin-setting.png') });
    await admin.close();
    await expect.poll(async () => (await adminCall(request, 'GET', '/admin/settings/bastion')).enabled).toBe(true);

    // The owner's page learns the configuration again (it is kept a minute).
    await page.reload();
    await openBastion(page, desk.name);
    await windowShot(page, 'bastion-dialog-empty-en');
    await page.getByTestId('bastion-ssh-enabled').check();
    const key = publicKey();
    await page.getByTestId('bastion-keys').fill(`# my laptop\n${key}\nssh-rsa this-is-not-a-key`);
    await page.getByTestId('bastion-save').click();
    await expect(page.getByText('Line 3 is not a valid public SSH key.')).toBeVisible();
    await windowShot(page, 'bastion-dialog-bad-key-en');
    await page.getByTestId('bastion-keys').fill(`# my laptop\n${key}`);
    await page.getByTestId('bastion-http-enabled').check();
    await page.getByTestId('bastion-save').click();
    await expect(notice(page, 'Bastion settings saved')).toBeVisible();

    await openBastion(page, desk.name);
    await expect(page.getByTestId('bastion-keys')).toHaveValue(key);
    await expect(page.getByTestId('bastion-ssh-command')).toHaveValue(/^ssh [0-9a-f-]{36}@bastion\.localhost -p \d+$/);
    await expect(page.getByTestId('bastion-http-address')).toHaveValue(/^http:\/\/[0-9a-f-]+\.[0-9a-f]{12}\.bastion\.localhost:\d+\/$/);
    await windowShot(page, 'bastion-dialog-info-en');
    await page.keyboard.press('Escape');

    // French, on a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/profile');
    await chooseProfileLanguage(page, 'Français');
    await page.goto('/desktops');
    await openBastion(page, desk.name);
    await expect(page.getByText('Autoriser SSH à travers le bastion')).toBeVisible();
    await windowShot(page, 'bastion-dialog-fr-phone');
    await page.keyboard.press('Escape');
    await page.goto('/profile');
    await chooseProfileLanguage(page, 'English');
    await adminCall(request, 'PUT', '/admin/settings/bastion', { enabled: false });
  });
});
