import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { adminCall, shot, signInAs } from './support';

test.describe('maintenance', () => {
  test('users are sent to the maintenance page with its text, and back when it ends', async ({ page, request }) => {
    await signInAs(page, 'user');
    await adminCall(request, 'PUT', '/admin/settings/maintenance', { enabled: true, title: 'Scheduled upgrade', body: 'We are back at 14:00.' });
    try {
      await page.goto('/profile');
      await expect(page).toHaveURL(/\/maintenance$/);
      await expect(page.getByRole('heading', { name: 'Scheduled upgrade' })).toBeVisible();
      await expect(page.getByTestId('maintenance-body')).toHaveText('We are back at 14:00.');
      await shot(page, 'maintenance');
    } finally {
      await adminCall(request, 'PUT', '/admin/settings/maintenance', { enabled: false });
    }
    await page.getByRole('button', { name: en.maintenance.retry }).click();
    await expect(page).toHaveURL(/\/desktops$/);
  });
});

test.describe('profile', () => {
  test('shows the account, the language and the quota', async ({ page }) => {
    await signInAs(page, 'user');
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: en.nav.profile }).click();
    await expect(page).toHaveURL(/\/profile$/);
    await expect(page.getByText('Students 1A')).toBeVisible();
    await expect(page.getByTestId('quota-table')).toContainText(en.profile.quota_items.running);
    await shot(page, 'profile-user');
  });
});
