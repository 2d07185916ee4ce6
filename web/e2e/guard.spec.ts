import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { scaled, shot, signInAs } from './support';

test.describe('access guard', () => {
  test('without a session every guarded page goes to sign in', async ({ page }) => {
    for (const path of ['/', '/desktops', '/profile']) {
      await page.goto(path);
      await expect(page).toHaveURL(/\/login$/);
    }
    await expect(page).toHaveTitle(`${en.app.title} · ${en.routes.login}`);
  });

  test('a signed-in user on /login goes to the desktops', async ({ page }) => {
    await signInAs(page, 'advanced');
    await page.goto('/login');
    await expect(page).toHaveURL(/\/desktops$/);
  });

  test('a removed session cookie signs out within a second or two', async ({ page, context }) => {
    await signInAs(page, 'manager');
    await context.clearCookies();
    await expect(page).toHaveURL(/\/login$/, { timeout: scaled(5_000) });
  });

  test('reset-password without a token or session asks for the link', async ({ page }) => {
    await page.goto('/reset-password');
    await expect(page).toHaveURL(/\/login$/);
    await page.goto('/reset-password?token=abc');
    await expect(page.getByRole('heading', { name: en.reset_password.heading })).toBeVisible();
  });

  test('an unknown route shows not found with a way back', async ({ page }) => {
    await signInAs(page, 'user');
    await page.goto('/no/such/page');
    await expect(page.getByTestId('not-found-text')).toContainText('/no/such/page');
    await expect(page).toHaveTitle(`${en.app.title} · ${en.routes.not_found}`);
    await shot(page, 'not-found');
    await page.getByTestId('not-found-back').click();
    await expect(page).toHaveURL(/\/desktops$/);
  });

  test('error pages say what the spec says', async ({ page }) => {
    for (const code of ['401', '403', '500'] as const) {
      await page.goto(`/error/${code}`);
      await expect(page.getByTestId('error-text')).toHaveText(en.error_page[code]);
    }
    await shot(page, 'error-500');
  });
});
