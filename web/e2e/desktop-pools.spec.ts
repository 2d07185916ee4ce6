import { expect, test } from '@playwright/test';
import { apiToken, freshUser, litPixels, scaled, shot, signInAs, userId } from './support';

// Desktop pools (issue 30): a teacher's pool keeps a desktop prepared; the person's card says "ready" and one click
// opens the viewer on it, with no boot to wait for.

const PERSON = 'pool-person';
const POOL = 'E2E class pool';

test.describe('desktop pools', () => {
  test('a person opens a prepared desktop from the pool at one click', async ({ page, context, request }) => {
    test.setTimeout(scaled(240_000));
    await freshUser(request, PERSON);
    const teacher = { authorization: `Bearer ${await apiToken(request, 'advanced')}` };
    const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers: teacher })).json()) as { id: string; name: string }[];
    const template = templates.find((x) => x.name === 'Demo Linux') ?? templates[0]!;
    const old = ((await (await request.get('/api/v3/desktop-pools', { headers: teacher })).json()) as { id: string; name: string }[]).find((x) => x.name === POOL);
    if (old) await request.delete(`/api/v3/desktop-pools/${old.id}`, { headers: teacher });
    const made = await request.post('/api/v3/desktop-pools', {
      headers: teacher,
      data: { name: POOL, template_id: template.id, allowed: { users: [await userId(request, PERSON)] }, max_desktops: 2, prepared: 1 },
    });
    expect(made.ok(), await made.text()).toBe(true);
    const pool = ((await made.json()) as { id: string }).id;
    try {
      await expect
        .poll(async () => ((await (await request.get(`/api/v3/desktop-pools/${pool}`, { headers: teacher })).json()) as { counts: { prepared: number } }).counts.prepared, {
          timeout: scaled(90_000),
          intervals: [500],
        })
        .toBe(1);
      await signInAs(page, PERSON);
      const card = page.locator(`[data-testid=pool-card][data-name="${POOL}"]`);
      await expect(card).toHaveAttribute('data-state', 'ready');
      await expect(card.getByTestId('pool-state')).toHaveText('Ready now (1)');
      await shot(page, 'desktop-pools-card');
      const [viewer] = await Promise.all([context.waitForEvent('page'), card.getByTestId('pool-take').click()]);
      await expect(viewer).toHaveURL(/\/viewer\/vnc/, { timeout: scaled(30_000) });
      await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', { timeout: scaled(30_000) });
      // A prepared desktop: the guest's own screen at once (its banner lights about 8,300 pixels; the firmware's text 5,600).
      await expect.poll(() => litPixels(viewer.getByTestId('viewer-screen')), { timeout: scaled(10_000), intervals: [250] }).toBeGreaterThan(7000);
      await shot(viewer, 'desktop-pools-viewer');
      await viewer.close();
      // The desktop is the person's now: in their list; the pool's card is gone (they hold its desktop).
      await expect(page.locator(`[data-testid=desktop-card][data-name="${POOL}"]`)).toBeVisible({ timeout: scaled(15_000) });
      await expect(card).toHaveCount(0, { timeout: scaled(15_000) });
    } finally {
      await request.delete(`/api/v3/desktop-pools/${pool}`, { headers: teacher });
    }
  });
});
