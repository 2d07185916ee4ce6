import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { SESSION_COOKIE } from '@vdi/contracts';
import en from '../src/i18n/locales/admin-infra/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/admin-infra/ca.json' with { type: 'json' };
import core from '../src/i18n/locales/en.json' with { type: 'json' };
import { startMediaFileServer } from '../../server/test/helpers/media-file-server';
import { adminCall, apiToken, chooseLanguage, freshUser, scaled, shot, signInAs, stillScreen } from './support';

// The administration console's infrastructure (issue 13): the dashboard, hypervisors with the
// "no new starts" switch, storage with its check of files against records, and jobs.

const T = en.admin_infra;
const root = join(import.meta.dirname, '..', '..');
const dataDir = process.env.E2E_DATA_DIR ?? join(root, '.tmp', 'e2e-data');
const SCREENS = [
  { path: 'dashboard', heading: T.dashboard.heading, ca: ca.admin_infra.dashboard.heading, name: 'dashboard' },
  { path: 'hypervisors', heading: T.hypervisors.heading, ca: ca.admin_infra.hypervisors.heading, name: 'hypervisors' },
  { path: 'storage', heading: T.storage.heading, ca: ca.admin_infra.storage.heading, name: 'storage' },
  { path: 'jobs', heading: T.jobs.heading, ca: ca.admin_infra.jobs.heading, name: 'jobs' },
] as const;

async function openScreen(page: Page, path: string, heading: string) {
  await page.goto(`/isard-admin/${path}`);
  await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
  await expect(page.locator('.mantine-Skeleton-root')).toHaveCount(0, { timeout: scaled(20_000) });
}

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

/** A user of this spec's own with one desktop of the demo template. */
async function userWithDesktop(request: APIRequestContext, username: string, desktop: string) {
  await freshUser(request, username);
  const token = await apiToken(request, username);
  const headers = { authorization: `Bearer ${token}` };
  const mine = (await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string }[];
  if (!mine.some((d) => d.name === desktop)) {
    const [demo] = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string }[];
    expect((await request.post('/api/v3/persistent_desktop', { headers, data: { name: desktop, template_id: demo!.id } })).status()).toBe(200);
  }
  return headers;
}

