import { expect, test, type Page } from '@playwright/test';
import adminEn from '../src/i18n/locales/admin/en.json' with { type: 'json' };
import { scaled, seriousViolations, showAsSaved, shot, signInAs, stillScreen } from './support';

// Issue 28: the console's desktops table readable at 1,280 px. The person chooses its columns in
// "Columns" (kept in this browser: the same after a reload); the defaults fit 1,280 px with no
// sideways scroll, of the page or of the table; "Default columns" brings them back.

const SCHEME_KEY = 'mantine-color-scheme-value';
const header = (page: Page, field: string) => page.getByTestId(`desktops-sort-${field}`);
const columnBox = (page: Page, key: string) => page.getByTestId(`desktops-column-${key}`);

/** How far the page and the table reach past what shows (px): 0 when nothing scrolls sideways. */
async function overflow(page: Page) {
  return page.getByTestId('desktops-table').evaluate((table) => {
    const frame = table.closest('.mantine-Paper-root') as HTMLElement;
    return {
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      table: Math.max(0, Math.ceil(table.getBoundingClientRect().width - frame.clientWidth)),
    };
  });
}

async function openTable(page: Page) {
  await page.goto('/isard-admin/desktops');
  await expect(page.getByTestId('desktops-table')).toBeVisible({ timeout: scaled(30_000) });
  await expect(page.getByTestId('desktop-row').first()).toBeVisible();
}

async function useScheme(page: Page, scheme: 'light' | 'dark') {
  await page.evaluate(([key, value]) => localStorage.setItem(key, value), [SCHEME_KEY, scheme] as const);
}

/** The first desktop of each list page owned by someone with long names (another journey's people are named so): a cell ends in "…" rather than widening the table. */
async function longOwnerNames(page: Page) {
  await page.route('**/api/v3/admin/desktops?*', async (route) => {
    const res = await route.fetch();
    const body = (await res.json()) as { items: { user_name: string; username: string }[] };
    if (body.items[0]) Object.assign(body.items[0], { user_name: 'Maximiliane Wilhelmine von Hohenberg-Schwarzenfeld', username: 'e2e-migration-target-person-with-a-long-account-name' });
    await route.fulfill({ response: res, json: body });
  });
}

test('the desktops table: columns chosen, kept after a reload, and the defaults fit 1,280 px', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await signInAs(page, 'admin');
  await longOwnerNames(page);
  await openTable(page);

  // The defaults: the name, owner, category, state, uptime, where and memory; no sideways scroll.
  for (const field of ['name', 'owner', 'category', 'status', 'started', 'memory']) await expect(header(page, field)).toBeVisible();
  for (const field of ['vcpus', 'accessed']) await expect(header(page, field)).toHaveCount(0);
  expect(await overflow(page)).toEqual({ page: 0, table: 0 });
  await page.mouse.move(0, 0);
  await stillScreen(page);
  await shot(page, 'admin-desktops-columns-1280-light');

  // The chooser: a box per column, the name always shown.
  await page.getByTestId('desktops-columns').click();
  const menu = page.getByTestId('desktops-columns-menu');
  await expect(menu).toBeVisible();
  await expect(menu.getByText(adminEn.admin.common.columns_shown)).toBeVisible();
  await expect(columnBox(page, 'name')).toBeChecked();
  await expect(columnBox(page, 'name')).toBeDisabled();
  await expect(columnBox(page, 'owner')).toBeChecked();
  await expect(columnBox(page, 'vcpus')).not.toBeChecked();
  await stillScreen(page);
  expect(await seriousViolations(page)).toEqual([]);
  await shot(page, 'admin-desktops-columns-menu');
  await columnBox(page, 'owner').uncheck();
  await columnBox(page, 'vcpus').check();
  await columnBox(page, 'accessed').check();
  await page.keyboard.press('Escape');
  await expect(menu).toBeHidden();
  await expect(page.getByTestId('desktops-columns')).toBeFocused();
  await expect(header(page, 'owner')).toHaveCount(0);
  await expect(header(page, 'vcpus')).toBeVisible();
  await expect(header(page, 'accessed')).toBeVisible();

  // Kept in this browser: the same columns after a reload.
  await page.reload();
  await expect(page.getByTestId('desktops-table')).toBeVisible({ timeout: scaled(30_000) });
  await expect(header(page, 'owner')).toHaveCount(0);
  await expect(header(page, 'vcpus')).toBeVisible();
  await expect(header(page, 'accessed')).toBeVisible();
  expect((await overflow(page)).page).toBe(0);

  // Back to the defaults.
  await page.getByTestId('desktops-columns').click();
  await page.getByTestId('desktops-columns-default').click();
  await expect(columnBox(page, 'owner')).toBeChecked();
  await page.keyboard.press('Escape');
  await expect(header(page, 'owner')).toBeVisible();
  await expect(header(page, 'vcpus')).toHaveCount(0);
  await page.reload();
  await expect(header(page, 'owner')).toBeVisible({ timeout: scaled(30_000) });
  await expect(header(page, 'vcpus')).toHaveCount(0);

  // Dark, and German (the longest words): still no sideways scroll at 1,280 px.
  await useScheme(page, 'dark');
  await openTable(page);
  expect(await overflow(page)).toEqual({ page: 0, table: 0 });
  await page.mouse.move(0, 0);
  await stillScreen(page);
  await shot(page, 'admin-desktops-columns-1280-dark');
  await showAsSaved(page, 'de');
  await useScheme(page, 'light');
  await openTable(page);
  await expect(page.getByTestId('desktops-columns')).toHaveText('Spalten');
  expect(await overflow(page)).toEqual({ page: 0, table: 0 });
  await page.mouse.move(0, 0);
  await stillScreen(page);
  await shot(page, 'admin-desktops-columns-1280-de');
  await page.unroute('**/api/v3/user');

  // Phone width: cards with every fact, no chooser; both schemes.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const scheme of ['light', 'dark'] as const) {
    await useScheme(page, scheme);
    await page.goto('/isard-admin/desktops');
    await expect(page.getByTestId('desktops-cards')).toBeVisible({ timeout: scaled(30_000) });
    await expect(page.getByTestId('desktops-columns')).toHaveCount(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await stillScreen(page);
    await shot(page, `admin-desktops-columns-phone-${scheme}`);
  }
});
