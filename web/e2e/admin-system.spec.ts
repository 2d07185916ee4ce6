import { expect, test, type Locator, type Page } from '@playwright/test';
import en from '../src/i18n/locales/admin-system/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/admin-system/ca.json' with { type: 'json' };
import core from '../src/i18n/locales/en.json' with { type: 'json' };
import { adminCall, chooseLanguage, freshUser, notice, PASSWORD, scaled, shot, signInAs, windowShot } from './support';
import { startMailSink } from '../../server/test/helpers/mail-sink';
import { E2E_SMTP_PORT } from '../playwright.config';

// The administration console's system part (issue 11): settings take effect at once, the audit
// log shows who did what, when and from where. (Mounted at /isard-admin/<path>.)

const T = en.admin_system;
const SCREENS = [
  { path: 'settings', heading: T.general.heading, name: 'settings' },
  { path: 'settings/disclaimer', heading: T.disclaimer.heading, name: 'disclaimer' },
  { path: 'settings/passwords', heading: T.passwords.heading, name: 'passwords' },
  { path: 'settings/mail', heading: T.mail.heading, name: 'mail' },
  { path: 'settings/limits', heading: T.limits.heading, name: 'limits' },
  { path: 'audit', heading: T.audit.heading, name: 'audit' },
] as const;

/** A Mantine switch by its label: a person clicks its track (the input is hidden under it). */
const toggle = (scope: Locator, label: string) => scope.locator('.mantine-Switch-root').filter({ hasText: label }).locator('.mantine-Switch-track').click();

async function openScreen(page: Page, path: string, heading: string) {
  await page.goto(`/isard-admin/${path}`);
  await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
}

test.describe('maintenance from the console', () => {
  test('on with a text: a user sees the maintenance page, the admin keeps working; off again', async ({ page, browser, request }) => {
    test.setTimeout(scaled(120_000));
    // The user is signed in in another browser.
    const userContext = await browser.newContext();
    const userPage = await userContext.newPage();
    await signInAs(userPage, 'user');

    await signInAs(page, 'admin');
    await openScreen(page, 'settings', T.general.heading);
    const card = page.getByTestId('maintenance-card');
    await card.getByTestId('maintenance-title').fill('Scheduled upgrade');
    await card.getByTestId('maintenance-body').fill('Back at 14:00, thank you for your patience.');
    await toggle(card, T.maintenance.enabled);
    await card.getByTestId('maintenance-card-save').click();
    await expect(card.getByTestId('maintenance-on-badge')).toBeVisible();
    try {
      await shot(page, 'admin-system-maintenance-on');
      // The user: the next screen is the maintenance page with the admin's text.
      await userPage.goto('/profile');
      await expect(userPage).toHaveURL(/\/maintenance$/, { timeout: scaled(20_000) });
      await expect(userPage.getByRole('heading', { name: 'Scheduled upgrade' })).toBeVisible();
      await expect(userPage.getByTestId('maintenance-body')).toHaveText('Back at 14:00, thank you for your patience.');
      await shot(userPage, 'admin-system-maintenance-user');
      // The admin keeps working: the portal and the console answer.
      await page.goto('/desktops');
      await expect(page).toHaveURL(/\/desktops$/);
      await openScreen(page, 'audit', T.audit.heading);
      await expect(page.getByTestId('audit-row').first()).toBeVisible();
      // Off again, as the admin does it.
      await openScreen(page, 'settings', T.general.heading);
      await toggle(page.getByTestId('maintenance-card'), T.maintenance.enabled);
      await page.getByTestId('maintenance-card-save').click();
      await expect(page.getByTestId('maintenance-on-badge')).toHaveCount(0);
    } finally {
      // Whatever failed above, maintenance must not stay on for the specs after this one.
      const now = await adminCall(request, 'GET', '/admin/settings/maintenance');
      if (now.enabled) await adminCall(request, 'PUT', '/admin/settings/maintenance', { enabled: false });
    }
    expect((await adminCall(request, 'GET', '/admin/settings/maintenance')).enabled).toBe(false);
    await userPage.getByRole('button', { name: core.maintenance.retry }).click();
    await expect(userPage).toHaveURL(/\/desktops$/);
    await userContext.close();
  });
});

