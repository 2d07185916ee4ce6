import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, freshUser, litPixels, scaled, seriousViolations, shot, signInAs } from './support';

// A phone opens a desktop's screen: the browser (noVNC) viewer scales the guest's screen to the
// phone's, in portrait and in landscape, with its toolbar on screen and no sideways scrolling.
// A user of the journey's own, whose desktop is stopped and deleted when it ends.

test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

const person = `phone-viewer-${Date.now().toString(36)}`;
const NAME = 'Pocket desktop';

async function call(request: APIRequestContext, method: 'GET' | 'DELETE', path: string) {
  return request.fetch(`/api/v3${path}`, { method, headers: { authorization: `Bearer ${await apiToken(request, person)}` } });
}

/** The screen is drawn within the window, the page does not scroll sideways, the toolbar's controls are on screen. */
async function fitsTheScreen(viewer: Page) {
  const { width, height } = viewer.viewportSize()!;
  const canvas = viewer.getByTestId('viewer-screen').locator('canvas');
  // noVNC scales on its own resize observer, and again when the guest changes its resolution while it boots:
  // wait until the canvas has taken the new size — within the screen, and scaled to fit, using the room it has
  // (one side fills the screen's area but for rounding).
  const fill = async () => {
    const b = await canvas.boundingBox();
    const area = await viewer.getByTestId('viewer-screen').boundingBox();
    if (!b || !area || !(b.width > 0 && b.height > 0 && b.x >= 0 && b.y >= 0 && b.x + b.width <= width + 0.5 && b.y + b.height <= height + 0.5)) return 0;
    return Math.max(b.width / area.width, b.height / area.height);
  };
  await expect.poll(fill, { timeout: scaled(20_000) }).toBeGreaterThan(0.97);
  const scroll = await viewer.evaluate(() => ({ w: document.scrollingElement!.scrollWidth, h: document.scrollingElement!.scrollHeight, iw: innerWidth, ih: innerHeight }));
  expect(scroll.w, 'the page scrolls sideways').toBeLessThanOrEqual(scroll.iw);
  expect(scroll.h, 'the page scrolls down').toBeLessThanOrEqual(scroll.ih);
  // Upright (narrower than Mantine's sm, 768 px) the toolbar's tools are one menu (viewer-menu): Ctrl+Alt+Del,
  // full screen and the rest are in it; sideways they are on the bar.
  const tools = width < 768 ? ['viewer-menu'] : ['viewer-ctrl-alt-del', 'viewer-keys', 'viewer-clipboard', 'viewer-fullscreen'];
  for (const id of ['viewer-name', 'viewer-status', ...tools, 'viewer-close']) {
    const el = viewer.getByTestId(id);
    await expect(el, id).toBeVisible();
    const b = (await el.boundingBox())!;
    expect(b.x, id).toBeGreaterThanOrEqual(0);
    expect(b.y, id).toBeGreaterThanOrEqual(0);
    expect(b.x + b.width, id).toBeLessThanOrEqual(width);
    expect(b.y + b.height, id).toBeLessThanOrEqual(height);
  }
}

test.describe('phone viewer', () => {
  let desktopId = '';

  // Nothing keeps running for the journeys after this one (two cores): stop (the second stop forces) and delete.
  test.afterAll(async ({ request }) => {
    if (!desktopId) return;
    for (let i = 0; i < 2; i++) await call(request, 'GET', `/desktop/stop/${desktopId}`).catch(() => undefined);
    await expect
      .poll(async () => {
        const list = (await (await call(request, 'GET', '/user/desktops')).json().catch(() => [])) as { id: string; state: string }[];
        return list.find((d) => d.id === desktopId)?.state.toLowerCase() ?? 'gone';
      }, { timeout: scaled(60_000) })
      .toMatch(/stopped|gone/);
    await call(request, 'DELETE', `/desktop/${desktopId}/permanent`).catch(() => undefined);
  });

  test('a desktop’s screen fits a phone, upright and sideways, with the toolbar on screen', async ({ page, context, request }) => {
    test.setTimeout(scaled(5 * 60_000));
    await freshUser(request, person);
    await signInAs(page, person);

    await page.getByTestId('new-desktop').first().tap();
    await page.locator('[data-testid=new-desktop-template][data-template-name="Demo Linux"]').tap();
    await page.getByTestId('new-desktop-name').fill(NAME);
    await page.getByTestId('new-desktop-create').tap();
    await expect(page).toHaveURL(/\/desktops$/);
    const card = page.locator(`[data-testid=desktop-card][data-name="${NAME}"]`);
    await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: scaled(60_000) });
    desktopId = (await card.getAttribute('data-desktop-id'))!;
    await card.getByTestId('desktop-action-start').tap();
    await expect(card).toHaveAttribute('data-state', /started|waitingip/, { timeout: scaled(120_000) });

    await expect(card.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'browser-vnc');
    const [viewer] = await Promise.all([context.waitForEvent('page'), card.getByTestId('desktop-open').tap()]);
    await expect(viewer).toHaveURL(/\/viewer\/vnc$/);
    expect(viewer.viewportSize()).toEqual({ width: 390, height: 844 });
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(30_000) });
    // The guest has drawn its screen (firmware text or its banner), not just an empty canvas.
    await expect.poll(() => litPixels(viewer.getByTestId('viewer-screen')), { timeout: scaled(120_000), intervals: [500] }).toBeGreaterThan(3000);
    await expect(viewer.getByTestId('viewer-booting')).toBeHidden({ timeout: scaled(20_000) });
    await fitsTheScreen(viewer);
    // The state is a dot on a phone (its text for screen readers): the desktop's name is read whole.
    await expect(viewer.getByTestId('viewer-name')).toHaveText(NAME);
    expect(await viewer.getByTestId('viewer-name').evaluate((el) => el.scrollWidth <= el.clientWidth), 'the name is cut').toBe(true);
    await shot(viewer, 'phone-viewer');
    expect(await seriousViolations(viewer)).toEqual([]);

    // Turned sideways.
    await viewer.setViewportSize({ width: 844, height: 390 });
    await fitsTheScreen(viewer);
    await shot(viewer, 'phone-viewer-landscape');
    await viewer.close();
  });
});
