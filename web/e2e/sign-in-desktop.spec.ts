import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { personApi, stopAndDelete } from './guest-desktop';
import { apiToken, litPixels, loginPage, PASSWORD, scaled, shot, signInAs } from './support';

// "My desktop at sign-in" (issue 30): a group opens its members' only desktop at sign-in, in the browser viewer;
// each person may choose otherwise in the profile.

const GROUP = 'E2E opens at sign-in';
const USER = 'signin-opens';

async function admin(request: APIRequestContext) {
  return { authorization: `Bearer ${await apiToken(request, 'admin')}` };
}

/** The journey's group (its option off to begin with) and its one member with one desktop; answers the desktop's id. */
async function setUp(request: APIRequestContext) {
  const headers = await admin(request);
  const found = (await (await request.get(`/api/v3/admin/groups?search=${encodeURIComponent(GROUP)}`, { headers })).json()) as { items: { id: string; name: string }[] };
  let group = found.items.find((g) => g.name === GROUP)?.id;
  if (!group) {
    const made = await request.post('/api/v3/admin/groups', { headers, data: { name: GROUP, category: 'default' } });
    expect(made.ok()).toBe(true);
    group = ((await made.json()) as { id: string }).id;
  }
  expect((await request.put(`/api/v3/admin/groups/${group}`, { headers, data: { open_desktop_at_sign_in: false } })).ok()).toBe(true);
  const res = await request.post('/api/v3/admin/users', {
    headers,
    data: { username: USER, name: 'Opens at sign-in (e2e)', email: `${USER}@example.org`, role: 'user', category: 'default', group, password: PASSWORD },
  });
  if (!res.ok()) expect((await res.json()).description_code).toBe('username_exists');
  const mine = { authorization: `Bearer ${await apiToken(request, USER)}` };
  expect((await request.put('/api/v3/user/sign-in-desktop', { headers: mine, data: { open: 'group' } })).ok()).toBe(true);
  const desktops = (await (await request.get('/api/v3/user/desktops', { headers: mine })).json()) as { id: string; name: string }[];
  if (desktops[0]) return { group, desktop: desktops[0].id };
  const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers: mine })).json()) as { id: string }[];
  const made = await request.post('/api/v3/persistent_desktop', { headers: mine, data: { template_id: templates[0]!.id, name: 'My only desktop' } });
  expect(made.ok(), await made.text()).toBe(true);
  return { group, desktop: ((await made.json()) as { id: string }).id };
}

async function signIn(page: Page) {
  const login = loginPage(page);
  await login.open();
  await login.signIn(USER);
}

test.describe('my desktop at sign-in', () => {
  test('a group opens its member’s only desktop at sign-in; the person may choose the list instead', async ({ page, browser, request }) => {
    test.setTimeout(scaled(240_000));
    const { desktop } = await setUp(request);
    try {
      // The admin turns the option on for the group in the console (a browser of their own).
      const console = await browser.newPage();
      try {
        await signInAs(console, 'admin');
        await console.goto('/isard-admin/groups');
        await console.getByTestId('groups-search').fill(GROUP);
        const row = console.locator(`[data-testid=group-row][data-name="${GROUP}"]`);
        await row.getByTestId('group-edit').click();
        await console.getByTestId('group-form-open-at-sign-in').check();
        await shot(console, 'sign-in-desktop-group-form');
        await console.getByTestId('group-form-save').click();
        await expect(console.getByRole('dialog')).toHaveCount(0);
      } finally {
        await console.close();
      }

      // The member signs in and lands in the desktop's screen, started for them, in this tab.
      await signIn(page);
      // ("Opening your desktop…" shows on the desktops screen while it starts: a moment, here.)
      await expect(page).toHaveURL(/\/viewer\/vnc\?home=1/, { timeout: scaled(90_000) });
      await expect(page.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', { timeout: scaled(30_000) });
      const screen = page.getByTestId('viewer-screen');
      await expect.poll(() => litPixels(screen), { timeout: scaled(60_000), intervals: [500] }).toBeGreaterThan(500);
      await shot(page, 'sign-in-desktop-viewer');
      // Closing the viewer goes back to the desktops screen (the tab is the portal's own).
      await page.getByTestId('viewer-close').click();
      await expect(page).toHaveURL(/\/desktops$/);
      await expect(page.getByTestId('sign-in-opening')).toBeHidden();

      // In the profile: the group's choice is shown, and the person chooses the list.
      await page.goto('/profile');
      await expect(page.getByTestId('sign-in-open-now')).toContainText('in the browser');
      await page.getByTestId('sign-in-open-select').click();
      await page.getByRole('option', { name: 'Show my desktops' }).click();
      await expect(page.getByTestId('sign-in-open-now')).toHaveText('Next sign-in shows your desktops.');
      await shot(page, 'sign-in-desktop-profile');
      await page.getByTestId('user-menu').click();
      await page.getByTestId('logout').click();
      const asked = page.waitForResponse((r) => r.url().endsWith('/api/v3/user/sign-in-desktop') && r.request().method() === 'GET');
      await signIn(page);
      expect(((await (await asked).json()) as { opens: unknown }).opens).toBeNull();
      await expect(page).toHaveURL(/\/desktops$/);
      await expect(page.getByTestId('desktops-grid')).toBeVisible();
      await expect(page.getByTestId('sign-in-opening')).toBeHidden();
    } finally {
      const headers = await admin(request);
      const groups = (await (await request.get(`/api/v3/admin/groups?search=${encodeURIComponent(GROUP)}`, { headers })).json()) as { items: { id: string; name: string }[] };
      const group = groups.items.find((g) => g.name === GROUP)?.id;
      if (group) await request.put(`/api/v3/admin/groups/${group}`, { headers, data: { open_desktop_at_sign_in: false } });
      // (The person signed out in the journey: their earlier token may be gone; these calls sign in afresh.)
      const person = personApi(USER);
      await person(request, 'PUT', '/user/sign-in-desktop', { open: 'group' });
      await stopAndDelete(request, person, desktop);
    }
  });
});
