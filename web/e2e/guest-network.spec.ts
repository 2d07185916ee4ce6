import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, shot, signInAs } from './support';

// A desktop on the guest network (the "Debian desktop (RDP)" template, seeded where the server
// has the network): started, it waits for its address, then its card shows it.
const RDP_TEMPLATE_ID = '7d1f6c2e-5b0a-4c3e-9a61-3f2b8e4d0c15';
const NAME = 'RDP journey desktop';

test('a desktop on the guest network shows its address on its card', async ({ page, request }) => {
  test.setTimeout(300_000);
  const token = await apiToken(request, 'admin');
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  const allowed = await (await request.get('/api/v3/user/hardware/allowed', { headers })).json();
  test.skip(!allowed.interfaces.some((i: { id: string }) => i.id === 'wireguard'), 'this server has no guest network');
  const made = await request.post('/api/v3/persistent_desktop', { headers, data: { template_id: RDP_TEMPLATE_ID, name: NAME } });
  expect(made.ok()).toBe(true);
  const { id } = (await made.json()) as { id: string };
  try {
    await signInAs(page, 'admin');
    const card = page.locator(`[data-testid=desktop-card][data-desktop-id="${id}"]`);
    await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 30_000 });
    await card.getByTestId('desktop-action-start').click();
    await expect(card.getByTestId('desktop-ip')).toBeVisible({ timeout: 240_000 });
    await expect(card).toHaveAttribute('data-state', 'started');
    await expect(card.getByTestId('desktop-ip')).toContainText(en.desktops.address.replace(' {{ip}}', ''));
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'guest-network-card');
    await page.setViewportSize({ width: 390, height: 844 });
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'guest-network-card-phone');
  } finally {
    // The page's sign-in ended the API session (one session per user): a fresh one, which ends the page's.
    headers.authorization = `Bearer ${await apiToken(request, 'admin')}`;
    for (let i = 0; i < 2; i++) await request.get(`/api/v3/desktop/stop/${id}`, { headers });
    await expect.poll(async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((d) => d.id === id)?.state, { timeout: 60_000 }).toBe('Stopped');
    await request.delete(`/api/v3/desktop/${id}`, { headers });
  }
});
