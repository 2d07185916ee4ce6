import { expect, test, type Page } from '@playwright/test';
import enCore from '../src/i18n/locales/en.json' with { type: 'json' };
import enContent from '../src/i18n/locales/content/en.json' with { type: 'json' };
import { apiToken, scaled, shot as fullShot, signInAs, stillScreen } from './support';

/** The English texts these journeys read: the core catalogue and the content area (templates, media, disks, the desktop form). */
const en = { ...enCore, ...enContent };

/** The whole page in one window-sized shot: the fixed header, modals and their overlay sit where a person sees them. */
const shot = async (page: Page, name: string) => {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, window.innerHeight));
  await page.setViewportSize({ width: size.width, height });
  await page.evaluate(() => window.scrollTo(0, 0));
  await stillScreen(page);
  await fullShot(page, name);
  await page.setViewportSize(size);
};

// `advanced` (Teo, no quota: the fallback 128 / 128 / 500) creates a desktop of his own from the
// Demo Linux template with chosen hardware, then edits it. `student04` (Students 1B, 3 desktops at
// most) meets the quota dialog. Other journeys do not use these desktops.

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

test.describe('new desktop and editing', () => {
  test('advanced creates a desktop from a template within the quota, then edits its hardware', async ({ page }) => {
    await signInAs(page, 'advanced');
    await page.getByTestId('new-desktop').click();
    await expect(page).toHaveURL(/\/desktops\/new$/);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.new_desktop.heading);
    const demo = page.locator('[data-testid=new-desktop-template][data-template-name="Demo Linux"]');
    await expect(demo).toBeVisible();
    await expect(demo.locator('img')).toHaveJSProperty('complete', true);

    // The search filters the cards.
    await page.getByTestId('new-desktop-search').fill('no such thing');
    await expect(page.getByTestId('new-desktop-no-match')).toBeVisible();
    await page.getByTestId('new-desktop-search').fill('demo');
    await demo.click();
    await expect(demo).toHaveAttribute('aria-checked', 'true');
    await expect(page.getByTestId('new-desktop-summary')).toHaveText('Demo Linux');
    await shot(page, 'new-desktop-picker');

    // Name rules as the spec words them.
    await page.getByTestId('new-desktop-name').fill('ab');
    await page.getByTestId('new-desktop-create').click();
    await expect(page.getByText(en.forms.min_length.replace('{{min}}', '4').replace('{{length}}', '2'))).toBeVisible();
    await page.getByTestId('new-desktop-name').fill('Networks lab');
    await page.getByTestId('new-desktop-description').fill('Routing exercises, week 3');

    // Choosing an RDP viewer brings the wireguard network, and says so.
    await page.getByTestId('viewer-browser_rdp').click();
    await expect(page.getByTestId('wireguard-note')).toHaveText(en.domain_edit.wireguard_added);
    await page.getByTestId('viewer-browser_rdp').click();
    await expect(page.getByTestId('wireguard-note')).toBeHidden();

    // Hardware in the spec's steps, bounded by the quota (the fallback for Teo).
    await page.getByTestId('new-desktop-advanced').click();
    await expect(page.getByText(en.domain_edit.up_to_gb.replace('{{value}}', '128')).first()).toBeVisible();
    await page.getByTestId('hw-vcpus').fill('2');
    await page.getByTestId('hw-memory').fill('1.5');
    await page.getByTestId('hw-memory').blur();
    await page.getByTestId('hw-disk').fill('2');
    await page.getByTestId('hw-disk').blur();
    await expect(page.getByTestId('new-desktop-summary').locator('xpath=..')).toContainText('2 vCPU · 1.5 GB RAM · 2 GB');
    await shot(page, 'new-desktop-form');

    await page.getByTestId('new-desktop-create').click();
    await expect(page).toHaveURL(/\/desktops$/);
    const mine = card(page, 'Networks lab');
    await expect(mine).toBeVisible();
    await expect(mine.getByTestId('desktop-hardware')).toContainText('2 vCPUs');
    await expect(mine.getByTestId('desktop-hardware')).toContainText('1.5 GB RAM');
    await expect(mine).toHaveAttribute('data-state', 'stopped');

    // Edit: from the card's menu, only while stopped.
    await mine.getByTestId('desktop-menu').click();
    await page.getByTestId('desktop-edit').click();
    await expect(page).toHaveURL(/\/domain\/edit\?id=/);
    await expect(page.getByTestId('plain-text-warning')).toHaveText(en.domain_edit.plain_text_warning);
    await expect(page.getByTestId('edit-name')).toHaveValue('Networks lab');
    await expect(page.getByTestId('hw-memory')).toHaveValue('1.5 GB');
    await page.getByTestId('hw-memory').fill('2');
    await page.getByTestId('hw-memory').blur();
    await page.getByTestId('hw-vcpus').fill('3');
    await page.getByTestId('edit-stock-image').nth(4).click();
    await expect(page.getByTestId('edit-image-preview')).toHaveAttribute('src', '/assets/img/desktops/stock/5.svg');
    await page.getByTestId('edit-username').fill('teo');
    await page.getByTestId('edit-password').fill('routing-42');
    // Removing wireguard after choosing RDP takes the RDP viewer away again and restores the default credentials.
    await page.getByTestId('viewer-browser_rdp').click();
    await expect(page.getByTestId('edit-net-wireguard')).toBeChecked();
    await page.getByTestId('edit-net-wireguard').click();
    await expect(page.getByTestId('viewer-browser_rdp').getByRole('checkbox')).not.toBeChecked();
    await expect(page.getByTestId('edit-username')).toHaveValue('isard');
    await page.getByTestId('edit-username').fill('teo');
    await page.getByTestId('edit-password').fill('routing-42');
    await page.waitForFunction(() => [...document.images].every((i) => i.complete));
    await expect(page.locator('.mantine-Notification-root')).toHaveCount(0, { timeout: scaled(5_000) });
    await shot(page, 'domain-edit');
    await page.getByTestId('edit-save').click();
    await expect(page).toHaveURL(/\/desktops$/);
    await expect(mine.getByTestId('desktop-hardware')).toContainText('3 vCPUs');
    await expect(mine.getByTestId('desktop-hardware')).toContainText('2 GB RAM');
  });

  test('over the quota, the new desktop screen says so once, its form disabled, and leads to the profile', async ({ page, request }) => {
    // Iker (Students 1B) may have 3 desktops; he has the demo one: two more fill it.
    const token = await apiToken(request, 'student04');
    const headers = { authorization: `Bearer ${token}` };
    const [demo] = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string }[];
    for (const name of ['Iker one', 'Iker two']) {
      const r = await request.post('/api/v3/persistent_desktop', { headers, data: { name, template_id: demo!.id } });
      expect(r.status()).toBe(200);
    }
    await signInAs(page, 'student04');
    await page.getByTestId('new-desktop').click();
    // One message (the page's banner, no dialog over it), and a form that cannot be used.
    const banner = page.getByTestId('new-desktop-quota');
    await expect(banner).toContainText(en.errors.desktop_new_user_quota_exceeded);
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(page.getByTestId('new-desktop-form')).toHaveAttribute('disabled', '');
    await expect(page.getByTestId('new-desktop-name')).toBeDisabled();
    await expect(page.getByTestId('new-desktop-create')).toBeDisabled();
    await shot(page, 'new-desktop-quota');
    await banner.getByRole('button', { name: en.quota_dialog.go_profile }).click();
    await expect(page).toHaveURL(/\/profile$/);
  });
});
