import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import enCore from '../src/i18n/locales/en.json' with { type: 'json' };
import enContent from '../src/i18n/locales/content/en.json' with { type: 'json' };
import enDep from '../src/i18n/locales/deployments/en.json' with { type: 'json' };
import fr from '../src/i18n/locales/fr.json' with { type: 'json' };
import { join } from 'node:path';
import { startMediaFileServer } from '../../server/test/helpers/media-file-server';
import { adminCall, apiToken, chooseLanguage, freshUser, notice, scaled, shot, signInAs, userId } from './support';

/** The English texts these journeys read: the core catalogue and the content area (templates, media, disks, the desktop form). */
const en = { ...enCore, ...enContent };

// The last lines of the spec (issue 17): the permission pickers' calls, delete for good with its
// default, guard step 7's maximum recycle time, the temporary desktop's 25 s creation notice and
// the 120 s chunk-load timeout (an error with a retry instead of a spinner).

const desktopCard = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

/** Requests matching `what` fail once (a dropped connection, a server busy for a moment), then pass; answers how many were made so far. */
async function cutOnce(page: Page, what: string | RegExp) {
  let made = 0;
  await page.route(what, async (route) => {
    if (made++ === 0) return route.abort();
    await route.continue();
  });
  return () => made;
}

/** The screen shows, with no error, its cut request having been made again. */
async function shownAfter(page: Page, made: () => number) {
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible({ timeout: scaled(15_000) });
  await expect(page.getByTestId('route-load-error')).toHaveCount(0);
  expect(made()).toBeGreaterThan(1);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
}

/** The route's error of this kind, with its text (after the tries); the requests then pass, and its retry brings the screen. */
async function routeErrorThenRetry(page: Page, kind: 'failed' | 'read', shotName: string) {
  const error = page.getByTestId('route-load-error');
  await expect(error).toHaveAttribute('data-kind', kind, { timeout: scaled(20_000) });
  await expect(error).toContainText(en.route_error[kind]);
  await shot(page, shotName);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.getByTestId('route-load-retry').click();
  await expect(page.getByTestId('route-load-error')).toHaveCount(0);
}

async function api(request: APIRequestContext, username: string) {
  const token = await apiToken(request, username);
  const headers = { authorization: `Bearer ${token}` };
  return {
    get: async (path: string) => (await request.get(`/api/v3${path}`, { headers })).json(),
    post: (path: string, data: unknown) => request.post(`/api/v3${path}`, { headers, data }),
  };
}

