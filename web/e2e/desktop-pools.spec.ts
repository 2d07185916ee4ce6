import { expect, test, type APIRequestContext } from '@playwright/test';
import { personApi, stopAndDelete } from './guest-desktop';
import { apiToken, freshUser, litPixels, loginPage, scaled, shot, signInAs, userId, watchLiveReads } from './support';

// Desktop pools (issue 30): a teacher's pool keeps a desktop prepared; the person's card says "ready" (live: read again
// when the pool's desktop_pool_changed arrives) and one click opens the viewer on it, with no boot to wait for.

const PERSON = 'pool-person';
const POOL = 'E2E class pool';

/** A fresh pool of the demo template for `person` keeping one desktop prepared; answers its id once one is (`wait`; else it prepares none yet). */
async function preparedPool(request: APIRequestContext, name: string, person: string, wait = true) {
  const teacher = { authorization: `Bearer ${await apiToken(request, 'advanced')}` };
  const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers: teacher })).json()) as { id: string; name: string }[];
  const template = templates.find((x) => x.name === 'Demo Linux') ?? templates[0]!;
  const old = ((await (await request.get('/api/v3/desktop-pools', { headers: teacher })).json()) as { id: string; name: string }[]).find((x) => x.name === name);
  if (old) await request.delete(`/api/v3/desktop-pools/${old.id}`, { headers: teacher });
  const made = await request.post('/api/v3/desktop-pools', {
    headers: teacher,
    data: { name, template_id: template.id, allowed: { users: [await userId(request, person)] }, max_desktops: 2, prepared: wait ? 1 : 0 },
  });
  expect(made.ok(), await made.text()).toBe(true);
  const pool = ((await made.json()) as { id: string }).id;
  if (!wait) return pool;
  await expect
    .poll(async () => ((await (await request.get(`/api/v3/desktop-pools/${pool}`, { headers: teacher })).json()) as { counts: { prepared: number } }).counts.prepared, {
      timeout: scaled(90_000),
      intervals: [500],
    })
    .toBe(1);
  return pool;
}

/** The pool deleted (its prepared desktop goes), and the desktop the person got from it stopped and deleted. */
async function cleanUp(request: APIRequestContext, pool: string, person: string) {
  const teacher = { authorization: `Bearer ${await apiToken(request, 'advanced')}` };
  await request.delete(`/api/v3/desktop-pools/${pool}`, { headers: teacher });
  const api = personApi(person);
  const theirs = (await (await api(request, 'GET', '/user/desktops')).json()) as { id: string }[];
  for (const d of theirs) await stopAndDelete(request, api, d.id);
}

test.describe('desktop pools', () => {
  test('a person opens a prepared desktop from the pool at one click', async ({ page, context, request }) => {
    test.setTimeout(scaled(240_000));
    await freshUser(request, PERSON);
    const wire = watchLiveReads<{ id: string; state: string }>(page, 'desktop_pool_changed', '/api/v3/user/desktop-pools');
    const since = Date.now();
    const pool = await preparedPool(request, POOL, PERSON, false);
    try {
      await signInAs(page, PERSON);
      const card = page.locator(`[data-testid=pool-card][data-name="${POOL}"]`);
      await expect(card).toHaveAttribute('data-state', 'preparing');
      // The teacher has one prepared now: its guest boots, and the card turns ready by itself (read again on the pool's event, not by a poll).
      const teacher = { authorization: `Bearer ${await apiToken(request, 'advanced')}` };
      expect((await request.put(`/api/v3/desktop-pools/${pool}`, { headers: teacher, data: { prepared: 1 } })).ok()).toBe(true);
      await expect(card).toHaveAttribute('data-state', 'ready', { timeout: scaled(120_000) });
      await expect.poll(() => wire.readByEvent(since, (p) => p.id === pool && p.state === 'ready', (e) => e.pool_id === pool)).toBe('after the event');
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
      await cleanUp(request, pool, PERSON);
    }
  });

  test('a person whose sign-in takes from the pool lands on a prepared desktop’s screen', async ({ page, request }) => {
    test.setTimeout(scaled(240_000));
    const person = 'pool-at-sign-in';
    const name = 'E2E pool at sign-in';
    await freshUser(request, person);
    const pool = await preparedPool(request, name, person);
    try {
      // Chosen in the profile (the choice lists the pool beside the person's desktops).
      await signInAs(page, person);
      await page.goto('/profile');
      await page.getByTestId('sign-in-open-select').click();
      await page.getByRole('option', { name: `Take a desktop from “${name}”` }).click();
      await expect(page.getByTestId('sign-in-open-now')).toHaveText(`Next sign-in opens ${name} in the browser.`);
      await page.getByTestId('user-menu').click();
      await page.getByTestId('logout').click();

      const login = loginPage(page);
      await login.open();
      await login.signIn(person);
      await expect(page).toHaveURL(/\/viewer\/vnc\?home=1/, { timeout: scaled(30_000) });
      await expect(page.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', { timeout: scaled(30_000) });
      await expect.poll(() => litPixels(page.getByTestId('viewer-screen')), { timeout: scaled(10_000), intervals: [250] }).toBeGreaterThan(7000);
      await shot(page, 'desktop-pools-sign-in-viewer');
      await page.getByTestId('viewer-close').click();
      await expect(page).toHaveURL(/\/desktops$/);
      await expect(page.locator(`[data-testid=desktop-card][data-name="${name}"]`)).toBeVisible({ timeout: scaled(15_000) });
    } finally {
      await personApi(person)(request, 'PUT', '/user/sign-in-desktop', { open: 'group' });
      await cleanUp(request, pool, person);
    }
  });
});