test.describe('status bar', () => {
  test('the admin turns on a warning; the portal shows it to a user', async ({ page, browser }) => {
    await signInAs(page, 'admin');
    await openScreen(page, 'settings', T.general.heading);
    const card = page.getByTestId('status-bar-card');
    await card.getByTestId('status-bar-text').fill('Upgrade tonight at 22:00');
    await card.getByText(T.status_bar.levels.warning, { exact: true }).click();
    await toggle(card, T.status_bar.enabled);
    await card.getByTestId('status-bar-card-save').click();
    await expect(card.getByTestId('status-bar-card-save')).toBeDisabled();
    const userContext = await browser.newContext();
    const userPage = await userContext.newPage();
    try {
      await signInAs(userPage, 'user');
      await expect(userPage.getByTestId('status-bar')).toHaveText('Upgrade tonight at 22:00');
      await shot(userPage, 'admin-system-status-bar-portal');
    } finally {
      await toggle(card, T.status_bar.enabled);
      await card.getByTestId('status-bar-card-save').click();
      await expect(card.getByTestId('status-bar-card-save')).toBeDisabled();
      await userContext.close();
    }
  });
});

test.describe('sign-in page options', () => {
  test('a notice and no category select on the sign-in page, as the admin set them', async ({ page, request }) => {
    await adminCall(request, 'PUT', '/admin/settings/login', { hide_categories_select: true, notice: { enabled: true, title: 'Exams week', text: 'The portal closes at 20:00.' } });
    try {
      await page.goto('/login');
      await expect(page.getByTestId('login-notice')).toContainText('Exams week');
      await expect(page.getByTestId('login-notice')).toContainText('The portal closes at 20:00.');
      await expect(page.getByTestId('login-category')).toHaveCount(0);
      await shot(page, 'admin-system-login-options');
      // The name alone still signs in.
      await page.getByTestId('login-username').fill('user');
      await page.getByTestId('login-password').fill(PASSWORD);
      await page.getByTestId('login-submit').click();
      await expect(page).toHaveURL(/\/desktops$/);
    } finally {
      await adminCall(request, 'PUT', '/admin/settings/login', { hide_categories_select: false, notice: { enabled: false, title: '', text: '' } });
    }
  });
});

test.describe('audit log screen', () => {
  test('lists the entries with who, when, what and address; filters; exports', async ({ page, request }) => {
    // A failed sign-in and a setting change to find.
    await adminCall(request, 'PUT', '/admin/settings/status_bar', { enabled: false });
    await request.post('/authentication/login?provider=form&category_id=default', { multipart: { username: 'student01', password: 'not-the-password' } });
    await signInAs(page, 'admin');
    await openScreen(page, 'audit', T.audit.heading);
    const settingsRow = page.getByTestId('audit-row').filter({ hasText: T.audit.actions.settings_update }).first();
    await expect(settingsRow).toContainText('admin');
    await expect(settingsRow).toContainText('127.0.0.1');
    await expect(settingsRow).toContainText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/);
    await expect(settingsRow).toContainText('status_bar');
    const failed = page.getByTestId('audit-row').filter({ hasText: T.audit.actions.auth_sign_in_failed }).first();
    await expect(failed).toContainText('student01');
    await shot(page, 'admin-system-audit-en');

    // Live: a new entry appears without a reload (the /administrators socket).
    await request.post('/authentication/login?provider=form&category_id=default', { multipart: { username: 'student04', password: 'still-not-it' } });
    await expect(page.getByTestId('audit-row').filter({ hasText: 'student04' }).first()).toContainText(T.audit.actions.auth_sign_in_failed);

    await page.getByTestId('audit-filter-actor').fill('student01');
    await expect(page.getByTestId('audit-row').first()).toContainText('student01');
    for (const row of await page.getByTestId('audit-row').all()) await expect(row).toContainText('student01');

    const download = page.waitForEvent('download');
    await page.getByTestId('audit-export').click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^audit-\d{4}-\d{2}-\d{2}\.csv$/);

    // Nothing matches: the empty state.
    await page.getByTestId('audit-filter-actor').fill('nobody-at-all');
    await expect(page.getByTestId('empty-state')).toContainText(T.audit.no_match);
    await shot(page, 'admin-system-audit-empty');
  });

  test('a manager sees the screen with their category only; an error shows its reason', async ({ page }) => {
    await signInAs(page, 'manager');
    await openScreen(page, 'audit', T.audit.heading);
    await expect(page.getByTestId('audit-row').first()).toBeVisible();
    await expect(page.getByTestId('audit-row').filter({ hasText: T.audit.actions.settings_update })).toHaveCount(0);
    await page.route('**/api/v3/admin/audit?*', (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'internal', msg: 'x', description_code: 'generic_error', description: 'Something went wrong' }) }),
    );
    await page.getByTestId('audit-filter-object').fill('x');
    await expect(page.getByTestId('audit-load-error')).toBeVisible();
    await shot(page, 'admin-system-audit-error');
  });
});

