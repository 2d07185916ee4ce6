import { expect, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import * as OTPAuth from 'otpauth';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import { apiToken, freshUser, loginPage, shot, signInAs, windowShot } from './support';

// Two-factor sign-in for local accounts (issue 27): enrolled in the profile by reading the secret shown (as a person
// types it into an authenticator app), asked after the password, a recovery code once, the console's reset, and the
// enrolment a sign-in leads to when an administrator requires it. Codes come from the otpauth library's generator.

const STEP = 30_000;
/** The authenticator app of a secret as the page shows it (grouped by four). */
const appOf = (shown: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(shown.replace(/\s+/g, '')), digits: 6, period: 30, algorithm: 'SHA1' });
/** A code of a later step than the last one used (each code is good once; one step of clock allowance). */
const nextCode = (app: OTPAuth.TOTP) => app.generate({ timestamp: Date.now() + STEP });

async function signOut(page: Page) {
  await page.getByTestId('user-menu').click();
  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
}

/** The password, then the code page. */
async function passwordThenCodePage(page: Page, username: string) {
  const login = loginPage(page);
  await login.open();
  await login.signIn(username);
  await expect(page).toHaveURL(/\/two-factor$/);
}

async function setRequirement(request: APIRequestContext, body: { required_roles?: string[]; required_categories?: string[] }) {
  const token = await apiToken(request, 'admin');
  const res = await request.put('/api/v3/admin/settings/two_factor', { headers: { authorization: `Bearer ${token}` }, data: body });
  expect(res.ok()).toBe(true);
}

/** Enrols in the profile (already there): the secret read off the page, a code, the recovery codes answered. */
async function enrolInProfile(page: Page, shots?: string) {
  const card = page.getByTestId('two-factor-card');
  await expect(card.getByTestId('two-factor-state')).toHaveText(en.two_factor.off);
  await card.getByTestId('two-factor-enable').click();
  const secretShown = (await page.getByTestId('two-factor-secret').textContent())!;
  await expect(page.getByTestId('two-factor-qr')).toBeVisible();
  if (shots) await windowShot(page, `${shots}-enrol`);
  const app = appOf(secretShown);
  await page.getByTestId('two-factor-confirm-code').fill(app.generate());
  await page.getByTestId('two-factor-confirm').click();
  await expect(page.getByTestId('recovery-code')).toHaveCount(10);
  const recovery = await page.getByTestId('recovery-code').allTextContents();
  if (shots) await windowShot(page, `${shots}-recovery-codes`);
  await page.getByTestId('recovery-done').click();
  await expect(card.getByTestId('two-factor-state')).toHaveText(en.two_factor.on);
  await expect(page.getByTestId('recovery-codes')).toHaveCount(0);
  return { app, recovery };
}

