import { expect, test, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { notice, shot, signInAs, stillScreen } from './support';

// Desktops no other journey uses: the manager's, student02's and the administrator's "Demo desktop".
// The manager deletes hers and restores it; student02 deletes his for good; the administrator
// empties the bin.

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);
const entry = (page: Page, name: string) => page.locator(`[data-testid=bin-row][data-name="${name}"]`);

async function deleteFromDesktops(page: Page, name: string) {
  const c = card(page, name);
  await expect(c).toBeVisible();
  await c.getByTestId('desktop-menu').click();
  await page.getByTestId('desktop-delete').click();
  await page.getByTestId('confirm-delete').click();
  await expect(notice(page, `“${name}” deleted`)).toBeVisible();
  // What the server says now (the desktops screen's own cache is not what this journey checks).
  await page.reload();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.desktops.heading);
  await expect(c).toHaveCount(0);
}

async function openBin(page: Page) {
  await page.getByTestId('navbar').getByTestId('nav-recycleBins').click();
  await expect(page).toHaveURL(/\/recycleBins$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.recycle_bin.heading);
}

test.describe.configure({ mode: 'serial' });

test.describe('recycle bin', () => {
  test('an empty bin says so, with the retention in hours', async ({ page }) => {
    await signInAs(page, 'student02');
    await openBin(page);
    await expect(page.getByTestId('empty-state')).toContainText(en.recycle_bin.empty_title);
    await expect(page.getByTestId('bin-cutoff')).toHaveText('Items in the recycle bin are deleted for good 1 hour after they were deleted.');
    await expect(page.getByTestId('bin-empty')).toBeDisabled();
    await shot(page, 'recycle-bin-empty');
  });

  test('a delete is undone from its notice: the desktop comes back from the bin', async ({ page }) => {
    await signInAs(page, 'admin');
    const c = card(page, 'Demo desktop');
    await expect(c).toBeVisible();
    await c.getByTestId('desktop-menu').click();
    await page.getByTestId('desktop-delete').click();
    await page.getByTestId('confirm-delete').click();
    const deleted = notice(page, `“Demo desktop” deleted`);
    await expect(deleted).toBeVisible();
    await expect(c).toHaveCount(0);
    await page.locator('.mantine-Notification-root', { hasText: '“Demo desktop” deleted' }).getByTestId('notify-undo').click();
    await expect(notice(page, '“Demo desktop” is back')).toBeVisible();
    await expect(c).toBeVisible();
    await page.reload();
    await expect(c).toBeVisible();
    await expect(page.getByTestId('navbar').getByTestId('bin-counter')).toHaveCount(0);
  });

  test('a deleted desktop waits in the bin, with a counter, its details, and comes back on restore', async ({ page }) => {
    await signInAs(page, 'manager');
    await expect(page.getByTestId('navbar').getByTestId('bin-counter')).toHaveCount(0);
    await deleteFromDesktops(page, 'Demo desktop');
    // The counter in the navigation follows live.
    await expect(page.getByTestId('navbar').getByTestId('bin-counter')).toHaveText('1');

    await openBin(page);
    const demo = entry(page, 'Demo desktop');
    await expect(demo).toBeVisible();
    await expect(demo).toContainText(en.recycle_bin.types.desktop);
    await expect(demo).toContainText('Marta Manager');
    await expect(demo).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d/);
    await expect(demo).toContainText(/0(\.\d+)? GB/);
    await expect(page.getByTestId('bin-count')).toHaveText('1 item');
    await page.mouse.move(10, 700);
    await shot(page, 'recycle-bin-list');

    await demo.getByTestId('bin-name').click();
    await expect(page).toHaveURL(/\/recyclebin\/[\w-]+$/);
    await expect(page.getByTestId('bin-detail-name')).toHaveText('Demo desktop');
    await expect(page.getByTestId('bin-detail-status')).toHaveText(en.recycle_bin.statuses.recycled);
    await expect(page.getByTestId('bin-detail-domain')).toContainText('Marta Manager');
    await expect(page.getByTestId('bin-detail-storage')).toContainText('0.06 GB');
    await shot(page, 'recycle-bin-detail');

    await page.getByTestId('bin-detail-restore').click();
    // Asked first, as from the list.
    await expect(page.getByRole('dialog')).toContainText(en.recycle_bin.confirm.restore_title);
    await page.getByTestId('confirm-bin-restore').click();
    await expect(page).toHaveURL(/\/recycleBins$/);
    await expect(notice(page, '“Demo desktop” restored')).toBeVisible();
    await expect(page.getByTestId('empty-state')).toContainText(en.recycle_bin.empty_title);
    await expect(page.getByTestId('navbar').getByTestId('bin-counter')).toHaveCount(0);
    await page.getByTestId('navbar').getByTestId('nav-desktops').click();
    await expect(card(page, 'Demo desktop').getByTestId('desktop-state')).toHaveText(en.desktops.states.stopped);
    await shot(page, 'recycle-bin-restored');
  });

  test('deletes an entry for good, after confirming', async ({ page }) => {
    await signInAs(page, 'student02');
    await deleteFromDesktops(page, 'Demo desktop');
    await openBin(page);
    const demo = entry(page, 'Demo desktop');
    await demo.getByTestId('bin-delete').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(en.recycle_bin.confirm.delete_title);
    await expect(dialog).toContainText('“Demo desktop” and its disks will be deleted for good.');
    await stillScreen(page);
    await shot(page, 'recycle-bin-delete-confirm');
    await page.getByTestId('confirm-bin-delete').click();
    await expect(demo).toHaveCount(0);
    await expect(page.getByTestId('empty-state')).toBeVisible();
    await page.getByTestId('navbar').getByTestId('nav-desktops').click();
    await expect(page.getByTestId('empty-state')).toContainText(en.desktops.empty_title);
  });

  test('empties the bin', async ({ page }) => {
    await signInAs(page, 'admin');
    await deleteFromDesktops(page, 'Demo desktop');
    await openBin(page);
    await expect(entry(page, 'Demo desktop')).toBeVisible();
    await page.getByTestId('bin-empty').click();
    await expect(page.getByRole('dialog')).toContainText(en.recycle_bin.confirm.empty_title);
    await stillScreen(page);
    await shot(page, 'recycle-bin-empty-confirm');
    await page.getByTestId('confirm-bin-empty').click();
    await expect(page.getByTestId('empty-state')).toContainText(en.recycle_bin.empty_title);
    await expect(notice(page, en.recycle_bin.notify.emptied)).toBeVisible();
  });
});