test.describe('screens', () => {
  test('every system screen in English, in Catalan and at phone width', async ({ page, request }) => {
    test.setTimeout(scaled(180_000));
    // An administrator of the journey's own: the Catalan chosen is saved for them.
    await freshUser(request, 'system-ca-admin', 'admin');
    await signInAs(page, 'system-ca-admin');
    for (const s of SCREENS) {
      await openScreen(page, s.path, s.heading);
      await expect(page.locator('.mantine-Skeleton-root')).toHaveCount(0, { timeout: scaled(20_000) });
      await shot(page, `admin-system-${s.name}-en`);
    }
    // Catalan, chosen as a person does (and saved for the admin).
    await chooseLanguage(page, 'ca-ES');
    const headings: Record<string, string> = {
      settings: ca.admin_system.general.heading,
      disclaimer: ca.admin_system.disclaimer.heading,
      passwords: ca.admin_system.passwords.heading,
      mail: ca.admin_system.mail.heading,
      limits: ca.admin_system.limits.heading,
      audit: ca.admin_system.audit.heading,
    };
    try {
      for (const s of SCREENS) {
        await openScreen(page, s.path, headings[s.name]!);
        await expect(page.locator('.mantine-Skeleton-root')).toHaveCount(0, { timeout: scaled(20_000) });
        await shot(page, `admin-system-${s.name}-ca`);
      }
    } finally {
      await chooseLanguage(page, 'en-US');
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(T.audit.heading);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const s of SCREENS) {
      await openScreen(page, s.path, s.heading);
      await expect(page.locator('.mantine-Skeleton-root')).toHaveCount(0, { timeout: scaled(20_000) });
      await shot(page, `admin-system-${s.name}-phone`);
    }
  });

  test('a password policy is added and removed; the mail form checks the recipient', async ({ page }) => {
    await signInAs(page, 'admin');
    await openScreen(page, 'settings/passwords', T.passwords.heading);
    const rows = page.getByTestId('policy-row');
    await expect(rows.first()).toBeVisible();
    const before = await rows.count();
    await page.getByTestId('policy-add').click();
    await page.getByTestId('policy-role').click();
    await page.getByRole('option', { name: T.passwords.roles.user, exact: true }).click();
    await page.getByTestId('policy-length').fill('12');
    await page.getByTestId('policy-digits').fill('2');
    await page.getByTestId('policy-save').click();
    await expect(rows).toHaveCount(before + 1);
    await expect(rows.filter({ hasText: T.passwords.roles.user })).toContainText('12');
    await shot(page, 'admin-system-passwords-added');
    await rows.filter({ hasText: T.passwords.roles.user }).getByRole('button', { name: T.passwords.remove }).click();
    await expect(rows).toHaveCount(before);

    await openScreen(page, 'settings/mail', T.mail.heading);
    await page.getByTestId('mail-test-to').fill('not-an-address');
    await page.getByTestId('mail-test-card-save').click();
    await expect(page.getByTestId('mail-test-card-error')).toBeVisible();
    await page.getByTestId('mail-test-to').fill('admin@example.org');
    await page.getByTestId('mail-test-card-save').click();
    // The server's SMTP (SMTP_* of the e2e server) does not answer: the reason is shown.
    await expect(page.getByTestId('mail-test-card-error')).toContainText(core.errors.mail_send_failed.replace('{{reason}}', ''));
    await windowShot(page, 'admin-system-mail-error');
    // With the mail server up, the test mail arrives.
    const sink = await startMailSink(E2E_SMTP_PORT);
    try {
      await page.getByTestId('mail-test-card-save').click();
      await expect(notice(page, T.mail.test_sent.replace('{{to}}', 'admin@example.org'))).toBeVisible();
      await expect.poll(() => sink.mails.some((m) => m.to.includes('admin@example.org')), { timeout: scaled(30_000) }).toBe(true);
    } finally {
      await sink.close();
    }
  });
});
