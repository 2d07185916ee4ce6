import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/admin-system/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/admin-system/ca.json' with { type: 'json' };
import { chooseLanguage, scaled, shot, signInAs } from './support';

// Backups from the console (issue 29): the admin sees when the last backup was made, makes one and
// follows its progress, and finds it among the backups kept (downloadable).

const T = en.admin_system.backups;

test('the admin makes a backup from the console and sees its time; phone width and Catalan too', async ({ page }) => {
  test.setTimeout(scaled(180_000));
  await signInAs(page, 'admin');
  await page.goto('/isard-admin/backups');
  await expect(page.getByRole('heading', { name: T.heading, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
  const card = page.getByTestId('backup-card');
  await expect(card.getByTestId('backup-last')).toBeVisible();
  await shot(page, 'admin-backups-before');

  await card.getByTestId('backup-start').click();
  // Made by the running server as a job: its time appears once it is whole, with a row to download it.
  await expect(card.getByTestId('backup-last')).toHaveText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/, { timeout: scaled(90_000) });
  await expect(page.getByTestId('backup-row').first()).toBeVisible();
  await expect(page.getByTestId('backup-progress')).toHaveCount(0);
  await shot(page, 'admin-backups');

  const download = page.waitForEvent('download');
  await page.getByTestId('backup-row').first().getByRole('button', { name: /download/i }).click();
  expect((await download).suggestedFilename()).toMatch(/^backup-.*\.tar\.gz$/);

  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, 'admin-backups-phone');
  await page.setViewportSize({ width: 1280, height: 800 });
  // The admin's language is saved on the server: put back, or every later journey of the admin reads Catalan.
  await chooseLanguage(page, 'ca-ES');
  try {
    await expect(page.getByRole('heading', { name: ca.admin_system.backups.heading, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
    await shot(page, 'admin-backups-ca');
  } finally {
    await chooseLanguage(page, 'en-US');
  }
});