test.describe('two-factor sign-in', () => {
  test('enrol in the profile, sign out, sign in with a code, then with a recovery code; a wrong code says so', async ({ page, request }) => {
    await freshUser(request, 'tf-user');
    await signInAs(page, 'tf-user');
    await page.goto('/profile');
    const { app, recovery } = await enrolInProfile(page, 'two-factor-profile');
    await expect(page.getByTestId('two-factor-details')).toContainText('10');
    await shot(page, 'two-factor-profile-on');
    await signOut(page);

    // The password, then a code: the field has the focus, takes digits only.
    await passwordThenCodePage(page, 'tf-user');
    const field = page.getByTestId('two-factor-code');
    await expect(field).toBeFocused();
    await expect(field).toHaveAttribute('inputmode', 'numeric');
    await shot(page, 'two-factor-code-page');
    const wrong = String((Number(app.generate()) + 1) % 1_000_000).padStart(6, '0');
    await field.fill(wrong);
    await page.getByTestId('two-factor-submit').click();
    await expect(page.getByTestId('two-factor-error')).toHaveText(en.errors.two_factor_code_invalid);
    await field.fill(nextCode(app));
    await page.getByTestId('two-factor-submit').click();
    await expect(page).toHaveURL(/\/desktops$/);
    await signOut(page);

    // A recovery code instead, once.
    await passwordThenCodePage(page, 'tf-user');
    await page.getByTestId('two-factor-toggle-recovery').click();
    await expect(page.getByTestId('two-factor-recovery-input')).toBeFocused();
    await page.getByTestId('two-factor-recovery-input').fill(recovery[0]!);
    await shot(page, 'two-factor-recovery-page');
    await page.getByTestId('two-factor-submit').click();
    await expect(page).toHaveURL(/\/desktops$/);
    await page.goto('/profile');
    await expect(page.getByTestId('two-factor-details')).toContainText('9');
    await signOut(page);
    await passwordThenCodePage(page, 'tf-user');
    await page.getByTestId('two-factor-toggle-recovery').click();
    await page.getByTestId('two-factor-recovery-input').fill(recovery[0]!);
    await page.getByTestId('two-factor-submit').click();
    await expect(page.getByTestId('two-factor-error')).toHaveText(en.errors.two_factor_code_invalid);
  });

  test('an administrator sees who has two-factor and resets a person’s; the password alone then signs in', async ({ page, request, browser }) => {
    await freshUser(request, 'tf-lost');
    await freshUser(request, 'tf-admin', 'admin');
    // The person enrols (in their own browser).
    const own = await browser.newContext();
    const ownPage = await own.newPage();
    await signInAs(ownPage, 'tf-lost');
    await ownPage.goto('/profile');
    await enrolInProfile(ownPage);
    await own.close();

    await signInAs(page, 'tf-admin');
    await page.goto('/isard-admin/users');
    await page.getByTestId('users-search').fill('tf-');
    const row = page.locator('[data-testid="user-row"][data-username="tf-lost"]');
    await expect(page.getByTestId('user-row').first()).toHaveAttribute('data-username', /^tf-/);
    await expect(row.getByTestId('user-two-factor')).toBeVisible();
    await shot(page, 'two-factor-console-users');
    await row.getByTestId('user-actions').click();
    await page.getByTestId('user-two-factor-reset').click();
    await page.getByTestId('confirm-two-factor-reset').click();
    await expect(row.getByTestId('user-two-factor')).toHaveCount(0);

    const fresh = await newPage(browser);
    await signInAs(fresh, 'tf-lost');
    await fresh.context().close();
    expect(await auditActions(request, 'tf-lost')).toEqual(expect.arrayContaining(['two_factor.enable', 'two_factor.reset']));

    // The requirement, in the console's settings.
    await page.goto('/isard-admin/settings');
    const card = page.getByTestId('two-factor-setting-card');
    // A person clicks the multi-select's box (its input sits under the pills' wrapper).
    await card.locator('.mantine-MultiSelect-input', { has: page.getByTestId('two-factor-required-roles') }).click();
    await page.getByRole('option', { name: en.roles.manager }).click();
    await page.keyboard.press('Escape');
    try {
      await card.getByTestId('two-factor-setting-card-save').click();
      await expect.poll(async () => ((await (await request.get('/api/v3/admin/settings/two_factor', { headers: { authorization: `Bearer ${await apiToken(request, 'admin')}` } })).json()) as { required_roles: string[] }).required_roles).toEqual(['manager']);
      await windowShot(page, 'two-factor-console-requirement');
    } finally {
      await setRequirement(request, { required_roles: [] });
    }
  });

  test('required by the administrator: a person without it is led to enrol at sign-in, then signed in', async ({ page, request }) => {
    await freshUser(request, 'tf-manager', 'manager');
    await setRequirement(request, { required_roles: ['manager'] });
    try {
      const login = loginPage(page);
      await login.open();
      await login.signIn('tf-manager');
      await expect(page).toHaveURL(/\/two-factor\/enrol$/);
      await expect(page.getByTestId('two-factor-qr')).toBeVisible();
      await shot(page, 'two-factor-enrol-required');
      const app = appOf((await page.getByTestId('two-factor-secret').textContent())!);
      await page.getByTestId('two-factor-confirm-code').fill(app.generate());
      await page.getByTestId('two-factor-confirm').click();
      await expect(page.getByTestId('recovery-code')).toHaveCount(10);
      await shot(page, 'two-factor-enrol-required-codes');
      await page.getByTestId('recovery-done').click();
      await expect(page).toHaveURL(/\/desktops$/);
      // Required: it cannot be turned off in the profile.
      await page.goto('/profile');
      await expect(page.getByTestId('two-factor-state')).toHaveText(en.two_factor.on);
      await expect(page.getByTestId('two-factor-disable')).toHaveCount(0);
      await signOut(page);
      await passwordThenCodePage(page, 'tf-manager');
      await page.getByTestId('two-factor-code').fill(nextCode(app));
      await page.getByTestId('two-factor-submit').click();
      await expect(page).toHaveURL(/\/desktops$/);
    } finally {
      await setRequirement(request, { required_roles: [] });
    }
  });

  test('the screens in Catalan at phone width', async ({ browser, request }) => {
    await freshUser(request, 'tf-phone');
    await freshUser(request, 'tf-phone-new', 'advanced');
    const context = await browser.newContext({ locale: 'ca-ES', viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    try {
      await signInAs(page, 'tf-phone');
      await page.goto('/profile');
      await expect(page.getByTestId('two-factor-card')).toContainText(ca.two_factor.title);
      await windowShot(page, 'two-factor-profile-phone-ca');
      await page.getByTestId('two-factor-enable').click();
      const app = appOf((await page.getByTestId('two-factor-secret').textContent())!);
      await windowShot(page, 'two-factor-enrol-phone-ca');
      await page.getByTestId('two-factor-confirm-code').fill(app.generate());
      await page.getByTestId('two-factor-confirm').click();
      await expect(page.getByTestId('recovery-code')).toHaveCount(10);
      await windowShot(page, 'two-factor-recovery-codes-phone-ca');
      await page.getByTestId('recovery-done').click();
      await signOut(page);
      await passwordThenCodePage(page, 'tf-phone');
      await expect(page.getByText(ca.two_factor.subheading)).toBeVisible();
      await shot(page, 'two-factor-code-page-phone-ca');
      await page.getByTestId('two-factor-code').fill('000000');
      await page.getByTestId('two-factor-submit').click();
      await expect(page.getByTestId('two-factor-error')).toHaveText(ca.errors.two_factor_code_invalid);
      await shot(page, 'two-factor-code-wrong-phone-ca');
      await page.getByTestId('two-factor-toggle-recovery').click();
      await shot(page, 'two-factor-recovery-page-phone-ca');
      await page.getByTestId('two-factor-back').click();
      await expect(page).toHaveURL(/\/login$/);

      // The enrolment a sign-in leads to, required of the role.
      await setRequirement(request, { required_roles: ['advanced'] });
      await loginPage(page).signIn('tf-phone-new');
      await expect(page).toHaveURL(/\/two-factor\/enrol$/);
      await expect(page.getByTestId('two-factor-qr')).toBeVisible();
      await expect(page.getByText(ca.two_factor.enrol_required)).toBeVisible();
      await shot(page, 'two-factor-enrol-required-phone-ca');
    } finally {
      await setRequirement(request, { required_roles: [] });
      await context.close();
    }
  });
});

/** The audit log's actions on a person (newest first). */
async function auditActions(request: APIRequestContext, username: string) {
  const token = await apiToken(request, 'admin');
  const res = await request.get(`/api/v3/admin/audit?object=${encodeURIComponent(username)}&per_page=100`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.ok()).toBe(true);
  return ((await res.json()) as { items: { action: string }[] }).items.map((e) => e.action);
}

async function newPage(browser: Browser) {
  const context = await browser.newContext();
  return context.newPage();
}
