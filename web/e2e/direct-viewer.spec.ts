import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { scaled, shot, signInAs } from './support';

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

test.describe('direct viewer', () => {
  test('a direct link opens the desktop without signing in, until it is disabled', async ({ page, browser }) => {
    test.setTimeout(scaled(180_000));
    await signInAs(page, 'user');
    const lab = card(page, 'Lab desktop');
    await lab.getByTestId('desktop-menu').click();
    await page.getByTestId('desktop-direct-link').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(en.desktops.direct.explain);
    await expect(dialog.getByTestId('direct-link-url')).toHaveCount(0);

    // Enable: a link with a long random code.
    await dialog.getByTestId('direct-link-toggle').click();
    const url = dialog.getByTestId('direct-link-url');
    await expect(url).toHaveValue(/\/vw\/[\w-]{32,}$/);
    const first = await url.inputValue();
    // A new link replaces it (after a confirmation).
    await dialog.getByTestId('direct-link-reset').click();
    await dialog.getByTestId('direct-link-reset-confirm').click();
    await expect(url).not.toHaveValue(first);
    const link = await url.inputValue();
    expect(link.startsWith(new URL(page.url()).origin + '/vw/')).toBe(true);
    await shot(page, 'direct-link-modal');

    // Someone without an account opens it: the desktop starts and can be opened.
    const anon = await browser.newContext();
    const guest = await anon.newPage();
    await guest.goto(link);
    await expect(guest.getByTestId('direct-page')).toBeVisible({ timeout: scaled(60_000) });
    await expect(guest.getByTestId('direct-name')).toHaveText('Lab desktop');
    await expect(guest.getByTestId('desktop-state')).toHaveAttribute('data-state', 'started', { timeout: scaled(60_000) });
    await expect(guest).toHaveTitle(/^Lab desktop/);
    // The owner's card follows live, behind the dialog.
    await expect(lab).toHaveAttribute('data-state', 'started', { timeout: scaled(30_000) });
    await shot(guest, 'direct-viewer-page');

    const [viewer] = await Promise.all([anon.waitForEvent('page'), guest.getByTestId('direct-open-browser').click()]);
    await expect(viewer.locator('canvas')).toBeVisible({ timeout: scaled(20_000) });
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(20_000) });
    await expect(viewer.getByTestId('viewer-name')).toHaveText('Lab desktop');
    // Without a session there is no reconnect, only closing.
    await viewer.close();

    const [download] = await Promise.all([guest.waitForEvent('download'), guest.getByTestId('direct-download-spice').click()]);
    expect(readFileSync((await download.path())!, 'utf8').startsWith('[virt-viewer]')).toBe(true);

    // Stop from the direct page (forced if the guest is still booting); both sides see it.
    await guest.getByTestId('direct-stop').click();
    const stopped = guest.locator('[data-testid=desktop-state][data-state=stopped]');
    try {
      await expect(stopped).toBeVisible({ timeout: scaled(10_000) });
    } catch {
      await guest.getByTestId('direct-force-stop').click();
      await expect(stopped).toBeVisible({ timeout: scaled(30_000) });
    }
    await expect(guest.getByTestId('direct-start')).toBeVisible();
    await expect(guest.getByTestId('direct-open-browser')).toBeDisabled();
    await expect(lab).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });

    // Disabled: the same link is refused, clearly.
    await dialog.getByTestId('direct-link-toggle').click();
    await expect(url).toHaveCount(0);
    const other = await browser.newContext();
    const late = await other.newPage();
    await late.goto(link);
    await expect(late.getByTestId('direct-refused')).toBeVisible({ timeout: scaled(20_000) });
    await expect(late.getByTestId('direct-refused')).toContainText(en.direct.refused_title);
    await shot(late, 'direct-link-refused');
    await anon.close();
    await other.close();
  });

  test('an unknown code is refused', async ({ page }) => {
    await page.goto('/vw/this-code-does-not-exist-0123456789abcdef');
    await expect(page.getByTestId('direct-refused')).toBeVisible({ timeout: scaled(20_000) });
  });
});
