import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { apiToken, chooseLanguage, freshUser, scaled, shot, signInAs, stillScreen, userId, watchLiveReads, windowShot } from './support';

// The desktop pools' screen (issue 30), in the console and in the portal: an admin makes a pool in the form and sees
// its desktop become prepared live (a pool too large refused first), changes it (prepared 0: the prepared desktop goes), deletes it; a teacher sees
// only the pools they manage, in German at phone width too. Live means by the socket: the screen reads the pools again
// when desktop_pool_changed arrives (its own poll is a 30 s fallback), which the journey checks on the wire.

const POOL = 'E2E console pool';
const TEACHER = 'pools-teacher';
const PERSON = 'pools-console-person';

type Pool = { id: string; name: string; max_desktops: number; counts: { prepared: number; preparing: number } };
const as = async (request: APIRequestContext, username: string) => ({ authorization: `Bearer ${await apiToken(request, username)}` });
async function poolsOf(request: APIRequestContext, headers: Record<string, string>): Promise<Pool[]> {
  return (await (await request.get('/api/v3/desktop-pools', { headers })).json()) as Pool[];
}
/** Deletes the pools of these names the user manages (an earlier run's too): their desktops not given to anybody go with them. */
async function removePools(request: APIRequestContext, username: string, names: string[]) {
  const headers = await as(request, username);
  for (const p of await poolsOf(request, headers)) if (names.includes(p.name)) expect((await request.delete(`/api/v3/desktop-pools/${p.id}`, { headers })).ok()).toBe(true);
}
const cardOf = (page: Page, name: string) => page.locator(`[data-testid=pool-admin-card][data-name="${name}"]`);