test.describe('hypervisors', () => {
  test('the admin sees the local host live, stops new starts (a user is told clearly) and allows them again', async ({ page, browser, request }) => {
    test.setTimeout(scaled(180_000));
    await userWithDesktop(request, 'infra-user', 'Infra desktop');
    await signInAs(page, 'admin');
    await openScreen(page, 'hypervisors', T.hypervisors.heading);
    const host = page.getByTestId('hypervisor-card').filter({ has: page.getByText('local', { exact: true }) });
    await expect(host).toBeVisible();
    await expect(host.getByTestId('hypervisor-state')).toHaveText(T.hypervisors.states.Online);
    await expect(host.getByTestId('hypervisor-cpus')).toHaveText(/^[1-9]\d*$/);
    await expect(host.getByTestId('hypervisor-memory')).toHaveText(/\d.*[MGT]B$/);
    await expect(host.getByTestId('hypervisor-running')).toHaveText(/^\d+$/);
    await expect(host.getByTestId('hypervisor-load')).toHaveText(/\d.* · .*\d.* · .*\d/);
    await expect(host.getByTestId('hypervisor-accel')).toHaveText(/KVM|TCG/);
    // Live: the numbers' time stamp moves on without reloading the page.
    const stamp = await host.getByText(/^Updated /).textContent();
    await expect(host.getByText(/^Updated /)).not.toHaveText(stamp!, { timeout: scaled(20_000) });
    await shot(page, 'admin-infra-hypervisors-en');

    try {
      // "No new starts".
      await host.getByTestId('hypervisor-mode-only_forced').click();
      await expect(host.getByTestId('hypervisor-no-starts')).toBeVisible();
      await expect(host).toHaveAttribute('data-accepts', 'false');
      await shot(page, 'admin-infra-hypervisors-no-new-starts');

      // A user presses start: a clear message, the desktop stays stopped.
      const userContext = await browser.newContext();
      const userPage = await userContext.newPage();
      await signInAs(userPage, 'infra-user');
      const mine = card(userPage, 'Infra desktop');
      await expect(mine).toHaveAttribute('data-state', 'stopped');
      await mine.getByTestId('desktop-action-start').click();
      await expect(userPage.getByText(core.errors.hypervisors_not_available)).toBeVisible();
      await expect(mine).toHaveAttribute('data-state', 'stopped');
      await shot(userPage, 'admin-infra-user-start-refused');

      // Back to taking new starts: the same start works.
      await host.getByTestId('hypervisor-mode-all').click();
      await expect(host.getByTestId('hypervisor-no-starts')).toHaveCount(0);
      await expect(host).toHaveAttribute('data-accepts', 'true');
      await mine.getByTestId('desktop-action-start').click();
      await expect(mine).not.toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
      // The admin sees it among the host's running desktops.
      await expect(host.getByTestId('hypervisor-running')).not.toHaveText('0', { timeout: scaled(30_000) });
      await userContext.close();
    } finally {
      await adminCall(request, 'PUT', '/admin/hypervisors/local', { enabled: true, only_forced: false });
      // The desktop goes back to stopped (a second stop forces it). A new token: signing in on the page ended the first one.
      const headers = { authorization: `Bearer ${await apiToken(request, 'infra-user')}` };
      const [d] = ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string; state: string }[]).filter((x) => x.name === 'Infra desktop');
      if (d) {
        await expect
          .poll(async () => {
            const now = ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((x) => x.id === d.id)!;
            if (now.state === 'Started' || now.state === 'Shutting-down' || now.state === 'WaitingIP') await request.get(`/api/v3/desktop/stop/${d.id}`, { headers });
            return now.state;
          }, { timeout: scaled(60_000), intervals: [1000] })
          .toMatch(/Stopped|Failed/);
      }
    }
  });

  test('an admin pins a template to hosts on its edit page: the hosts by name, saved with a notice', async ({ page, request }) => {
    test.setTimeout(scaled(120_000));
    const headers = { authorization: `Bearer ${await apiToken(request, 'admin')}` };
    const [demo] = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string }[];
    await signInAs(page, 'admin');
    try {
      await page.goto(`/domain/edit?id=${encodeURIComponent(demo!.id)}`);
      const pinned = page.getByTestId('preferred-hypervisors');
      await expect(pinned.getByRole('heading', { name: core.preferred_hypervisors.title })).toBeVisible({ timeout: scaled(20_000) });
      await pinned.getByTestId('preferred-favourite').click();
      await page.getByRole('option', { name: core.built_in.local_hypervisor }).click();
      // The list stays open for more picks: closed, as a person does, before saving.
      await page.keyboard.press('Escape');
      await expect(page.getByRole('option')).toHaveCount(0);
      await pinned.getByTestId('preferred-save').click();
      await expect(page.getByText(core.preferred_hypervisors.saved)).toBeVisible();
      expect(await adminCall(request, 'GET', `/admin/hypervisors/preferred/template/${demo!.id}`)).toEqual({ forced_hyp: [], favourite_hyp: ['local'] });
    } finally {
      await adminCall(request, 'PUT', `/admin/hypervisors/preferred/template/${demo!.id}`, { forced_hyp: [], favourite_hyp: [] });
    }
  });

  test('add by URI: a bad address and an unreachable host are told clearly; drain tells the running count; the local host is never removable', async ({ page, request }) => {
    test.setTimeout(scaled(180_000));
    await signInAs(page, 'admin');
    await openScreen(page, 'hypervisors', T.hypervisors.heading);
    await page.getByTestId('hypervisor-add').click();
    const dialog = page.getByTestId('hypervisor-add-dialog');
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId('hypervisor-install-key').or(dialog.getByTestId('hypervisor-install-key-none'))).toBeVisible();
    await dialog.getByTestId('hypervisor-uri').fill('http://not-a-hypervisor/system');
    await dialog.getByTestId('hypervisor-add-submit').click();
    await expect(dialog.getByTestId('hypervisor-add-error')).toHaveText(core.errors.hypervisor_uri_invalid);
    // An address that does not connect (TEST-NET-1): the error path, nothing added.
    await dialog.getByTestId('hypervisor-uri').fill('qemu+ssh://vdi@192.0.2.1/system');
    await dialog.getByTestId('hypervisor-add-submit').click();
    await expect(dialog.getByTestId('hypervisor-add-error')).toHaveText(core.errors.hypervisor_unreachable);
    await stillScreen(page);
    await shot(page, 'admin-infra-hypervisors-add-error');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('hypervisor-card')).toHaveCount(1);

    const host = page.locator('[data-testid=hypervisor-card][data-id=local]');
    await expect(host.getByTestId('hypervisor-pools')).toContainText('default');
    await expect(host.getByTestId('hypervisor-remove')).toHaveCount(0);
    try {
      await host.getByTestId('hypervisor-drain').click();
      const drain = page.getByTestId('hypervisor-drain-dialog');
      await expect(drain).toContainText(/\d/);
      await expect(host.getByTestId('hypervisor-draining')).toBeVisible();
      await stillScreen(page);
    await shot(page, 'admin-infra-hypervisors-drain');
      await page.keyboard.press('Escape');
      await host.getByTestId('hypervisor-drain').click();
      await expect(host.getByTestId('hypervisor-draining')).toHaveCount(0);
      await chooseLanguage(page, 'ca-ES');
      await expect(page.getByRole('heading', { name: ca.admin_infra.hypervisors.heading, level: 1 })).toBeVisible();
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByTestId('hypervisor-add').click();
      await expect(page.getByTestId('hypervisor-add-dialog')).toBeVisible();
      await stillScreen(page);
    await shot(page, 'admin-infra-hypervisors-add-ca-phone');
    } finally {
      await adminCall(request, 'PUT', '/user/language/en-US');
      await adminCall(request, 'PUT', '/admin/hypervisors/local/drain', { draining: false });
    }
  });
});

