import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import enAdmin from '../src/i18n/locales/admin/en.json' with { type: 'json' };
import enDep from '../src/i18n/locales/deployments/en.json' with { type: 'json' };
import { adminSections, apiToken, freshUser, scaled, seriousViolations, signInAs, windowShot as shot } from './support';

// Phones (360–430 px wide): a teacher runs a class from a phone (the navigation in a drawer,
// start all, the videowall, hide), and the lists that were tables read as cards, whole names,
// their actions on screen. Own deployment (for Pau alone) and own user for the bin: no other journey's counts move.

test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

const t = enDep.deployments;

async function call(request: APIRequestContext, user: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown) {
  const res = await request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${await apiToken(request, user)}` } });
  expect(res.ok(), `${method} ${path}: ${res.status()}`).toBe(true);
  return res.json().catch(() => null);
}

/** Nothing wider than the screen: no sideways scrolling of the page. */
async function fitsTheScreen(page: Page) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll, 'the page scrolls sideways').toBeLessThanOrEqual(width);
}

/** The element lies within the screen's width. */
async function onScreen(page: Page, el: ReturnType<Page['locator']>) {
  const box = (await el.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()!.width);
}

test.describe('phone', () => {
  test('a teacher on a phone runs a deployment: start all, videowall, hide', async ({ page, request }) => {
    test.setTimeout(scaled(5 * 60_000));
    const templates = (await call(request, 'advanced', 'GET', '/user/templates/allowed/all')) as { id: string; name: string }[];
    const pau = ((await call(request, 'student02', 'GET', '/user')) as { id: string }).id;
    const name = `Phone class ${Date.now()}`;
    const { id } = (await call(request, 'advanced', 'POST', '/deployments', {
      name,
      desktop_name: 'Phone desktop',
      template_id: templates.find((x) => x.name === 'Demo Linux')!.id,
      visible: true,
      allowed: { groups: false, users: [pau] },
    })) as { id: string };
    await expect.poll(async () => ((await call(request, 'advanced', 'GET', `/deployment/${id}`)) as { creation: unknown }).creation, { timeout: scaled(30_000) }).toBeNull();

    try {
      await signInAs(page, 'advanced');
      await fitsTheScreen(page);
      // The navigation: a drawer behind the menu button, closed by Escape with the focus back on the button.
      const burger = page.getByRole('button', { name: en.nav.open_menu });
      await burger.tap();
      const drawer = page.getByRole('dialog', { name: en.nav.main });
      await expect(drawer).toBeVisible();
      await shot(page, 'phone-navigation-drawer');
      await page.keyboard.press('Escape');
      await expect(drawer).toBeHidden();
      await expect(burger).toBeFocused();
      await burger.tap();
      await drawer.getByTestId('nav-deployments').tap();
      await expect(page).toHaveURL(/\/deployments$/);
      await expect(drawer).toBeHidden();
      await page.locator(`[data-testid=deployment-card][data-name="${name}"]`).tap();
      await expect(page).toHaveURL(new RegExp(`/deployment/${id}$`));
      await fitsTheScreen(page);

      // Start all.
      const startAll = page.getByTestId('deployment-start-all');
      await onScreen(page, startAll);
      await startAll.tap();
      await expect(page.getByTestId('deployment-desktop').first()).toHaveAttribute('data-state', /started|waitingip/, { timeout: scaled(120_000) });
      await fitsTheScreen(page);
      await shot(page, 'phone-deployment-started');

      // The videowall: the screen fits the phone's width.
      await page.getByTestId('deployment-videowall').tap();
      await expect(page).toHaveURL(/\/videowall$/);
      const tile = page.getByTestId('videowall-tile').first();
      await expect(tile).toHaveAttribute('data-status', 'connected', { timeout: scaled(60_000) });
      await onScreen(page, tile);
      await fitsTheScreen(page);
      await shot(page, 'phone-videowall');
      // A live tile: one control per purpose (no button inside a button), every control named.
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByTestId('videowall-back').tap();

      // Hide, stopping the running desktop.
      await page.getByTestId('deployment-hide').tap();
      await expect(page.getByTestId('deployment-hide-modal')).toContainText(t.hide.started_one.replace('{{count}}', '1'));
      await shot(page, 'phone-deployment-hide');
      await page.getByTestId('deployment-hide-stop').tap();
      await expect(page.getByTestId('deployment-detail').getByTestId('deployment-visible')).toHaveAttribute('data-visible', 'false');
      await shot(page, 'phone-deployment-hidden');
    } finally {
      await call(request, 'advanced', 'DELETE', `/deployments/${id}`).catch(() => undefined);
    }
  });

  test('the storage and recycle-bin lists are cards: whole names, actions on screen', async ({ page, request }) => {
    test.setTimeout(scaled(3 * 60_000));
    // A user of this journey's own: the bin of the demo users is other journeys' to count.
    const who = 'phone-cards';
    await freshUser(request, who);
    const templates = (await call(request, who, 'GET', '/user/templates/allowed/all')) as { id: string; name: string }[];
    const longName = 'A desktop with a rather long name for a phone';
    const made = (await call(request, who, 'POST', '/persistent_desktop', { name: longName, template_id: templates[0]!.id })) as { id: string };
    await call(request, who, 'DELETE', `/desktop/${made.id}`);
    // And one kept, for the storage list.
    await call(request, who, 'POST', '/persistent_desktop', { name: 'Kept desktop', template_id: templates[0]!.id }).catch(() => undefined);

    await signInAs(page, who);
    for (const [path, row, action] of [
      ['/userstorage', 'storage-row', 'storage-increase'],
      ['/recycleBins', 'bin-row', 'bin-restore'],
    ] as const) {
      await page.goto(path);
      const first = page.getByTestId(row).first();
      await expect(first).toBeVisible();
      await fitsTheScreen(page);
      await onScreen(page, first);
      // Every text whole: nothing in the card cut off with an ellipsis.
      const cut = await first.evaluate((el) =>
        [...el.querySelectorAll<HTMLElement>('p, span, a')].filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible').map((e) => e.textContent),
      );
      expect(cut, `cut texts in ${row}`).toEqual([]);
      const act = first.getByTestId(action);
      if (await act.count()) await onScreen(page, act.first());
      await shot(page, `phone-${row}`);
    }
    await expect(page.locator(`[data-testid=bin-row][data-name="${longName}"]`)).toContainText(longName);
  });

  test('the admin console: its navigation in the drawer, every section within the screen', async ({ page }) => {
    test.setTimeout(scaled(5 * 60_000));
    await signInAs(page, 'admin');
    await page.goto('/isard-admin/');
    await expect(page.locator('h1').first()).toBeVisible({ timeout: scaled(30_000) });
    // No sidebar on a phone: the sections are behind the menu button, in the portal's drawer.
    await expect(page.getByTestId('admin-navbar')).toHaveCount(0);
    const burger = page.getByRole('button', { name: en.nav.open_menu });
    await burger.tap();
    const drawer = page.getByRole('dialog', { name: enAdmin.admin.shell.navigation });
    await expect(drawer).toBeVisible();
    await shot(page, 'phone-admin-navigation-drawer');
    // Escape once the drawer holds the focus (on a loaded machine its opening may still be under way).
    await expect.poll(() => drawer.evaluate((d) => d.contains(document.activeElement))).toBe(true);
    await page.keyboard.press('Escape');
    await expect(drawer).toBeHidden();
    await expect(burger).toBeFocused();
    const sections = adminSections();
    await burger.tap();
    await drawer.getByTestId(`admin-nav-${sections[1]!.replaceAll('/', '-')}`).tap();
    await expect(page).toHaveURL(new RegExp(`/isard-admin/${sections[1]}$`));
    await expect(drawer).toBeHidden();

    for (const path of sections) {
      await page.goto(`/isard-admin/${path}`);
      await expect(page.locator('h1').first()).toBeVisible({ timeout: scaled(30_000) });
      await expect(page.locator('.mantine-Loader-root, [data-testid$=-loading]')).toHaveCount(0, { timeout: scaled(30_000) });
      await fitsTheScreen(page);
      // A table is a list of cards: its first row whole on the screen, its actions too.
      const row = page.locator('table tbody tr').first();
      if (await row.count()) {
        await onScreen(page, row);
        const last = row.locator('td').last();
        if (await last.count()) await onScreen(page, last);
      }
      await shot(page, `phone-admin-${path.replaceAll('/', '-')}`);
    }
  });
});
