import { expect, test, type Locator, type Page } from '@playwright/test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { scaled, shot, signInAs } from './support';

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

async function stopAndWait(scope: Locator) {
  await scope.getByTestId('desktop-action-stop').click();
  try {
    await expect(scope).toHaveAttribute('data-state', 'stopped', { timeout: scaled(10_000) });
  } catch {
    await scope.getByTestId('desktop-action-forceStop').click();
    await expect(scope).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
  }
}

/**
 * Waits until the guest's own screen is up: after the firmware's text (the empty canvas before
 * the first frame does not count) the kernel blanks the screen, then the demo guest's banner
 * stays. The banner lights about 8,300 pixels of 720×400 and the firmware screen about 5,600, so
 * when we come late the banner is recognised by its size.
 */
async function waitForGuestScreen(viewer: Page) {
  let sawText = false;
  let sawBlank = false;
  let steady = 0;
  await expect
    .poll(
      async () => {
        const bright = await viewer.evaluate(() => {
          const c = document.querySelector('canvas');
          const g = c?.getContext('2d');
          if (!c || !g || !c.width) return 0;
          const d = g.getImageData(0, 0, c.width, c.height).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i]! + d[i + 1]! + d[i + 2]! > 300) n++;
          return n;
        });
        if (bright > 3000) sawText = true;
        else if (bright < 100 && sawText) sawBlank = true;
        steady = bright > 7000 || (sawBlank && bright > 3000) ? steady + 1 : 0;
        return steady;
      },
      { timeout: scaled(60_000), intervals: [500] },
    )
    .toBeGreaterThanOrEqual(4);
}

test.describe('viewers', () => {
  test('opens a started desktop in the browser (noVNC) and as a SPICE file', async ({ page, context }) => {
    test.setTimeout(scaled(150_000));
    await signInAs(page, 'user');
    const demo = card(page, 'Demo desktop');
    await demo.getByTestId('desktop-action-start').click();
    await expect(demo).toHaveAttribute('data-state', 'started', { timeout: scaled(60_000) });

    // The browser viewer opens in a new tab; its ticket travels in the fragment and is then removed.
    await expect(demo.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'browser-vnc');
    const [viewer] = await Promise.all([context.waitForEvent('page'), demo.getByTestId('desktop-open').click()]);
    await expect(viewer).toHaveURL(/\/viewer\/vnc$/);
    await expect(viewer.locator('canvas')).toBeVisible({ timeout: scaled(20_000) });
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(20_000) });
    await expect(viewer.getByTestId('viewer-name')).toHaveText('Demo desktop');
    await expect(viewer).toHaveTitle(/^Demo desktop/);
    await expect(viewer.getByTestId('viewer-ctrl-alt-del')).toBeEnabled();
    await waitForGuestScreen(viewer);
    await shot(viewer, 'viewer-vnc');

    // Typing reaches the guest: log in on its console through noVNC and write a marker to its
    // serial port, then find the marker in the machine's serial log on this host.
    const desktopId = (await demo.getAttribute('data-desktop-id'))!;
    const serialLog = join(process.env.E2E_DATA_DIR ?? join(import.meta.dirname, '..', '..', '.tmp', 'e2e-data'), 'run', desktopId, 'serial.log');
    await viewer.locator('canvas').click();
    await viewer.keyboard.type('root\n', { delay: 60 });
    await viewer.waitForTimeout(scaled(1500)); // the guest's password prompt
    await viewer.keyboard.type('demo\n', { delay: 60 });
    await viewer.waitForTimeout(scaled(2000)); // the guest's shell
    // Only unshifted keys: Playwright's type() sends "$", ">" or "S" without a Shift press;
    // /dev/console is the serial port (the last console= of the guest's kernel line).
    await viewer.keyboard.type('hostname typedin42; dd if=/proc/sys/kernel/hostname of=/dev/console\n', { delay: 40 });
    await expect.poll(() => (existsSync(serialLog) ? readFileSync(serialLog, 'utf8') : ''), { timeout: scaled(20_000) }).toContain('typedin42');
    await shot(viewer, 'viewer-vnc-typed');

    // SPICE from the viewer menu: a .vv file; the choice becomes the card's main button, also after a reload.
    await demo.getByTestId('desktop-viewers').click();
    await expect(page.getByTestId('viewer-option-browser-vnc')).toBeVisible();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('viewer-option-file-spice').click()]);
    expect(download.suggestedFilename()).toMatch(/\.vv$/);
    const content = readFileSync((await download.path())!, 'utf8');
    expect(content.startsWith('[virt-viewer]')).toBe(true);
    expect(content).toContain('type=spice');
    await expect(demo.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'file-spice');
    await page.reload();
    await expect(demo.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'file-spice');
    await expect(demo.getByTestId('desktop-open')).toHaveText(en.desktops.open_with['file-spice']);
    // Back to the browser as the remembered choice.
    await demo.getByTestId('desktop-viewers').click();
    const [again] = await Promise.all([context.waitForEvent('page'), page.getByTestId('viewer-option-browser-vnc').click()]);
    await expect(again.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(20_000) });
    await again.close();
    await expect(demo.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'browser-vnc');

    // Stopping the desktop ends the viewer's connection, which says so and offers to close the tab.
    await stopAndWait(demo);
    await expect(viewer.getByTestId('viewer-disconnected')).toBeVisible({ timeout: scaled(20_000) });
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.disconnected);
    await expect(viewer.getByTestId('viewer-close-tab')).toBeVisible();
    await shot(viewer, 'viewer-disconnected');
  });

  test('opens a desktop at rest with one click: started, and its screen in the browser as soon as it is up', async ({ page, context }) => {
    test.setTimeout(scaled(150_000));
    await signInAs(page, 'user');
    const demo = card(page, 'Demo desktop');
    await expect(demo).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
    const startOpen = demo.getByTestId('desktop-start-open');
    await expect(startOpen).toHaveText(en.desktops.start_and_open);
    // The viewer's tab opens at the click; its connection waits in the portal while the machine comes up.
    const [viewer] = await Promise.all([context.waitForEvent('page'), startOpen.click()]);
    await expect(viewer).toHaveURL(/\/viewer\/vnc$/);
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(30_000) });
    await waitForGuestScreen(viewer);
    // The "is booting" note goes as soon as the guest draws (looked at five times a second).
    await expect(viewer.getByTestId('viewer-booting')).toHaveCount(0, { timeout: scaled(1_000) });
    await expect(demo).toHaveAttribute('data-state', 'started', { timeout: scaled(30_000) });
    // Running: the card offers its viewers, not the start.
    await expect(startOpen).toHaveCount(0);
    await expect(demo.getByTestId('desktop-open')).toBeVisible();
    await viewer.close();
    await stopAndWait(demo);
    await expect(startOpen).toBeVisible();
  });

  test('the viewer page without a usable ticket explains what to do', async ({ page }) => {
    await page.goto('/viewer/vnc');
    await expect(page.getByTestId('viewer-no-ticket')).toContainText(en.viewer.no_ticket_title);
    await page.goto('/viewer/vnc#not-a-ticket');
    await page.reload();
    await expect(page.getByTestId('viewer-no-ticket')).toBeVisible();
    await expect(page.getByTestId('viewer-go-desktops')).toBeVisible();
  });
});