test.describe('dashboard', () => {
  test('the first screen shows live numbers; a manager sees their category without hypervisors', async ({ page, browser }) => {
    await signInAs(page, 'admin');
    await page.goto('/isard-admin');
    await expect(page).toHaveURL(/\/isard-admin\/dashboard$/);
    await expect(page.getByRole('heading', { name: T.dashboard.heading, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
    await expect(page.getByTestId('dash-users-value')).toHaveText(/^[1-9]\d*$/);
    await expect(page.getByTestId('dash-desktops-value')).toHaveText(/^\d+$/);
    await expect(page.getByTestId('dash-desktops')).toContainText(/of \d+ desktops?/);
    await expect(page.getByTestId('dash-hypervisors-value')).toHaveText(/^\d+ %$/);
    await expect(page.getByTestId('dash-bookings-value')).toHaveText(/^\d+$/);
    await expect(page.getByTestId('dash-jobs-value')).toHaveText(/^\d+$/);
    await expect(page.getByTestId('dash-audit-row').first()).toBeVisible();
    // Live: read again every few seconds.
    const live = await page.getByTestId('dashboard-live').textContent();
    await expect(page.getByTestId('dashboard-live')).not.toHaveText(live!, { timeout: scaled(20_000) });
    await shot(page, 'admin-infra-dashboard-en');

    const managerContext = await browser.newContext();
    const manager = await managerContext.newPage();
    await signInAs(manager, 'manager');
    await manager.goto('/isard-admin');
    await expect(manager).toHaveURL(/\/isard-admin\/dashboard$/);
    await expect(manager.getByTestId('dash-users-value')).toHaveText(/^[1-9]\d*$/);
    await expect(manager.getByText(T.dashboard.subheading_category)).toBeVisible();
    await expect(manager.getByTestId('dash-hypervisors')).toHaveCount(0);
    await expect(manager.getByTestId('admin-nav-hypervisors')).toHaveCount(0);
    await expect(manager.getByTestId('admin-nav-storage')).toBeVisible();
    await shot(manager, 'admin-infra-dashboard-manager');
    await managerContext.close();
  });
});

test.describe('storage', () => {
  test('the check lists a file the test dropped and removes it after confirming', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    const name = `e2e-orphan-${Date.now().toString(36)}.qcow2`;
    const file = join(dataDir, 'storage', 'desktops', name);
    mkdirSync(join(dataDir, 'storage', 'desktops'), { recursive: true });
    writeFileSync(file, 'a file no record owns');
    await signInAs(page, 'admin');
    await openScreen(page, 'storage', T.storage.heading);
    await expect(page.getByTestId('storage-pool')).toHaveCount(4);
    await expect(page.getByTestId('storage-row').first()).toBeVisible();
    await expect(page.getByTestId('storage-chain').first()).toBeVisible();
    await page.getByTestId('storage-check-run').click();
    const orphan = page.locator(`[data-testid=storage-orphan][data-path="desktops/${name}"]`);
    await expect(orphan).toBeVisible({ timeout: scaled(30_000) });
    await shot(page, 'admin-infra-storage-check');
    // Only this one: every other reported file is left out.
    const all = page.getByTestId('storage-orphans').getByRole('checkbox', { name: en.admin_infra.storage.check.select_all });
    if (await all.isChecked()) await all.click();
    await orphan.getByRole('checkbox').check();
    await expect(page.getByTestId('storage-orphans-remove')).toHaveText(T.storage.check.remove_one.replace('{{count}}', '1'));
    await page.getByTestId('storage-orphans-remove').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(T.storage.check.confirm_body_one.replace('{{count}}', '1'));
    await shot(page, 'admin-infra-storage-confirm');
    await page.getByTestId('storage-orphans-confirm').click();
    await expect(dialog).toBeHidden();
    await expect(orphan).toHaveCount(0, { timeout: scaled(30_000) });
    expect(existsSync(file)).toBe(false);
  });
});

test.describe('jobs', () => {
  test('a running media download shows with its progress and initiator; the admin cancels it and its partial file goes', async ({ page, request }) => {
    test.setTimeout(scaled(120_000));
    const images = process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'test-cache', 'images');
    const files = await startMediaFileServer(join(images, 'demo.iso'));
    files.rate.bytesPerSecond = 16 * 1024;
    let mediaId: string | undefined;
    await signInAs(page, 'admin');
    // The admin's own session (a sign-in through the API would end the page's).
    const token = (await page.context().cookies()).find((c) => c.name === SESSION_COOKIE)!.value;
    const headers = { authorization: `Bearer ${token}` };
    try {
      const made = await request.post('/api/v3/media', { headers, data: { name: 'Slow installer', url: `${files.base}/throttled.iso`, kind: 'iso' } });
      expect(made.status()).toBe(200);
      mediaId = ((await made.json()) as { id: string }).id;
      await openScreen(page, 'jobs', T.jobs.heading);
      const row = page.locator('[data-testid=job-row][data-kind=media_download]').filter({ hasText: 'Slow installer' });
      await expect(row).toHaveAttribute('data-status', 'running', { timeout: scaled(30_000) });
      await expect(row).toContainText(T.jobs.kinds.media_download);
      await expect(row).toContainText('admin');
      await shot(page, 'admin-infra-jobs-running');
      await row.getByRole('button', { name: T.jobs.cancel }).click();
      await expect(page.getByRole('dialog')).toContainText('Slow installer');
      await page.getByTestId('job-cancel-confirm').click();
      await expect(page.getByRole('dialog')).toBeHidden();
      // Cancelled: gone from the running ones, listed among the finished.
      await expect(row).toHaveCount(0, { timeout: scaled(30_000) });
      await page.getByTestId('jobs-state').click();
      await page.getByRole('option', { name: T.jobs.states.finished }).click();
      const done = page.locator('[data-testid=job-row][data-kind=media_download]').filter({ hasText: 'Slow installer' });
      await expect(done).toHaveAttribute('data-status', 'aborted');
      await expect(done).toContainText(T.jobs.statuses.aborted);
      await shot(page, 'admin-infra-jobs-cancelled');
      const media = (await (await request.get(`/api/v3/media`, { headers })).json()) as { id: string; status: string }[];
      expect(media.find((m) => m.id === mediaId)?.status).toBe('DownloadFailed');
      // Its partial file went with it: the storage check finds no media file without a record.
      const check = (await (await request.get('/api/v3/admin/storage/check', { headers })).json()) as { files_without_rows: { path: string }[] };
      expect(check.files_without_rows.filter((f) => f.path.startsWith('media/'))).toEqual([]);
    } finally {
      if (mediaId) await request.delete(`/api/v3/media/${mediaId}`, { headers });
      await files.close();
    }
  });
});

test.describe('screens', () => {
  test('every infrastructure screen in English, in Catalan, at phone width, empty and failing', async ({ page, request }) => {
    test.setTimeout(scaled(180_000));
    // An administrator of the journey's own: the Catalan chosen is saved for them.
    await freshUser(request, 'infra-ca-admin', 'admin');
    await signInAs(page, 'infra-ca-admin');
    for (const s of SCREENS) {
      await openScreen(page, s.path, s.heading);
      await shot(page, `admin-infra-${s.name}-en`);
    }
    // An empty list: no job runs now.
    await openScreen(page, 'jobs', T.jobs.heading);
    await expect(page.getByTestId('empty-state')).toContainText(T.jobs.empty_active);
    await shot(page, 'admin-infra-jobs-empty');
    // Recent ones.
    await page.getByTestId('jobs-state').click();
    await page.getByRole('option', { name: T.jobs.states.finished }).click();
    await expect(page.locator('.mantine-Skeleton-root')).toHaveCount(0);
    await shot(page, 'admin-infra-jobs-finished');
    // A list that fails to load says so.
    await page.route('**/api/v3/admin/storage?*', (route) =>
      route.fulfill({ status: 409, contentType: 'application/json', body: JSON.stringify({ error: 'conflict', msg: 'Conflict', description_code: 'conflict', description: 'x', params: null }) }),
    );
    await page.goto('/isard-admin/storage');
    await expect(page.getByTestId('storage-error')).toBeVisible({ timeout: scaled(20_000) });
    await shot(page, 'admin-infra-storage-error');
    await page.unroute('**/api/v3/admin/storage?*');

    await chooseLanguage(page, 'ca-ES');
    try {
      for (const s of SCREENS) {
        await openScreen(page, s.path, s.ca);
        await shot(page, `admin-infra-${s.name}-ca`);
      }
    } finally {
      await chooseLanguage(page, 'en-US');
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(T.jobs.heading);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const s of SCREENS) {
      await openScreen(page, s.path, s.heading);
      await shot(page, `admin-infra-${s.name}-phone`);
    }
  });
});