test.describe('desktop pools: the screen', () => {
  test('an admin makes a pool in the console, sees it prepare live, edits and deletes it', async ({ page, request }) => {
    test.setTimeout(scaled(300_000));
    await freshUser(request, PERSON);
    await removePools(request, 'admin', [POOL]);
    const wire = watchLiveReads<Pool>(page, 'desktop_pool_changed', '/api/v3/desktop-pools');
    try {
      await signInAs(page, 'admin');
      await page.goto('/isard-admin/desktop_pools');
      await expect(page.getByTestId('admin-nav-desktop_pools')).toBeVisible();
      await page.getByTestId('pools-new').first().click();
      const form = page.getByRole('dialog');
      await expect(form).toBeVisible();
      await form.getByTestId('pool-form-name').fill(POOL);
      await form.getByTestId('pool-form-template').click();
      await page.getByRole('option', { name: 'Demo Linux' }).click();
      // Shared with one person (searched by name).
      await form.getByTestId('sharing-users').check();
      await form.getByTestId('sharing-users-search').fill('pools-console');
      await page.getByRole('option', { name: new RegExp(PERSON) }).click();
      await form.getByTestId('pool-form-prepared').fill('1');
      // Larger than the limits and the hosts hold: the server's refusal in the catalogue's words, the form stays open.
      await form.getByTestId('pool-form-max').fill('500');
      await form.getByTestId('pool-form-submit').click();
      await expect(page.locator('.mantine-Notification-root').getByText(/at most \d+ desktops of this template/)).toBeVisible();
      await expect(form).toBeVisible();
      await form.getByTestId('pool-form-max').fill('2');
      // A timetable row, added and removed again (the pool keeps 1 prepared at all times).
      await form.getByTestId('pool-schedule-add').click();
      await expect(form.getByTestId('pool-schedule-row')).toHaveCount(1);
      await stillScreen(page);
      await windowShot(page, 'desktop-pools-form');
      await form.getByTestId('pool-form-submit').scrollIntoViewIfNeeded();
      await stillScreen(page);
      await shot(page, 'desktop-pools-form-lower');
      await form.getByTestId('pool-schedule-remove').click();
      await expect(form.getByTestId('pool-schedule-empty')).toBeVisible();
      await form.getByTestId('pool-form-submit').click();
      await expect(form).toHaveCount(0);
      const made = Date.now();

      // Live: the screen reads the numbers again at each event of the pool until the desktop is booted and waiting.
      const card = cardOf(page, POOL);
      await expect(card).toBeVisible();
      await expect(card.getByTestId('pool-count-prepared')).toHaveAttribute('data-value', '1', { timeout: scaled(120_000) });
      const poolId = (await card.getAttribute('data-id'))!;
      await expect.poll(() => wire.readByEvent(made, (p) => p.id === poolId && p.counts.prepared === 1, (e) => e.pool_id === poolId)).toBe('after the event');
      // Changed elsewhere (another tab, another manager): this screen shows it without reloading, read on the event.
      const edited = Date.now();
      // (A manager of the organisation: an admin's sign-in through the API would end the page's session.)
      const put = await request.put(`/api/v3/desktop-pools/${poolId}`, { headers: await as(request, 'manager'), data: { max_desktops: 3 } });
      expect(put.ok(), await put.text()).toBe(true);
      await expect(card.getByTestId('pool-target')).toHaveText('Aims at 1 prepared now · at most 3 desktops');
      await expect.poll(() => wire.readByEvent(edited, (p) => p.id === poolId && p.max_desktops === 3, (e) => e.pool_id === poolId)).toBe('after the event');
      await expect(card.getByTestId('pool-count-prepared')).toHaveText('1 prepared');
      await expect(card.getByTestId('pool-host').first()).toContainText('1 prepared');
      await expect(card.getByTestId('pool-target')).toHaveText('Aims at 1 prepared now · at most 3 desktops');
      await expect(card.getByTestId('pool-target-mark')).toBeVisible();
      await expect(card.getByTestId('pool-kind')).toHaveText('Fresh each time');
      await expect(card.getByTestId('pool-who')).toContainText('1 user');
      await stillScreen(page);
      await shot(page, 'desktop-pools-console');
      // The dark theme too (the choice this browser keeps), then back to light.
      for (const scheme of ['dark', 'light']) {
        await page.evaluate((v) => localStorage.setItem('mantine-color-scheme-value', v), scheme);
        await page.reload();
        await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', scheme);
        await expect(card.getByTestId('pool-count-prepared')).toHaveAttribute('data-value', '1');
        if (scheme === 'dark') await stillScreen(page).then(() => shot(page, 'desktop-pools-console-dark'));
      }

      // Prepared 0: the prepared desktop goes.
      await card.getByTestId('pool-actions').click();
      await page.getByTestId('pool-edit').click();
      await expect(form.getByTestId('pool-form-name')).toHaveValue(POOL);
      await form.getByTestId('pool-form-prepared').fill('0');
      await form.getByTestId('pool-form-submit').click();
      await expect(form).toHaveCount(0);
      await expect(card.getByTestId('pool-count-prepared')).toHaveAttribute('data-value', '0', { timeout: scaled(90_000) });
      await expect(card.getByTestId('pool-count-preparing')).toHaveAttribute('data-value', '0');
      await expect(card.getByTestId('pool-host')).toHaveCount(0);
      await expect(card.getByTestId('pool-target-mark')).toHaveCount(0);

      // Deleted after a confirmation that says what goes and what stays.
      await card.getByTestId('pool-actions').click();
      await page.getByTestId('pool-delete').click();
      const confirm = page.getByRole('dialog');
      await expect(confirm).toContainText('removed for good');
      await expect(confirm).toContainText('stay theirs');
      await stillScreen(page);
      await shot(page, 'desktop-pools-delete');
      await confirm.getByTestId('pool-delete-confirm-button').click();
      await expect(card).toHaveCount(0);
      expect((await poolsOf(request, await as(request, 'admin'))).find((p) => p.name === POOL)).toBeUndefined();
    } finally {
      await removePools(request, 'admin', [POOL]);
    }
  });

  test('a teacher sees only their own pools, in the portal; in German at phone width', async ({ page, request }) => {
    test.setTimeout(scaled(180_000));
    await freshUser(request, TEACHER, 'advanced');
    const mine = 'E2E teacher pool';
    const theirs = 'E2E admin pool';
    await removePools(request, TEACHER, [mine]);
    await removePools(request, 'admin', [theirs]);
    const teacher = await as(request, TEACHER);
    const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers: teacher })).json()) as { id: string; name: string }[];
    const template = (templates.find((x) => x.name === 'Demo Linux') ?? templates[0])!;
    // Nothing prepared: no guest boots for this test.
    const body = (name: string) => ({ name, template_id: template.id, allowed: { users: [] as string[] }, max_desktops: 3, prepared: 0, schedule: [{ days: [1, 2, 3, 4, 5], from: '08:45', to: '14:00', prepared: 2 }] });
    try {
      const made = await request.post('/api/v3/desktop-pools', { headers: teacher, data: { ...body(mine), persistent: true, allowed: { users: [await userId(request, TEACHER)] } } });
      expect(made.ok(), await made.text()).toBe(true);
      const other = await request.post('/api/v3/desktop-pools', { headers: await as(request, 'admin'), data: { ...body(theirs), allowed: { users: [] } } });
      expect(other.ok(), await other.text()).toBe(true);

      await signInAs(page, TEACHER);
      await page.getByTestId('nav-pools').click();
      await expect(page).toHaveURL(/\/pools$/);
      await expect(cardOf(page, mine)).toBeVisible();
      await expect(cardOf(page, mine).getByTestId('pool-kind')).toHaveText('Persistent');
      await expect(page.getByTestId('pool-admin-card')).toHaveCount(1);
      await expect(cardOf(page, theirs)).toHaveCount(0);

      await chooseLanguage(page, 'de-DE');
      await page.setViewportSize({ width: 390, height: 844 });
      await expect(page.getByRole('heading', { name: 'Desktop-Pools' })).toBeVisible();
      await expect(cardOf(page, mine).getByTestId('pool-kind')).toHaveText('Dauerhaft');
      await stillScreen(page);
      await shot(page, 'desktop-pools-de-phone');
      await cardOf(page, mine).getByTestId('pool-actions').click();
      await page.getByTestId('pool-edit').click();
      await expect(page.getByRole('dialog').getByTestId('pool-schedule-row')).toHaveCount(1);
      await stillScreen(page);
      await shot(page, 'desktop-pools-form-de-phone');
    } finally {
      await removePools(request, TEACHER, [mine]);
      await removePools(request, 'admin', [theirs]);
    }
  });
});
