import enToolbar from '../src/i18n/locales/viewer-toolbar/en.json' with { type: 'json' };
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { DEFAULT_GUEST_CREDENTIALS } from '@vdi/contracts';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, freshUser, scaled, seriousViolations, shot, signInAs, stillScreen } from './support';
import { personApi, serial, stopAndDelete } from './guest-desktop';

// The browser VNC viewer's clipboard against a real guest: the "Debian desktop (RDP)" template's guest
// also has VNC (QEMU's VNC server, its console on tty1). QEMU's qemu-vdagent carries the clipboard
// between noVNC's (extended) cut text and the guest's spice-vdagent, which keeps it on an X display
// of its own (:5). Text sent from the toolbar's clipboard panel is read back in the guest
// (`clip-show` on the console writes the X clipboard to the serial console as RDP-CLIP <text>), and
// text the guest copies (`clip-set <text>`) shows in the panel.

const RDP_TEMPLATE_ID = '7d1f6c2e-5b0a-4c3e-9a61-3f2b8e4d0c15';

const person = `vncclip-${Date.now().toString(36)}`;

const api = personApi(person);

/** Types a line on the guest's console through noVNC (unshifted keys only) and waits for its shell to have read it. */
async function typeLine(viewer: Page, id: string, line: string, timeout = scaled(60_000)) {
  await viewer.locator('canvas').click();
  await viewer.keyboard.type(line, { delay: 50 });
  await viewer.keyboard.press('Enter');
  await expect.poll(() => serial(id), { timeout }).toContain(`RDP-TYPED ${line}`);
}

test.describe('VNC viewer clipboard', () => {
  let id = '';

  test.afterAll(async ({ request }) => {
    if (!id) return;
    await stopAndDelete(request, api, id);
  });

  test('clipboard both ways between the toolbar’s panel and the guest, through QEMU’s clipboard agent', async ({ page, request }) => {
    test.setTimeout(scaled(8 * 60_000));
    await freshUser(request, person);
    const allowed = await (await api(request, 'GET', '/user/hardware/allowed')).json();
    test.skip(!allowed.interfaces.some((i: { id: string }) => i.id === 'wireguard'), 'this server has no guest network');
    const made = await api(request, 'POST', '/persistent_desktop', { template_id: RDP_TEMPLATE_ID, name: 'VNC clipboard desktop' });
    expect(made.ok()).toBe(true);
    id = ((await made.json()) as { id: string }).id;
    await expect.poll(async () => (await api(request, 'GET', `/desktop/start/${id}`)).status(), { timeout: scaled(60_000), intervals: [2_000] }).toBe(200);
    await expect.poll(() => serial(id), { timeout: scaled(300_000), intervals: [2_000] }).toContain('RDP-DESKTOP READY');
    // The guest found QEMU's agent port and started its clipboard agent (in the background of its boot).
    await expect.poll(() => serial(id), { timeout: scaled(60_000) }).toContain('RDP-CLIPBOARD-AGENT started display=:5');
    await expect
      .poll(async () => ((await (await api(request, 'GET', '/user/desktops')).json()) as { id: string; state: string }[]).find((d) => d.id === id)?.state, { timeout: scaled(180_000) })
      .toBe('Started');

    // The browser VNC viewer, as the desktop's viewer menu opens it (a one-time ticket in the fragment).
    await signInAs(page, person);
    const answer = (await (await api(request, 'GET', `/desktop/${id}/viewer/browser-vnc`)).json()) as { kind: string; viewer: string; cookie: string };
    expect(answer.kind).toBe('browser');
    const viewer = page;
    await viewer.goto(`${answer.viewer}#${answer.cookie}`);
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(30_000) });

    // Sign in on the console (tty1) with the desktop's guest credentials; its shell tells each line on the serial console.
    const { username, password } = DEFAULT_GUEST_CREDENTIALS;
    await expect(async () => {
      await viewer.locator('canvas').click();
      await viewer.keyboard.type(`${username}\n`, { delay: 60 });
      await viewer.keyboard.type(`${password}\n`, { delay: 60 });
      await expect.poll(() => serial(id), { timeout: scaled(15_000) }).toContain(`RDP-CONSOLE login user=${username}`);
    }).toPass({ timeout: scaled(120_000) });
    await typeLine(viewer, id, 'echo console');

    // From the page to the guest: the panel's text, read back in the guest.
    const toGuest = `frompage${Date.now().toString(36)}`;
    await viewer.getByTestId('viewer-clipboard').click();
    await expect(viewer.getByRole('dialog', { name: enToolbar.viewer_toolbar.panel.clipboard })).toBeVisible();
    await viewer.getByTestId('viewer-clipboard-to').fill(toGuest);
    await viewer.getByTestId('viewer-clipboard-send').click();
    await expect(viewer.getByTestId('viewer-clipboard-note')).toHaveText(enToolbar.viewer_toolbar.sent);
    await stillScreen(viewer);
    await shot(viewer, 'viewer-vnc-clipboard-sent');
    await viewer.keyboard.press('Escape');
    await expect(viewer.getByRole('dialog')).toHaveCount(0);
    await typeLine(viewer, id, 'clip-show');
    await expect.poll(() => serial(id), { timeout: scaled(30_000) }).toContain(`RDP-CLIP ${toGuest}`);

    // From the guest to the page: what the guest copies shows in the panel.
    const fromGuest = `fromguest${Date.now().toString(36)}`;
    await typeLine(viewer, id, `clip-set ${fromGuest}`);
    await viewer.getByTestId('viewer-clipboard').click();
    await expect(viewer.getByTestId('viewer-clipboard-from')).toHaveValue(fromGuest, { timeout: scaled(30_000) });
    await expect(viewer.getByTestId('viewer-clipboard-copy')).toBeEnabled();
    await stillScreen(viewer);
    await shot(viewer, 'viewer-vnc-clipboard-received');
    expect(await seriousViolations(viewer)).toEqual([]);
    await viewer.keyboard.press('Escape');

    // Again the other way, at phone width (the panel from the one menu): the last text wins, beyond ASCII too (UTF-8 all the way).
    const again = `again${Date.now().toString(36)}-ñandú-€`;
    await viewer.setViewportSize({ width: 390, height: 844 });
    await viewer.getByTestId('viewer-menu').click();
    await viewer.getByTestId('viewer-menu-clipboard').click();
    await expect(viewer.getByTestId('viewer-clipboard-from')).toHaveValue(fromGuest);
    await viewer.getByTestId('viewer-clipboard-to').fill(again);
    await viewer.getByTestId('viewer-clipboard-send').click();
    await expect(viewer.getByTestId('viewer-clipboard-note')).toHaveText(enToolbar.viewer_toolbar.sent);
    await stillScreen(viewer);
    await shot(viewer, 'viewer-vnc-clipboard-phone');
    await viewer.keyboard.press('Escape');
    await typeLine(viewer, id, 'clip-show');
    await expect.poll(() => serial(id), { timeout: scaled(30_000) }).toContain(`RDP-CLIP ${again}`);
  });
});
