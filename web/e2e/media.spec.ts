import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import enCore from '../src/i18n/locales/en.json' with { type: 'json' };
import enContent from '../src/i18n/locales/content/en.json' with { type: 'json' };
import { startMediaFileServer, type MediaFileServer } from '../../server/test/helpers/media-file-server';
import { formatGb } from '../src/entities/format';
import { apiToken, scaled, shot, signInAs, stillScreen } from './support';

/** The English texts these journeys read: the core catalogue and the content area (templates, media, disks, the desktop form). */
const en = { ...enCore, ...enContent };

// `advanced` downloads installation media from a loopback web server started here (the e2e server
// runs with MEDIA_ALLOW_PRIVATE_URLS=1), follows the progress, cancels one, installs a desktop
// from another and deletes them, seeing which desktops use each.

let files: MediaFileServer;
const isoPath = process.env.VDI_TEST_IMAGES
  ? join(process.env.VDI_TEST_IMAGES, 'demo.iso')
  : join(import.meta.dirname, '..', '..', 'data', 'test-cache', 'images', 'demo.iso');

test.beforeAll(async () => {
  files = await startMediaFileServer(isoPath);
});
test.afterAll(async () => files?.close());

const row = (page: Page, name: string) => page.locator(`[data-testid=media-row][data-name="${name}"]`);

async function openMedia(page: Page) {
  await page.getByTestId('navbar').getByTestId('nav-media').click();
  await expect(page).toHaveURL(/\/media$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.media.heading);
}

async function newMedia(page: Page, name: string, url: string, opts: { share?: boolean } = {}) {
  await page.getByTestId('media-new').click();
  await expect(page).toHaveURL(/\/media\/new$/);
  await page.getByTestId('media-form-name').fill(name);
  await page.getByTestId('media-form-url').fill(url);
  if (opts.share) await page.getByTestId('media-form-share').check();
  await page.getByTestId('media-form-submit').click();
  await expect(page).toHaveURL(/\/media$/);
  await expect(row(page, name)).toBeVisible();
}

test.describe.configure({ mode: 'serial' });