test.describe.serial('the last lines of the spec', () => {
  test('the pickers search within the caller’s category and save through the allowed calls', async ({ page, request }) => {
    // A teacher picks only people of their own category: the researcher (Research Lab) is not offered.
    await signInAs(page, 'advanced');
    await page.goto('/deployments/new');
    await page.getByTestId('sharing-users').check();
    const users = page.getByTestId('sharing-users-search');
    await users.click();
    const searched = page.waitForResponse((r) => r.url().includes('/api/v3/admin/allowed/term/users') && r.request().method() === 'POST');
    await users.fill('Rui');
    expect((await searched).status()).toBe(200);
    await expect(page.getByText(enDep.deployments.allowed.nothing)).toBeVisible();
    await users.fill('Sara');
    await expect(page.getByRole('option', { name: 'Sara Student' })).toBeVisible();
    await page.keyboard.press('Escape');

    // An admin picks in every category, and sees which; saving goes through admin/allowed/update.
    const admin = await api(request, 'admin');
    const [demo] = ((await admin.get('/user/templates')) as { id: string; name: string; allowed: unknown }[]).filter((t) => t.name === 'Demo Linux');
    await page.getByTestId('user-menu').click();
    await page.getByTestId('logout').click();
    await signInAs(page, 'admin');
    await page.goto('/templates');
    const card = page.locator('[data-testid=template-card][data-name="Demo Linux"]');
    await card.getByTestId('template-share-button').click();
    await page.getByTestId('sharing-groups').check();
    const groups = page.getByTestId('sharing-groups-search');
    await groups.click();
    await groups.fill('Lab');
    await page.getByRole('option', { name: 'Lab members (Research Lab)' }).click();
    await page.keyboard.press('Escape');
    await shot(page, 'spec-lines-share-admin');
    const saved = page.waitForRequest((r) => r.url().endsWith('/api/v3/admin/allowed/update/domains') && r.method() === 'POST');
    await page.getByTestId('share-save').click();
    const body = (await saved).postDataJSON() as { id: string; allowed: { groups: string[] } };
    expect(body).toMatchObject({ id: demo!.id, allowed: { groups: ['lab-default'] } });
    await expect(page.getByRole('dialog')).toBeHidden();
    // As it was (one session per user: the browser's sign-in ended the first token).
    expect((await (await api(request, 'admin')).post('/admin/allowed/update/domains', { id: demo!.id, allowed: demo!.allowed })).status()).toBe(200);
  });

  test('a teacher shares a media with a student of the category through the picker', async ({ page, request }) => {
    const iso = join(process.env.VDI_TEST_IMAGES ?? join(import.meta.dirname, '..', '..', 'data', 'test-cache', 'images'), 'demo.iso');
    // Its own name per run: a retry of this serial group makes it again.
    const isoName = `Picker ISO ${Date.now().toString(36)}`;
    const files = await startMediaFileServer(iso);
    try {
      const teacher = await api(request, 'advanced');
      expect((await teacher.post('/media', { name: isoName, url: `${files.base}/demo.iso`, kind: 'iso' })).status()).toBe(200);
      await signInAs(page, 'advanced');
      await page.getByTestId('navbar').getByTestId('nav-media').click();
      const row = page.locator(`[data-testid=media-row][data-name="${isoName}"]`);
      await row.getByTestId('media-share').click();
      await page.getByTestId('sharing-users').check();
      const users = page.getByTestId('sharing-users-search');
      await users.click();
      await users.fill('Nora');
      await page.getByRole('option', { name: 'Nora Student (student03)' }).click();
      await page.keyboard.press('Escape');
      await shot(page, 'spec-lines-media-share');
      const saved = page.waitForResponse((r) => r.url().endsWith('/api/v3/admin/allowed/update/media') && r.request().method() === 'POST');
      await page.getByTestId('media-share-save').click();
      expect((await saved).status()).toBe(200);
      await expect(notice(page, en.media.share.saved.replace('{{name}}', isoName))).toBeVisible();
      // Saved: the media names her.
      const nora = await userId(request, 'student03');
      const [shared] = ((await (await api(request, 'advanced')).get('/media')) as { name: string; allowed: { users: string[] | false } }[]).filter((m) => m.name === isoName);
      expect(shared!.allowed.users).toEqual([nora]);
    } finally {
      await files.close();
    }
  });

  test('deleting a desktop offers "delete for good", checked as the portal is set', async ({ page, request }) => {
    // A person of the journey's own (new on every attempt): the two desktops it makes count against nobody else's quota.
    const deleter = `lines-deleter-${Date.now().toString(36)}`;
    await freshUser(request, deleter);
    const student = await api(request, deleter);
    const [demo] = (await student.get('/user/templates/allowed/all')) as { id: string }[];
    for (const name of ['Kept desktop', 'Gone desktop']) expect((await student.post('/persistent_desktop', { name, template_id: demo!.id })).status()).toBe(200);

    // Guard step 7 fetches the maximum recycle time on the way in.
    const cutoff = page.waitForRequest((r) => r.url().endsWith('/api/v3/recycle-bin/user/cutoff-time'));
    await signInAs(page, deleter);
    await cutoff;

    // The default is off: this one goes to the recycle bin.
    await desktopCard(page, 'Kept desktop').getByTestId('desktop-menu').click();
    await page.getByTestId('desktop-delete').click();
    await expect(page.getByTestId('delete-for-good')).not.toBeChecked();
    await expect(page.getByTestId('delete-body')).toHaveText(en.desktops.confirm.delete_body.replace('{{name}}', 'Kept desktop'));
    const toBin = page.waitForRequest((r) => r.method() === 'DELETE' && /\/api\/v3\/desktop\/[^/]+$/.test(r.url()));
    await page.getByTestId('confirm-delete').click();
    await toBin;
    await expect(desktopCard(page, 'Kept desktop')).toHaveCount(0);

    // Set on: the box comes checked, and the desktop goes for good.
    await adminCall(request, 'PUT', '/admin/settings/recycle_bin', { cutoff_hours: 1, default_delete: true });
    try {
      await page.reload();
      await desktopCard(page, 'Gone desktop').getByTestId('desktop-menu').click();
      await page.getByTestId('desktop-delete').click();
      await expect(page.getByTestId('delete-for-good')).toBeChecked();
      await expect(page.getByTestId('delete-body')).toHaveText(en.desktops.confirm.delete_for_good_body.replace('{{name}}', 'Gone desktop'));
      await shot(page, 'spec-lines-delete-for-good');
      const forGood = page.waitForRequest((r) => r.method() === 'DELETE' && /\/api\/v3\/desktop\/[^/]+\/permanent$/.test(r.url()));
      await page.getByTestId('confirm-delete').click();
      await forGood;
      await expect(desktopCard(page, 'Gone desktop')).toHaveCount(0);
    } finally {
      await adminCall(request, 'PUT', '/admin/settings/recycle_bin', { cutoff_hours: 1, default_delete: false });
    }
    // Only the first one waits in the bin.
    const bin = (await (await api(request, deleter)).get('/recycle_bin/item_count/user')) as { item_name: string }[];
    expect(bin.map((e) => e.item_name)).toEqual(['Kept desktop']);
  });

  test('a temporary desktop that takes more than 25 s says so, in the chosen language', async ({ browser, request }) => {
    test.setTimeout(scaled(120_000));
    // A person of the journey's own: the French it saves must not follow a demo user into later journeys.
    const person = `lines-temporary-${Date.now().toString(36)}`;
    await freshUser(request, person);
    const context = await browser.newContext({ locale: 'fr-FR' });
    const page = await context.newPage();
    try {
      await signInAs(page, person);
      // French, chosen as a person does (a language saved earlier for this user wins over the browser's).
      await chooseLanguage(page, 'fr-FR');
      // The server never answers the creation.
      await page.route('**/api/v3/nonpersistent', (route) => (route.request().method() === 'POST' ? undefined : route.fallback()));
      // (A person with no desktops has the button twice: in the toolbar and in the empty list.)
      await page.getByTestId('new-temporary').first().click();
      await page.getByTestId('temporary-template').filter({ hasText: fr.built_in.demo_template }).click();
      await page.getByTestId('temporary-create').click();
      const asked = Date.now();
      await expect(notice(page, fr.errors.desktop_create_timeout)).toBeVisible({ timeout: scaled(60_000) });
      expect(Date.now() - asked).toBeGreaterThanOrEqual(24_000);
      await shot(page, 'spec-lines-create-timeout-fr');
      await page.unrouteAll({ behavior: 'ignoreErrors' });
      await chooseLanguage(page, 'en-US');
      await expect(page.getByTestId('new-temporary').first()).toContainText('New temporary desktop');
    } finally {
      await context.close();
    }
  });

  test('a screen that does not arrive in 120 s shows an error with a retry', async ({ page }) => {
    await page.clock.install();
    await signInAs(page, 'user');
    await expect(desktopCard(page, 'Demo desktop')).toBeVisible();
    // From now on no code arrives.
    await page.route('**/assets/**', () => undefined);
    await page.getByTestId('nav-storage').click();
    // The page runs all along (its timers fire each second): a jump of the clock alone is a page that could not run,
    // which counts as at most two seconds (lib/page-time.ts).
    await page.clock.runFor(119_000);
    await expect(page.getByTestId('route-load-error')).toHaveCount(0);
    await page.clock.runFor(2_000);
    const error = page.getByTestId('route-load-error');
    await expect(error).toBeVisible();
    await expect(error).toHaveAttribute('data-kind', 'timeout');
    await expect(error).toContainText(en.route_error.timeout);
    await shot(page, 'spec-lines-chunk-timeout');
    // The code arrives again: the retry loads the screen.
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.getByTestId('route-load-retry').click();
    await expect(page).toHaveURL(/\/userstorage$/);
    await expect(page.getByTestId('route-load-error')).toHaveCount(0);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  });

  test('a screen whose download fails once is fetched again and shows, with no error', async ({ page }) => {
    await signInAs(page, 'user');
    await expect(desktopCard(page, 'Demo desktop')).toBeVisible();
    // The next screen's first download is cut (a dropped connection, a server busy for a moment); the next try passes.
    const asked = await cutOnce(page, '**/assets/**');
    await page.getByTestId('nav-storage').click();
    await expect(page).toHaveURL(/\/userstorage$/);
    await shownAfter(page, asked);
  });

  test('a screen whose download keeps failing says so after a few tries (phone width)', async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 800 });
    await signInAs(page, 'user');
    await expect(desktopCard(page, 'Demo desktop')).toBeVisible();
    await page.route('**/assets/**', (route) => route.abort());
    await page.getByRole('button', { name: en.nav.open_menu }).click();
    await page.getByTestId('nav-recycleBins').click();
    // (tried again after 0.5, 1 and 2 s)
    await routeErrorThenRetry(page, 'failed', 'spec-lines-chunk-failed-390');
  });

  test('what a screen needs from the server is asked again when it does not arrive; then the screen says what failed', async ({ page }) => {
    await signInAs(page, 'user');
    await expect(desktopCard(page, 'Demo desktop')).toBeVisible();
    // The session user's next read (a page opened afresh) is cut once (a request timed out on a starved machine, a dropped connection): asked again, the screen shows.
    const userRead = /\/api\/v3\/user$/;
    const asked = await cutOnce(page, userRead);
    await page.goto('/userstorage');
    await shownAfter(page, asked);
    // It never arrives: after a few tries (1, 2 and 4 s apart) the screen says what did not arrive, with a retry.
    await page.route(userRead, (route) => route.abort());
    await page.goto('/recycleBins');
    await routeErrorThenRetry(page, 'read', 'spec-lines-guard-read-failed');
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  });
});
