import { expect, test, type APIRequestContext } from '@playwright/test';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, litPixels, scaled, shot } from './support';

const dataDir = process.env.E2E_DATA_DIR ?? join(import.meta.dirname, '..', '..', '.tmp', 'e2e-data');

async function startedDesktop(request: APIRequestContext, token: string, name: string) {
  const headers = { authorization: `Bearer ${token}` };
  const list = (await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string; state: string }[];
  const id = list.find((d) => d.name === name)!.id;
  const start = await request.get(`/api/v3/desktop/start/${id}`, { headers });
  expect([200, 409]).toContain(start.status());
  await expect
    .poll(async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((d) => d.id === id)!.state, { timeout: scaled(60_000) })
    .toBe('Started');
  return id;
}

/** The browser viewer answer, as a client of the original system asks for it. */
async function viewerAnswer(request: APIRequestContext, token: string, id: string) {
  const res = await request.get(`/api/v3/desktop/${id}/viewer/browser-vnc`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status()).toBe(200);
  return (await res.json()) as { kind: string; protocol: string; viewer: string; urlp: string; cookie: string; values: Record<string, unknown> };
}

test.describe('the browser viewer, opened the original way', () => {
  test('a browser_viewer cookie and the viewer URL without a fragment show the guest screen', async ({ page, request, context, baseURL }) => {
    test.setTimeout(scaled(120_000));
    const token = await apiToken(request, 'user');
    const id = await startedDesktop(request, token, 'Demo desktop');
    const answer = await viewerAnswer(request, token, id);
    expect(answer).toMatchObject({ kind: 'browser', protocol: 'vnc' });

    // What the original portal does: cookies.setCookie('browser_viewer', answer.cookie), then open answer.viewer.
    await context.addCookies([{ name: 'browser_viewer', value: answer.cookie, url: baseURL! }]);
    await page.goto(answer.viewer);
    await expect(page).toHaveURL(/\/viewer\/vnc$/);
    await expect(page.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(20_000) });
    await expect(page.getByTestId('viewer-name')).toHaveText('Demo desktop');
    // The guest's screen is drawn (the firmware's or the guest's text, not an empty canvas).
    await expect.poll(() => litPixels(page.getByTestId('viewer-screen')), { timeout: scaled(60_000) }).toBeGreaterThan(1000);
    await shot(page, 'viewer-browser-viewer-cookie');
    // The ticket is single-use and holds a password: the page does not leave it in the cookie jar.
    expect((await context.cookies()).find((c) => c.name === 'browser_viewer')).toBeUndefined();
  });

  test('the page says why when the bridge closes with a reason (the screen cannot be reached)', async ({ page, request, context, baseURL }) => {
    test.setTimeout(scaled(120_000));
    const token = await apiToken(request, 'user');
    const id = await startedDesktop(request, token, 'Demo desktop');
    const answer = await viewerAnswer(request, token, id);
    const socket = join(dataDir, 'run', id, 'vnc.sock');
    expect(existsSync(socket)).toBe(true);
    renameSync(socket, `${socket}.away`);
    try {
      await context.addCookies([{ name: 'browser_viewer', value: answer.cookie, url: baseURL! }]);
      await page.goto(answer.viewer);
      await expect(page.getByTestId('viewer-disconnected')).toBeVisible({ timeout: scaled(10_000) });
      await expect(page.getByTestId('viewer-ended')).toHaveAttribute('data-reason', 'viewer_display_unreachable');
      await expect(page.getByTestId('viewer-ended')).toHaveText(en.errors.viewer_display_unreachable);
      await shot(page, 'viewer-close-reason');
    } finally {
      renameSync(`${socket}.away`, socket);
    }
    // Our own web opens the same answer by its fragment (urlp), and the screen is back.
    const again = await viewerAnswer(request, token, id);
    await page.goto('about:blank');
    await page.goto(again.urlp);
    await expect(page.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(20_000) });

    // Stopped (a second stop is the hard one), the machine leaves nothing running behind the suite.
    for (let i = 0; i < 2; i++) await request.get(`/api/v3/desktop/stop/${id}`, { headers: { authorization: `Bearer ${token}` } });
    await expect(page.getByTestId('viewer-disconnected')).toBeVisible({ timeout: scaled(30_000) });
  });
});
