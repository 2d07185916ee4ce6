import { expect, test, type Locator, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import { apiToken, chooseLanguage, freshUser, notice, scaled, shot, signInAs, stillScreen } from './support';

// The demo organisation gives `user` two stopped desktops from the Demo Linux template; their
// group may run one desktop at a time, so every journey stops what it starts.

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

/** Stops a started desktop and waits for it; a guest still booting ignores ACPI, so force it then. */
async function stopAndWait(scope: Locator) {
  await scope.getByTestId('desktop-action-stop').click();
  try {
    await expect(scope).toHaveAttribute('data-state', 'stopped', { timeout: scaled(10_000) });
  } catch {
    await scope.getByTestId('desktop-action-forceStop').click();
    await expect(scope).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
  }
}

test.describe('desktops', () => {
  test('lists the demo desktops as cards, filters them and remembers the table', async ({ page }) => {
    await signInAs(page, 'user');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.desktops.heading);
    const demo = card(page, 'Demo desktop');
    const lab = card(page, 'Lab desktop');
    await expect(demo).toBeVisible();
    await expect(lab).toBeVisible();
    await expect(demo.getByTestId('desktop-state')).toHaveText(en.desktops.states.stopped);
    await expect(demo.getByTestId('desktop-hardware')).toContainText('vCPU');
    await expect(demo.getByTestId('desktop-action-start')).toHaveText(en.desktops.actions.start);
    await expect(demo.getByTestId('desktop-open')).toHaveCount(0);
    await shot(page, 'desktops-grid');

    // The text filter looks at names and descriptions.
    await page.getByTestId('desktops-filter').fill('LAB');
    await expect(lab).toBeVisible();
    await expect(demo).toBeHidden();
    await page.getByTestId('desktops-filter').fill('demo linux');
    await expect(lab).toBeVisible();
    await expect(demo).toBeVisible();
    await page.getByTestId('desktops-filter').fill('');

    // Nothing is started: "started only" shows the no-match state, which clears the filters.
    await page.getByTestId('desktops-started-only').check();
    await expect(page.getByTestId('empty-state')).toContainText(en.desktops.no_match_title);
    await page.getByTestId('desktops-clear-filters').click();
    await expect(demo).toBeVisible();

    // The menu offers delete (stopped) behind a confirmation, and no reset.
    await demo.getByTestId('desktop-menu').click();
    await expect(page.getByTestId('desktop-reset')).toBeDisabled();
    await page.getByTestId('desktop-delete').click();
    await expect(page.getByRole('dialog')).toContainText(en.desktops.confirm.delete_title);
    await page.getByTestId('cancel-delete').click();
    await expect(page.getByRole('dialog')).toBeHidden();
    await expect(demo).toBeVisible();

    // The table, remembered across a reload.
    await page.getByTestId('view-table').click();
    await expect(page.getByTestId('desktops-table')).toBeVisible();
    await expect(page.locator('[data-testid=desktop-row][data-name="Demo desktop"]')).toBeVisible();
    await expect(page.getByTestId('desktop-card')).toHaveCount(0);
    await page.mouse.move(600, 700); // no tooltip, and the toggle's slide finished
    await stillScreen(page);
    await shot(page, 'desktops-table');
    await page.reload();
    await expect(page.getByTestId('desktops-table')).toBeVisible();
    await page.getByTestId('view-grid').click();
    await expect(demo).toBeVisible();

    // A phone-wide screen keeps the cards readable.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByTestId('navbar')).not.toBeInViewport(); // behind the menu button
    await expect(demo.getByTestId('desktop-action-start')).toBeVisible();
    await shot(page, 'desktops-phone');
  });

  test('a started desktop changes live, here and in a second window, with a screen thumbnail', async ({ page, browser }) => {
    test.setTimeout(scaled(150_000));
    await signInAs(page, 'user');
    // A second window of the same session.
    const second = await browser.newContext({ storageState: await page.context().storageState() });
    const p2 = await second.newPage();
    await p2.goto('/desktops');
    const mine = card(page, 'Demo desktop');
    const theirs = card(p2, 'Demo desktop');
    await expect(theirs).toHaveAttribute('data-state', 'stopped');

    let loads = 0;
    for (const p of [page, p2]) p.on('load', () => loads++);

    await mine.getByTestId('desktop-action-start').click();
    await expect(mine).toHaveAttribute('data-state', 'started', { timeout: scaled(60_000) });
    await expect(mine.getByTestId('desktop-state')).toHaveText(en.desktops.states.started);
    await expect(theirs).toHaveAttribute('data-state', 'started', { timeout: scaled(30_000) });
    await expect(mine.getByTestId('desktop-action-stop')).toBeVisible();
    await expect(mine.getByTestId('desktop-open')).toHaveText(en.desktops.open_with['browser-vnc']);

    // Started only keeps it; the other one is hidden.
    await page.getByTestId('desktops-started-only').check();
    await expect(mine).toBeVisible();
    await expect(card(page, 'Lab desktop')).toBeHidden();
    await page.getByTestId('desktops-started-only').uncheck();

    // The screen thumbnail refreshes every 10 s; after two refreshes the guest has booted.
    const thumb = mine.getByTestId('desktop-thumbnail');
    await expect(thumb).toBeVisible({ timeout: scaled(30_000) });
    const seen = new Set<string>();
    await expect
      .poll(async () => {
        const src = await thumb.getAttribute('src');
        if (src) seen.add(src);
        return seen.size;
      }, { timeout: scaled(45_000), intervals: [1000] })
      .toBeGreaterThanOrEqual(3);
    await stillScreen(page);
    await shot(page, 'desktops-started-card');

    // The other desktop cannot start while this one holds the group's one running desktop: one dialog names it,
    // with its stop.
    await card(page, 'Lab desktop').getByTestId('desktop-action-start').click();
    const held = page.getByRole('dialog');
    await expect(held).toContainText(en.errors.desktop_start_user_quota_exceeded);
    await expect(held.getByTestId('quota-held')).toContainText('Demo desktop');
    await shot(page, 'desktops-quota-held');
    await held.getByTestId('quota-stop').click();
    await expect(held).toBeHidden();
    try {
      await expect(mine).toHaveAttribute('data-state', 'stopped', { timeout: scaled(10_000) });
    } catch {
      // A guest still booting ignores ACPI.
      await mine.getByTestId('desktop-action-forceStop').click();
      await expect(mine).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
    }
    await expect(theirs).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
    await expect(theirs.getByTestId('desktop-action-start')).toBeVisible();
    await expect(mine.getByTestId('desktop-thumbnail')).toHaveCount(0);
    expect(loads, 'no page was reloaded').toBe(0);
    await second.close();
  });

  test('a temporary desktop appears live with its badge and is deleted from its card', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    await signInAs(page, 'user');
    await page.getByTestId('new-temporary').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByTestId('temporary-template').first()).toBeVisible();
    await dialog.getByTestId('temporary-template').filter({ hasText: 'Demo Linux' }).click();
    await dialog.getByTestId('temporary-create').click();
    await expect(dialog).toBeHidden({ timeout: scaled(30_000) });

    // Named after its template; it shows as temporary, and while started its action is delete.
    const temp = page.locator('[data-testid=desktop-card]').filter({ has: page.getByTestId('desktop-temporary') });
    await expect(temp).toHaveCount(1, { timeout: scaled(30_000) });
    await expect(temp).toHaveAttribute('data-name', 'Demo Linux');
    await expect(temp).toHaveAttribute('data-state', 'started', { timeout: scaled(60_000) });
    await expect(temp.getByTestId('desktop-action-delete')).toBeVisible();
    await shot(page, 'desktops-temporary');
    await temp.getByTestId('desktop-action-delete').click();
    await page.getByTestId('confirm-delete').click();
    await expect(temp).toHaveCount(0, { timeout: scaled(30_000) });
  });

  test('speaks Catalan', async ({ page, request }) => {
    // A person of the journey's own, with a desktop of theirs: the Catalan chosen is saved for them.
    await freshUser(request, 'desktops-catalan');
    const token = await apiToken(request, 'desktops-catalan');
    const headers = { authorization: `Bearer ${token}` };
    const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string; name: string }[];
    const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0]!;
    const mine = (await (await request.get('/api/v3/user/desktops', { headers })).json()) as { name: string }[];
    if (!mine.some((d) => d.name === 'Catalan desktop')) {
      expect((await request.post('/api/v3/persistent_desktop', { headers, data: { name: 'Catalan desktop', template_id: template.id } })).ok()).toBe(true);
    }
    await signInAs(page, 'desktops-catalan');
    await chooseLanguage(page, 'ca-ES');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(ca.desktops.heading);
    const desk = card(page, 'Catalan desktop');
    await expect(desk.getByTestId('desktop-action-start')).toHaveText(ca.desktops.actions.start);
    await expect(desk.getByTestId('desktop-state')).toHaveText(ca.desktops.states.stopped);
    await expect(page.getByTestId('desktops-filter')).toHaveAttribute('placeholder', ca.desktops.filter_placeholder);
    await expect(notice(page, ca.session.language_saved)).toBeHidden({ timeout: scaled(10_000) });
    await shot(page, 'desktops-ca-ES');
    // Saved for the person: a new page shows it too.
    await page.reload();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(ca.desktops.heading);
  });
});
