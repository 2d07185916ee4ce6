import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { SESSION_COOKIE } from '@vdi/contracts';
import adminDesktopsEn from '../src/i18n/locales/admin-desktops/en.json' with { type: 'json' };
import adminDesktopsCa from '../src/i18n/locales/admin-desktops/ca.json' with { type: 'json' };
import { join } from 'node:path';
import { apiToken, freshUser, scaled, shot, SHOTS, showAsSaved, signInAs, stillScreen, userId } from './support';

// Issue 28, first paragraph: an admin opens a desktop from the console's list and gets its page — owner,
// organisation, template, hardware and disks — starts it, watches its screen and its history grow (the
// start asked by them, the start on its host, the screen opened as support by its protocol), force-stops
// it (how long it ran); the page at phone width, in Catalan.

const P = adminDesktopsEn.admin_desktops.page;
const PCa = adminDesktopsCa.admin_desktops.page;
const suffix = Date.now().toString(36).slice(-4);
const OWNER = `page-owner-${suffix}`;
const HEIR = `page-heir-${suffix}`;
const DESK = `Page desk ${suffix}`;

async function seed(request: APIRequestContext) {
  await freshUser(request, OWNER);
  await freshUser(request, HEIR);
  const headers = { authorization: `Bearer ${await apiToken(request, OWNER)}` };
  const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string; name: string }[];
  const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0]!;
  const made = await request.post('/api/v3/persistent_desktop', { headers, data: { name: DESK, template_id: template.id } });
  expect(made.ok()).toBe(true);
  const id = ((await made.json()) as { id: string }).id;
  await expect
    .poll(async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((d) => d.id === id)?.state.toLowerCase(), { timeout: scaled(60_000) })
    .toBe('stopped');
  return { id, template: template.name };
}

const history = (page: Page, kind: string) => page.locator(`[data-testid="desktop-history-item"][data-kind="${kind}"]`);

test.describe.configure({ mode: 'serial' });

