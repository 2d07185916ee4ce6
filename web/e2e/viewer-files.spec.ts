import enToolbar from '../src/i18n/locales/viewer-toolbar/en.json' with { type: 'json' };
import { randomBytes } from 'node:crypto';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, freshUser, scaled, seriousViolations, shot, signInAs, stillScreen } from './support';
import { personApi, serial, stopAndDelete } from './guest-desktop';
import { openFilesPanel, sendAndFetch } from './files-support';

// The viewer toolbar's files panel against a real guest (issue 28): the "Demo Linux" desktop (the demo
// guest runs QEMU's guest agent) in the browser's VNC viewer. A file chosen in the panel is sent into
// the desktop (its transfer folder) with a progress bar, shows in the folder's list with its size, and
// comes back as a download with the same bytes; a phone's drawer too. The RDP viewer's panel is the same
// component (viewer-toolbar.spec.ts sends and fetches there, and shows it in German).

const person = `files-${Date.now().toString(36)}`;

const api = personApi(person);

test.describe('viewer files panel', () => {
  let id = '';

  test.afterAll(async ({ request }) => {
    if (!id) return;
    await stopAndDelete(request, api, id);
  });

  test('sends a file to a VNC desktop and fetches it back; phone drawer', async ({ page, request }) => {
    test.setTimeout(scaled(8 * 60_000));
    await freshUser(request, person);
    const templates = (await (await api(request, 'GET', '/user/templates/allowed/all')).json()) as { id: string; name: string }[];
    const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0]!;
    const made = await api(request, 'POST', '/persistent_desktop', { template_id: template.id, name: 'Files desktop' });
    expect(made.ok()).toBe(true);
    id = ((await made.json()) as { id: string }).id;
    await expect.poll(async () => (await api(request, 'GET', `/desktop/start/${id}`)).status(), { timeout: scaled(60_000), intervals: [2_000] }).toBe(200);
    await expect.poll(() => serial(id), { timeout: scaled(180_000), intervals: [1_000] }).toContain('DEMO-DESKTOP READY');

    const answer = (await (await api(request, 'GET', `/desktop/${id}/viewer/browser-vnc`)).json()) as { urlp: string };
    await signInAs(page, person);
    await page.goto(answer.urlp);
    const viewer = page;
    await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', { timeout: scaled(60_000) });

    await openFilesPanel(viewer);
    await expect(viewer.getByTestId('viewer-files-hint')).toContainText('/srv/Transfer');
    await expect(viewer.getByTestId('viewer-files-empty')).toHaveText(enToolbar.viewer_toolbar.folder_empty);
    const bytes = randomBytes(3 * 1024 * 1024 + 777);
    await sendAndFetch(viewer, 'notes from the browser.bin', bytes);
    await expect(viewer.getByTestId('viewer-file')).toContainText('3 MB');
    await stillScreen(viewer);
    await shot(viewer, 'viewer-files-vnc');
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.keyboard.press('Escape');

    // A phone: the panel opens from the one menu, as a drawer.
    await viewer.setViewportSize({ width: 390, height: 844 });
    await viewer.getByTestId('viewer-menu').click();
    await openFilesPanel(viewer, 'viewer-menu-files');
    await expect(viewer.locator('[data-testid="viewer-file"][data-name="notes from the browser.bin"]')).toBeVisible();
    await stillScreen(viewer);
    await shot(viewer, 'viewer-files-vnc-phone');
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.keyboard.press('Escape');

  });
});
