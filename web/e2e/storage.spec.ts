import { expect, test, type Page } from '@playwright/test';
import enCore from '../src/i18n/locales/en.json' with { type: 'json' };
import enContent from '../src/i18n/locales/content/en.json' with { type: 'json' };
import { loginPage, notice, PASSWORD, scaled, shot, signInAs, stillScreen } from './support';

/** The English texts these journeys read: the core catalogue and the content area (templates, media, disks, the desktop form). */
const en = { ...enCore, ...enContent };

// `advanced` (Teo) sees the disks of his desktops with used/total and grows the Demo desktop's disk;
// `user` may look but not grow; the researcher of the other category has no disks at all.

const diskOf = (page: Page, desktop: string) =>
  page.locator('[data-testid=storage-row]', { has: page.locator('[data-testid=storage-desktop]', { hasText: desktop }) });

async function openStorage(page: Page) {
  await page.getByTestId('navbar').getByTestId('nav-storage').click();
  await expect(page).toHaveURL(/\/userstorage$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.storage.heading);
}

test.describe.configure({ mode: 'serial' });

test.describe('storage', () => {
  test('lists the disks with used / total in GB and grows one', async ({ page }) => {
    await signInAs(page, 'advanced');
    await openStorage(page);
    const demo = diskOf(page, 'Demo desktop');
    await expect(demo).toBeVisible();
    // The demo guest's disk: 64 MiB the guest sees, a few KB used on the server.
    await expect(demo.getByTestId('storage-size')).toHaveText('< 0.01 / 0.06 GB');
    await expect(demo.getByTestId('storage-percent')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('storage-summary')).toBeVisible();
    await page.mouse.move(10, 700);
    await shot(page, 'storage-list');

    await demo.getByTestId('storage-increase').click();
    const modal = page.getByRole('dialog');
    await expect(modal).toContainText(en.storage.increase.title);
    await stillScreen(page);
    await expect(modal.getByTestId('increase-current')).toHaveText('0.06 GB');
    // Only administrators choose the priority.
    await expect(modal.getByTestId('increase-priority').locator('input').first()).toBeDisabled();
    // Whole GB to add (the call takes them): 2 more than the 0.06 GB it has.
    await expect(modal.getByTestId('increase-size')).toHaveValue('1 GB');
    await modal.getByTestId('increase-size').fill('2');
    await expect(modal.getByTestId('increase-result')).toHaveText('2.06 GB');
    await modal.getByTestId('increase-size').blur();
    await shot(page, 'storage-increase-modal');
    await modal.getByTestId('increase-submit').click();
    await expect(modal).toBeHidden();

    // The row follows the job live: its progress (when caught), then the new size.
    const progress = demo.getByTestId('storage-operation');
    if (await progress.isVisible().catch(() => false)) await shot(page, 'storage-increase-progress');
    await expect(demo.getByTestId('storage-size')).toHaveText(/\/ 2\.06 GB$/, { timeout: scaled(20_000) });
    await expect(progress).toHaveCount(0);
    await expect(notice(page, 'The disk now has 2.06 GB')).toBeVisible();
    await shot(page, 'storage-increased');

    // The desktop on it is back to stopped, ready to start.
    await page.getByTestId('navbar').getByTestId('nav-desktops').click();
    const card = page.locator('[data-testid=desktop-card][data-name="Demo desktop"]');
    await expect(card.getByTestId('desktop-state')).toHaveText(en.desktops.states.stopped);
  });

  test('the user role sees its disks but cannot grow them', async ({ page }) => {
    await signInAs(page, 'user');
    await openStorage(page);
    await expect(diskOf(page, 'Lab desktop')).toBeVisible();
    await expect(page.getByTestId('storage-increase')).toHaveCount(0);
    // …and is told why, and whom to ask.
    await expect(page.getByTestId('storage-increase-ask')).toHaveText(en.storage.increase.ask);
    await expect(page.getByTestId('storage-quota')).toContainText(en.storage.summary.quota);
    await page.mouse.move(10, 700);
    await shot(page, 'storage-user');
  });

  test('someone without disks sees the empty state', async ({ page }) => {
    const login = loginPage(page);
    await login.open();
    await login.signIn('researcher', PASSWORD, 'Research Lab');
    await expect(page).toHaveURL(/\/desktops$/);
    await openStorage(page);
    await expect(page.getByTestId('empty-state')).toContainText(en.storage.empty_title);
    await shot(page, 'storage-empty');
  });
});
