import enToolbar from '../src/i18n/locales/viewer-toolbar/en.json' with { type: 'json' };
import deToolbar from '../src/i18n/locales/viewer-toolbar/de.json' with { type: 'json' };
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import de from '../src/i18n/locales/de.json' with { type: 'json' };
import { litPixels } from '../../server/test/helpers/rdp-clients';
import { randomBytes } from 'node:crypto';
import { openFilesPanel, sendAndFetch } from './files-support';
import { apiToken, chooseLanguage, freshUser, scaled, seriousViolations, shot, signInAs, stillScreen } from './support';
import { personApi, serial, stopAndDelete } from './guest-desktop';

// The viewer toolbar against a real guest: the "Debian desktop (RDP)" template's guest (xrdp, whose
// xrdp-chansrv carries the clipboard into its X session), opened in the browser (IronRDP). Text sent
// from the toolbar's clipboard panel is read back in the guest (`clip-show` writes the X clipboard
// to the serial console as RDP-CLIP <text>), and text the guest copies (`clip-set <text>`) shows in
// the panel. The toolbar's other tools: special keys, scaling and keyboard, files (sent and fetched
// back through the guest agent), the measured round trip; at phone width one menu; in German.

const RDP_TEMPLATE_ID = '7d1f6c2e-5b0a-4c3e-9a61-3f2b8e4d0c15';

const person = `toolbar-${Date.now().toString(36)}`;

const api = personApi(person);

/** Types a line into the session's terminal (only unshifted keys: Playwright types "$" or ">" without Shift) and waits for the guest to have read it. */
async function typeLine(viewer: Page, id: string, line: string, timeout = scaled(60_000)) {
  await viewer.locator('iron-remote-desktop canvas').click({ position: { x: 300, y: 300 } });
  await viewer.keyboard.type(line, { delay: 50 });
  await viewer.keyboard.press('Enter');
  await expect.poll(() => serial(id), { timeout }).toContain(`RDP-TYPED ${line}`);
}