test.describe('administration: one desktop\'s page', () => {
  let desk: { id: string; template: string };
  test.beforeAll(async ({ request }) => {
    desk = await seed(request);
  });
  // A desktop left running would share the machine's cores with later journeys.
  test.afterAll(async ({ request }) => {
    const headers = { authorization: `Bearer ${await apiToken(request, 'admin')}` };
    if (desk) await request.post('/api/v3/admin/desktops/force_stop', { headers, data: { ids: [desk.id] } }).catch(() => undefined);
  });

  test('opened from the list: its facts; started, its screen and history grow; opened as support; force-stopped', async ({ page }) => {
    test.setTimeout(scaled(240_000));
    await signInAs(page, 'admin');
    await page.goto('/isard-admin/desktops');
    await page.getByTestId('desktops-search').fill(DESK);
    const row = page.locator(`[data-testid="desktop-row"][data-name="${DESK}"]`);
    await expect(row).toBeVisible();
    // A click on the row (not on its box or menu) opens the page.
    await row.getByText(OWNER, { exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/isard-admin/desktops/${desk.id}$`));
    const view = page.getByTestId('desktop-page');
    await expect(view).toHaveAttribute('data-status', 'Stopped');
    await expect(page.getByTestId('desktop-page-name')).toHaveText(DESK);
    await expect(page.getByTestId('desktop-page-owner')).toContainText(OWNER);
    await expect(page.getByTestId('desktop-page-category')).toHaveText('Default');
    await expect(page.getByTestId('desktop-page-template')).toHaveText(desk.template);
    await expect(page.getByTestId('desktop-page-disk')).toHaveCount(1);
    await expect(page.getByTestId('desktop-page-hypervisor')).toHaveText('—');
    await expect(page.getByTestId('desktop-page-screen')).toContainText(P.screen_off);
    await expect(history(page, 'created')).toHaveCount(1);
    await expect(history(page, 'start')).toHaveCount(0);

    // Started from the page: the screen shows, the history names who asked and the host.
    await page.getByTestId('desktop-page-start').click();
    await expect(view).toHaveAttribute('data-status', /Started|WaitingIP/, { timeout: scaled(90_000) });
    await expect(page.getByTestId('desktop-page-thumbnail')).toBeVisible({ timeout: scaled(30_000) });
    await expect(history(page, 'start')).toContainText('admin');
    await expect(history(page, 'started')).toHaveCount(1);
    await expect(page.getByTestId('desktop-page-hypervisor')).not.toHaveText('—');
    await expect(page.getByTestId('desktop-page-since')).not.toHaveText('—');
    // The thumbnail is refreshed while it runs (a new image every few seconds).
    const first = await page.getByTestId('desktop-page-thumbnail').getAttribute('src');
    await expect.poll(async () => page.getByTestId('desktop-page-thumbnail').getAttribute('src'), { timeout: scaled(20_000) }).not.toBe(first);
    await shot(page, 'admin-desktop-page-running');

    // Its screen, as support: the viewer is in the history by its protocol.
    await page.getByTestId('desktop-page-support').click();
    const tab = page.context().waitForEvent('page');
    await page.getByTestId('desktop-page-support-confirm-confirm').click();
    const screen = await tab;
    await expect(screen).toHaveURL(/\/viewer\/vnc/, { timeout: scaled(20_000) });
    await expect(history(page, 'viewer')).toHaveCount(1, { timeout: scaled(30_000) });
    await expect(history(page, 'viewer')).toContainText('VNC');
    await expect(page.getByTestId('desktop-page-summary')).toContainText('VNC');
    await screen.close();

    // Force-stopped: asked by the admin, then stopped with how long it ran.
    await page.getByTestId('desktop-page-force-stop').click();
    await page.getByTestId('desktop-page-confirm-confirm').click();
    await expect(view).toHaveAttribute('data-status', 'Stopped', { timeout: scaled(60_000) });
    await expect(history(page, 'force_stop')).toContainText('admin');
    await expect(history(page, 'stopped')).toHaveCount(1);
    await expect(history(page, 'stopped')).toContainText(P.ran.split(' ')[0]!);
    await expect(page.getByTestId('desktop-page-screen')).toContainText(P.screen_off);
    await shot(page, 'admin-desktop-page-stopped');
  });

  test('given to another person: the page names the new owner, the history the change', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    await signInAs(page, 'admin');
    await page.goto(`/isard-admin/desktops/${desk.id}`);
    await expect(page.getByTestId('desktop-page')).toHaveAttribute('data-status', 'Stopped');
    await page.getByTestId('desktop-page-move').click();
    await expect(page.getByRole('dialog')).toContainText(P.move_body);
    await page.getByTestId('desktop-page-owner-change-user').fill(HEIR);
    await page.getByRole('option', { name: new RegExp(HEIR) }).click();
    await page.getByTestId('desktop-page-owner-change-confirm').click();
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(page.getByTestId('desktop-page-owner')).toContainText(HEIR);
    await expect(history(page, 'audit').first()).toContainText('admin');
  });

  test('at phone width and in Catalan the page stacks and speaks Catalan', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    await signInAs(page, 'admin');
    await showAsSaved(page, 'ca');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/isard-admin/desktops/${desk.id}`);
    await expect(page.getByTestId('desktop-page')).toBeVisible();
    await expect(page.getByTestId('desktop-page-history').getByRole('heading')).toHaveText(PCa.history);
    await expect(page.getByTestId('desktop-page-back')).toHaveText(PCa.back);
    await expect(history(page, 'stopped')).toContainText(PCa.events.stopped);
    // One column: each section below the one before, none wider than the screen.
    const boxes = await Promise.all(['desktop-page-screen', 'desktop-page-running', 'desktop-page-facts', 'desktop-page-hardware'].map((id) => page.getByTestId(id).boundingBox()));
    for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.y).toBeGreaterThan(boxes[i - 1]!.y + boxes[i - 1]!.height - 1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, 'admin-desktop-page-phone-ca');
    // The dark theme (as the theme button sets it).
    await page.evaluate((key) => {
      localStorage.setItem(key, 'dark');
      window.dispatchEvent(new StorageEvent('storage', { key, newValue: 'dark', storageArea: localStorage }));
    }, 'mantine-color-scheme-value');
    await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
    await shot(page, 'admin-desktop-page-phone-ca-dark');
  });
  // Last: its history then holds more than a page (the journeys before it read the newest lines).
  test('"Edit hardware" comes back to the page; the history shows the newest 200 lines and older ones on demand', async ({ page, request }) => {
    test.setTimeout(scaled(180_000));
    // (Before the page signs in: the look-up signs the admin in through the API, which ends an earlier session.)
    const [owner, heir] = [await userId(request, OWNER), await userId(request, HEIR)];
    await signInAs(page, 'admin');
    await page.goto(`/isard-admin/desktops/${desk.id}`);
    await expect(page.getByTestId('desktop-page')).toHaveAttribute('data-status', 'Stopped');
    // Edit hardware, then Cancel, then Save: each back on this page, not the portal's desktops.
    for (const leave of ['edit-cancel', 'edit-save']) {
      await page.getByTestId('desktop-page-edit').click();
      await expect(page).toHaveURL(new RegExp(`/domain/edit\\?id=${desk.id}$`));
      await page.getByTestId(leave).click();
      await expect(page).toHaveURL(new RegExp(`/isard-admin/desktops/${desk.id}$`));
      await expect(page.getByTestId('desktop-page')).toBeVisible();
    }

    // A long history: the desktop given back and forth (two audit entries a round) past one page.
    // The page's own session (a sign-in through the API would end it).
    const token = decodeURIComponent((await page.context().cookies()).find((c) => c.name === SESSION_COOKIE)!.value);
    const headers = { authorization: `Bearer ${token}` };
    for (let i = 0; i < 110; i++) {
      for (const to of [owner, heir]) expect((await request.put(`/api/v3/admin/desktops/${desk.id}`, { headers, data: { owner_id: to } })).ok()).toBe(true);
    }
    const first = (await (await request.get(`/api/v3/admin/desktops/${desk.id}/history`, { headers })).json()) as { items: unknown[]; next_cursor: string | null };
    expect(first.items).toHaveLength(200);
    expect(first.next_cursor).toBeTruthy();
    const rest = (await (await request.get(`/api/v3/admin/desktops/${desk.id}/history?cursor=${encodeURIComponent(first.next_cursor!)}`, { headers })).json()) as { items: unknown[]; next_cursor: string | null };
    expect(rest.next_cursor).toBeNull();
    const bad = await request.get(`/api/v3/admin/desktops/${desk.id}/history?cursor=nope`, { headers });
    expect(bad.status()).toBe(400);
    expect(((await bad.json()) as { description_code: string }).description_code).toBe('desktop_history_cursor_invalid');

    await page.reload();
    const items = page.getByTestId('desktop-history-item');
    await expect(items).toHaveCount(200);
    await expect(history(page, 'created')).toHaveCount(0);
    const older = page.getByTestId('desktop-history-older');
    await expect(older).toHaveText(P.older);
    // The button below the newest 200 lines, where a person meets it (the window, not the whole long page).
    if (SHOTS) {
      await older.scrollIntoViewIfNeeded();
      await stillScreen(page);
      await page.screenshot({ path: join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots', 'admin-desktop-page-history-older.png') });
    }
    await older.click();
    await expect(items).toHaveCount(200 + rest.items.length);
    await expect(history(page, 'created')).toHaveCount(1);
    await expect(older).toHaveCount(0);
    // The sums are the whole history's: the one start of the first journey.
    await expect(page.getByTestId('desktop-page-summary')).toContainText(P.summary_starts.replace('{{n}}', '1'));

    // At phone width, in Catalan: the same button in its words, no wider than the screen.
    await showAsSaved(page, 'ca');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(older).toHaveText(PCa.older);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    if (SHOTS) {
      await older.scrollIntoViewIfNeeded();
      await stillScreen(page);
      await page.screenshot({ path: join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots', 'admin-desktop-page-history-older-phone-ca.png') });
    }
  });
});
