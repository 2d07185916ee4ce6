import { expect, test } from '@playwright/test';
import { navFor } from '../src/app/routes';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { adminCall, apiToken, freshUser, loginPage, PASSWORD, scaled, shot, signInAs, userId } from './support';

test.describe('sign-in', () => {
  for (const role of ['admin', 'manager', 'advanced', 'user'] as const) {
    test(`${role} signs in, sees the navbar of the role, and signs out`, async ({ page }) => {
      await signInAs(page, role);
      await expect(page).toHaveTitle(`${en.app.title} · ${en.routes.desktops}`);
      // The role's sections, then Profile (Help only where a documentation address is set).
      // The VPN download sits before the profile (the e2e server has the guest network and the VPN).
      const expected = [...navFor(role).map((r) => `nav-${r.name}`), 'nav-vpn', 'nav-profile'];
      // Polled: some entries follow the user's configuration (bookings), which may arrive after the first ones.
      const shown = () => page.getByTestId('navbar').locator('[data-testid^="nav-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
      await expect.poll(shown).toEqual(expected);
      await expect(page.getByTestId('user-menu')).toContainText(en.roles[role]);
      await shot(page, `desktops-${role}`);
      await page.getByTestId('user-menu').click();
      await page.getByTestId('logout').click();
      await expect(page).toHaveURL(/\/login$/);
      // Signed out for real: the guarded pages send back to sign in.
      await page.goto('/profile');
      await expect(page).toHaveURL(/\/login$/);
    });
  }

  test('a wrong password says so', async ({ page }) => {
    const login = loginPage(page);
    await login.open();
    await shot(page, 'login');
    await login.signIn('user', 'not-the-password');
    await expect(login.error()).toHaveText(en.login.wrong_credentials);
    await shot(page, 'login-wrong-password');
  });

  test('the sign-in form costs nothing while it waits: nothing on it blurs what lies behind it', async ({ page }) => {
    // A whole class keeps this screen open at once, often in browsers without graphics acceleration (thin clients,
    // desktops inside virtual machines): there a backdrop blur is composed again at every blink of the focused field's
    // caret (measured: 6-8 % of a core per page for the opaque card's invisible blur, ten times the page's other idle work).
    await loginPage(page).open();
    await expect(page.getByTestId('login-username')).toBeFocused();
    const blurred = await page.evaluate(() =>
      [...document.querySelectorAll('body *')].filter((e) => getComputedStyle(e).backdropFilter !== 'none').map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
    );
    expect(blurred).toEqual([]);
  });

  test('a sign-in whose answer never came is sent again; one that never gets through says so', async ({ page, request }) => {
    await freshUser(request, 'signin-retry');
    const login = loginPage(page);
    // The first try's connection drops (a busy portal, a class signing in at once): the person still gets in.
    let tries = 0;
    await login.open();
    await page.route('**/authentication/login?**', (route) => (tries++ === 0 ? route.abort() : route.continue()));
    await login.signIn('signin-retry');
    await expect(page).toHaveURL(/\/desktops$/);
    expect(tries).toBe(2);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    // Never through: after its tries (1 and 2 s apart) the page says so, and the form stays for another go.
    await page.getByTestId('user-menu').click();
    await page.getByTestId('logout').click();
    await expect(page.getByTestId('login-submit')).toBeVisible();
    tries = 0;
    await page.route('**/authentication/login?**', (route) => {
      tries++;
      return route.abort();
    });
    await login.signIn('signin-retry');
    await expect(login.error()).toHaveText(en.login.server_error, { timeout: scaled(15_000) });
    expect(tries).toBe(3);
  });

  test('too many attempts say when to try again', async ({ page, request }) => {
    for (let i = 0; i < 10; i++) {
      const r = await request.post('/authentication/login?provider=form&category_id=default', { multipart: { username: 'nobody-at-all', password: 'wrong' } });
      expect(r.status()).toBe(401);
    }
    const login = loginPage(page);
    await login.open();
    // The block is per user name: a made-up one, so no other journey's account is held back.
    await login.signIn('nobody-at-all');
    await expect(login.error()).toContainText('Too many attempts. You can try again at');
    await expect(login.error()).toContainText(/\d\d:\d\d/);
    await shot(page, 'login-429');
  });

  test('a disabled user is told the account is disabled', async ({ page, request }) => {
    const id = await userId(request, 'student04');
    await adminCall(request, 'PUT', `/admin/user/${id}/active`, { active: false });
    try {
      const login = loginPage(page);
      await login.open();
      await login.signIn('student04');
      await expect(login.error()).toHaveText(en.login.user_disabled);
      await shot(page, 'login-disabled');
    } finally {
      await adminCall(request, 'PUT', `/admin/user/${id}/active`, { active: true });
    }
  });

  test('a user of another organisation signs in by choosing it', async ({ page }) => {
    const login = loginPage(page);
    await login.open();
    await login.signIn('researcher', PASSWORD, 'Research Lab');
    await expect(page).toHaveURL(/\/desktops$/);
    await page.goto('/profile');
    await expect(page.getByText('Research Lab')).toBeVisible();
  });

  test('signing in elsewhere ends this session', async ({ page, request }) => {
    await signInAs(page, 'student02');
    await apiToken(request, 'student02');
    // The socket is told at once; the next call would be refused anyway.
    await expect(page).toHaveURL(/\/login$/, { timeout: scaled(10_000) });
  });
});