test.describe('viewer toolbar', () => {
  let id = '';

  test.afterAll(async ({ request }) => {
    if (!id) return;
    await stopAndDelete(request, api, id);
  });

  test('clipboard both ways with an RDP desktop, and the toolbar’s other tools', async ({ page, context, request }) => {
    test.setTimeout(scaled(10 * 60_000));
    await freshUser(request, person);
    const allowed = await (await api(request, 'GET', '/user/hardware/allowed')).json();
    test.skip(!allowed.interfaces.some((i: { id: string }) => i.id === 'wireguard'), 'this server has no guest network');
    const made = await api(request, 'POST', '/persistent_desktop', { template_id: RDP_TEMPLATE_ID, name: 'Toolbar desktop' });
    expect(made.ok()).toBe(true);
    id = ((await made.json()) as { id: string }).id;
    await expect.poll(async () => (await api(request, 'GET', `/desktop/start/${id}`)).status(), { timeout: scaled(60_000), intervals: [2_000] }).toBe(200);
    await expect.poll(() => serial(id), { timeout: scaled(300_000), intervals: [2_000] }).toContain('RDP-DESKTOP READY');
    await expect
      .poll(async () => ((await (await api(request, 'GET', '/user/desktops')).json()) as { id: string; state: string }[]).find((d) => d.id === id)?.state, { timeout: scaled(180_000) })
      .toBe('Started');

    await signInAs(page, person);
    await page.goto(`/rdp?desktop=${id}`);
    const viewer = page;
    await expect(viewer.getByTestId('rdp-viewer')).toHaveAttribute('data-state', 'connected', { timeout: scaled(120_000) });
    await expect.poll(() => litPixels(viewer), { timeout: scaled(60_000) }).toBeGreaterThan(2_000);
    // On a loaded machine xrdp may give up on the session's X server before it listens ("VNC error -
    // problem connecting"); the session is there all the same, and a new connection (the reloaded page) reaches it.
    await expect(async () => {
      try {
        await typeLine(viewer, id, 'echo toolbar', scaled(20_000));
      } catch (err) {
        await viewer.reload();
        await expect(viewer.getByTestId('rdp-viewer')).toHaveAttribute('data-state', 'connected', { timeout: scaled(120_000) });
        await expect.poll(() => litPixels(viewer), { timeout: scaled(60_000) }).toBeGreaterThan(2_000);
        throw err;
      }
    }).toPass({ timeout: scaled(5 * 60_000) });

    // The measured round trip.
    await expect(viewer.getByTestId('viewer-latency')).toHaveAttribute('data-ms', /^\d+$/, { timeout: scaled(20_000) });

    // From the page to the desktop: the panel's text, read back in the guest.
    const toGuest = `frompage${Date.now().toString(36)}`;
    await viewer.getByTestId('viewer-clipboard').click();
    await expect(viewer.getByRole('dialog', { name: enToolbar.viewer_toolbar.panel.clipboard })).toBeVisible();
    await viewer.getByTestId('viewer-clipboard-to').fill(toGuest);
    await viewer.getByTestId('viewer-clipboard-send').click();
    await expect(viewer.getByTestId('viewer-clipboard-note')).toHaveText(enToolbar.viewer_toolbar.sent);
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-clipboard');
    await viewer.keyboard.press('Escape');
    await expect(viewer.getByRole('dialog')).toHaveCount(0);
    await typeLine(viewer, id, 'clip-show');
    await expect.poll(() => serial(id), { timeout: scaled(30_000) }).toContain(`RDP-CLIP ${toGuest}`);

    // From the desktop to the page: what the guest copies shows in the panel.
    const fromGuest = `fromguest${Date.now().toString(36)}`;
    await typeLine(viewer, id, `clip-set ${fromGuest}`);
    await viewer.getByTestId('viewer-clipboard').click();
    await expect(viewer.getByTestId('viewer-clipboard-from')).toHaveValue(fromGuest, { timeout: scaled(30_000) });
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.keyboard.press('Escape');

    // Special keys: Ctrl+Alt+F1…F12 and the Windows key in a panel of their own.
    await viewer.getByTestId('viewer-keys').click();
    await expect(viewer.getByTestId('viewer-keys-panel')).toHaveCSS('opacity', '1');
    await expect(viewer.getByTestId('viewer-key-ctrl-alt-f12')).toBeEnabled();
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-keys');
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.getByTestId('viewer-key-win').click();
    await expect(viewer.getByTestId('viewer-keys-panel')).toBeHidden();

    // Scaling and keyboard: RDP offers all three scale modes and the keyboard choice; the choice is kept.
    await viewer.getByTestId('viewer-display').click();
    await expect(viewer.getByTestId('viewer-scale-remote')).toHaveAttribute('data-checked', 'true');
    await expect(viewer.getByTestId('viewer-keyboard-scancode')).toHaveAttribute('data-checked', 'true');
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-display');
    await viewer.getByTestId('viewer-scale-real').click();
    expect(await viewer.evaluate(() => localStorage.getItem('viewer.rdp.scale'))).toBe('real');
    await viewer.getByTestId('viewer-display').click();
    await viewer.getByTestId('viewer-scale-remote').click();

    // Files: through the desktop's guest agent, the same panel as the VNC viewer's (viewer-files.spec.ts):
    // a file sent is listed and fetched back with the same bytes.
    await openFilesPanel(viewer);
    await sendAndFetch(viewer, 'from the rdp page.bin', randomBytes(256 * 1024 + 3));
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-files');
    await viewer.keyboard.press('Escape');

    // Still typing into the session after all that.
    await typeLine(viewer, id, 'echo after');

    // A phone: the tools collapse into one menu; the clipboard panel opens from it.
    await viewer.setViewportSize({ width: 390, height: 844 });
    await expect(viewer.getByTestId('viewer-clipboard')).toBeHidden();
    await viewer.getByTestId('viewer-menu').click();
    await expect(viewer.getByTestId('viewer-menu-clipboard')).toBeVisible();
    await expect(viewer.getByTestId('viewer-menu-dropdown')).toHaveCSS('opacity', '1');
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-phone-menu');
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.getByTestId('viewer-menu-clipboard').click();
    await expect(viewer.getByTestId('viewer-clipboard-from')).toHaveValue(fromGuest);
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-phone-clipboard');
    await viewer.keyboard.press('Escape');

    // In German (the person's choice, on another tab): the reopened viewer reconnects and speaks it.
    const other = await context.newPage();
    await other.goto('/desktops');
    await chooseLanguage(other, 'de-DE');
    await other.close();
    await viewer.reload();
    await expect(viewer.getByTestId('rdp-viewer')).toHaveAttribute('data-state', 'connected', { timeout: scaled(120_000) });
    await viewer.getByTestId('viewer-menu').click();
    await expect(viewer.getByTestId('viewer-menu-clipboard')).toHaveText(deToolbar.viewer_toolbar.panel.clipboard);
    await viewer.getByTestId('viewer-menu-keys').click();
    await expect(viewer.getByRole('dialog', { name: deToolbar.viewer_toolbar.panel.keys })).toBeVisible();
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-phone-keys-de');
    await viewer.keyboard.press('Escape');
    await viewer.getByTestId('viewer-menu').click();
    await openFilesPanel(viewer, 'viewer-menu-files');
    await expect(viewer.getByTestId('viewer-files-send')).toHaveText(deToolbar.viewer_toolbar.send_file);
    await expect(viewer.locator('[data-testid="viewer-file"][data-name="from the rdp page.bin"]')).toBeVisible();
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-phone-files-de');
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.keyboard.press('Escape');
    await viewer.setViewportSize({ width: 1280, height: 800 });
    await viewer.getByTestId('viewer-clipboard').click();
    await expect(viewer.getByTestId('viewer-clipboard-from')).toBeVisible();
    await stillScreen(viewer);
    await shot(viewer, 'viewer-toolbar-clipboard-de');
  });
});