test.describe('media', () => {
  test('shows empty lists with a way to start', async ({ page }) => {
    await signInAs(page, 'advanced');
    await openMedia(page);
    await expect(page.getByTestId('empty-state')).toContainText(en.media.empty_title);
    await expect(page.getByTestId('media-new-empty')).toBeVisible();
    await shot(page, 'media-empty');
    await page.getByTestId('media-tab-shared').click();
    await expect(page.getByTestId('empty-state')).toContainText(en.media.shared_empty_title);
    await shot(page, 'media-shared-empty');
  });

  test('validates the form, and shows the server\'s word on a bad address next to it', async ({ page }) => {
    await signInAs(page, 'advanced');
    await page.goto('/media/new');
    await page.getByTestId('media-form-submit').click();
    await expect(page.getByText(en.forms.required).first()).toBeVisible();
    await page.getByTestId('media-form-name').fill('Anything');
    await page.getByTestId('media-form-url').fill('not an address');
    await page.getByTestId('media-form-submit').click();
    await expect(page.getByText(en.forms.url)).toBeVisible();
    await page.getByTestId('media-form-url').fill('ftp://example.org/x.iso');
    await page.getByTestId('media-form-submit').click();
    await expect(page.getByText(en.errors.media_url_bad_format)).toBeVisible();
    await page.getByTestId('media-form-url').fill(`${files.base}/missing.iso`);
    await page.getByTestId('media-form-submit').click();
    await expect(page.getByText(en.errors.media_url_not_found)).toBeVisible();
    await shot(page, 'media-new-form-errors');
    await expect(page).toHaveURL(/\/media\/new$/);
  });

  test('downloads an ISO with a live progress bar, cancels and retries another', async ({ page }) => {
    await signInAs(page, 'advanced');
    await openMedia(page);
    files.rate.bytesPerSecond = 700 * 1024; // about 20 s for the 13 MB demo ISO
    await newMedia(page, 'Demo installer', `${files.base}/throttled.iso`, { share: true });
    const demo = row(page, 'Demo installer');
    await expect(demo).toHaveAttribute('data-status', 'Downloading');
    // The bar moves with the socket's progress events.
    const progress = demo.getByTestId('media-progress');
    await expect.poll(async () => Number(await progress.getAttribute('data-percent')), { timeout: scaled(15_000) }).toBeGreaterThan(15);
    await expect(demo.getByTestId('media-throughput')).toContainText('/s');
    await expect(demo.getByTestId('media-throughput')).toContainText('left');
    await shot(page, 'media-downloading');

    // A second, slow one is cancelled, then downloaded again.
    files.rate.bytesPerSecond = 300 * 1024;
    await newMedia(page, 'Cancelled ISO', `${files.base}/throttled.iso`);
    const cancelled = row(page, 'Cancelled ISO');
    await expect(cancelled).toHaveAttribute('data-status', 'Downloading');
    await cancelled.getByTestId('media-abort').click();
    await expect(cancelled).toHaveAttribute('data-status', 'DownloadFailed');
    await expect(cancelled.getByTestId('media-failure')).toHaveText(en.media.failure.download_aborted);
    await expect(cancelled.getByTestId('media-retry')).toBeVisible();
    await shot(page, 'media-failed');

    files.rate.bytesPerSecond = 32 * 1024 * 1024;
    await expect(demo).toHaveAttribute('data-status', 'Downloaded', { timeout: scaled(30_000) });
    await expect(demo.getByTestId('media-status')).toHaveText(en.media.status.Downloaded);
    // The size of the file served, as the portal writes it (the demo ISO is some 13 to 16 MB).
    await expect(demo.getByTestId('media-size')).toHaveText(`${formatGb(statSync(isoPath).size)} GB`);
    await cancelled.getByTestId('media-retry').click();
    await expect(cancelled).toHaveAttribute('data-status', 'Downloaded', { timeout: scaled(30_000) });

    // Deleting a media no desktop uses.
    await cancelled.getByTestId('media-delete').click();
    const modal = page.getByRole('dialog');
    await expect(modal).toContainText('Delete Cancelled ISO');
    await expect(modal.getByTestId('media-delete-no-desktops')).toBeVisible();
    await modal.getByTestId('media-delete-confirm').click();
    await expect(modal).toBeHidden();
    await expect(cancelled).toHaveCount(0);
    // The search needs two letters.
    await page.getByTestId('media-search').fill('d');
    await expect(page.getByText('Type at least 2 letters to search')).toBeVisible();
    await page.getByTestId('media-search').fill('zz');
    await expect(page.getByTestId('empty-state')).toContainText(en.media.no_match_title);
    await page.getByTestId('media-search').fill('demo');
    await expect(demo).toBeVisible();
    await page.getByTestId('media-search').fill('');
    await shot(page, 'media-list');
  });

  test('a manager of the category sees the shared media in the second tab', async ({ page }) => {
    await signInAs(page, 'manager');
    await openMedia(page);
    await expect(page.getByTestId('empty-state')).toContainText(en.media.empty_title);
    await page.getByTestId('media-tab-shared').click();
    const demo = row(page, 'Demo installer');
    await expect(demo).toBeVisible();
    await expect(demo).toContainText('Teo Teacher');
    await shot(page, 'media-shared');
  });

  test('creates a desktop from the downloaded ISO, then deletes the media, seeing that desktop in the modal', async ({ page, request }) => {
    await signInAs(page, 'advanced');
    await openMedia(page);
    const demo = row(page, 'Demo installer');
    await demo.getByTestId('media-new-desktop').click();
    await expect(page).toHaveURL(/\/media\/desktop\/new\?media=/);
    await expect(page.getByTestId('media-desktop-media')).toHaveValue('Demo installer');
    await page.getByTestId('media-desktop-name').fill('ab');
    await page.getByTestId('media-desktop-submit').click();
    await expect(page.getByText('At least 4 characters (now 2)')).toBeVisible();
    await page.getByTestId('media-desktop-name').fill('Installer desktop');
    await page.getByTestId('media-desktop-description').fill('Installs from the demo CD');
    await page.getByTestId('media-desktop-disk').fill('2');
    await page.getByTestId('media-desktop-memory').fill('1.5');
    await shot(page, 'media-new-desktop');
    await page.getByTestId('media-desktop-submit').click();
    await expect(page).toHaveURL(/\/desktops$/);
    const card = page.locator('[data-testid=desktop-card][data-name="Installer desktop"]');
    await expect(card).toBeVisible();
    await expect(card.getByTestId('desktop-state')).toHaveText(en.desktops.states.stopped);

    await openMedia(page);
    await demo.getByTestId('media-delete').click();
    const modal = page.getByRole('dialog');
    await expect(modal.getByTestId('media-delete-desktop')).toHaveCount(1);
    await expect(modal.getByTestId('media-delete-desktop')).toContainText('Installer desktop');
    await expect(modal.getByTestId('media-delete-desktop')).toContainText('Teo Teacher');
    await expect(modal).toContainText(en.media.delete.detach);
    // Once the modal has faded in and the notice of the creation is gone.
    await expect(page.locator('.mantine-Notification-root')).toHaveCount(0, { timeout: scaled(5_000) });
    await stillScreen(page);
    await shot(page, 'media-delete-modal');
    await modal.getByTestId('media-delete-confirm').click();
    await expect(modal).toBeHidden();
    await expect(page.getByTestId('empty-state')).toContainText(en.media.empty_title);
    await expect(page.getByTestId('media-new-desktop-header')).toBeVisible();

    // The desktop stays, without its media; the journeys after this one do not need it.
    const token = await apiToken(request, 'advanced');
    const headers = { authorization: `Bearer ${token}` };
    const list = (await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string }[];
    const installer = list.find((d) => d.name === 'Installer desktop')!;
    expect((await request.delete(`/api/v3/desktop/${installer.id}`, { headers })).ok()).toBe(true);
  });
});
