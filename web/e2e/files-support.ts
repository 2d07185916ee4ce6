import { readFileSync } from 'node:fs';
import enToolbar from '../src/i18n/locales/viewer-toolbar/en.json' with { type: 'json' };
import { expect, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { scaled } from './support';

// The viewer toolbar's files panel, as the VNC and the RDP journeys use it (viewer-files.spec.ts, viewer-toolbar.spec.ts).

/** Opens the files panel and waits until the desktop's folder is listed (the agent starts with the guest: the panel's retry until then). */
export async function openFilesPanel(viewer: Page, opener = 'viewer-files') {
  await viewer.getByTestId(opener).click();
  await expect(async () => {
    const retry = viewer.getByTestId('viewer-files-retry');
    if (await retry.isVisible()) await retry.click();
    await expect(viewer.getByTestId('viewer-files-hint')).toBeVisible({ timeout: 3_000 });
  }).toPass({ timeout: scaled(90_000) });
}

/** Sends a file from the panel, sees it listed with its size, fetches it back as a download: the same bytes. */
export async function sendAndFetch(viewer: Page, name: string, bytes: Buffer) {
  await viewer.getByTestId('viewer-files-input').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: bytes });
  await expect(viewer.getByTestId('viewer-files-notice')).toHaveText(enToolbar.viewer_toolbar.file_sent.replace('{{name}}', name), { timeout: scaled(60_000) });
  const row = viewer.locator(`[data-testid="viewer-file"][data-name="${name}"]`);
  await expect(row).toBeVisible();
  const downloading = viewer.waitForEvent('download');
  await row.getByTestId('viewer-file-fetch').click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe(name);
  const path = await download.path();
  expect(readFileSync(path).equals(bytes)).toBe(true);
}

