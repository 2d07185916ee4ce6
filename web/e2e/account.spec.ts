import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { formatBookingDate } from '@vdi/contracts';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import account from '../src/i18n/locales/account/en.json' with { type: 'json' };
import { E2E_SMTP_PORT } from '../playwright.config';
import { startMailSink } from '../../server/test/helpers/mail-sink';
import { adminCall, apiToken, chooseProfileLanguage, freshUser, loginPage, notice, PASSWORD, scaled, shot, signInAs, windowShot } from './support';

// Account self-service (issue 12): password and e-mail in the profile (mail through a real SMTP
// server on loopback), migration between two accounts, the disclaimer, the message dialog of a
// booking about to end, the viewers page.

let sink: Awaited<ReturnType<typeof startMailSink>>;
test.beforeAll(async () => {
  sink = await startMailSink(E2E_SMTP_PORT);
});
test.afterAll(async () => {
  await sink?.close();
});

const api = async (request: APIRequestContext, token: string, method: string, path: string, data?: unknown) =>
  request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });

test.describe('account', () => {
  test('without a mail server the e-mail change stays on screen, disabled, and says why', async ({ page, request }) => {
    await freshUser(request, 'acct-nomail');
    // The portal as it is with no mail server configured (this run has one: its answer is changed on the way).
    await page.route('**/api/v3/user/config', async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, json: { ...(await res.json()), show_change_email_button: false } });
    });
    await signInAs(page, 'acct-nomail');
    await page.goto('/profile');
    await expect(page.getByTestId('open-email')).toBeDisabled();
    await expect(page.getByTestId('profile-email-needs-mail')).toHaveText(account.account.change_email_needs_mail);
  });

  test('password change: the policy checklist follows the typing, a wrong current password is refused, the new one signs in', async ({ page, request }) => {
    await freshUser(request, 'acct-password');
    await signInAs(page, 'acct-password');
    await page.goto('/profile');
    await expect(page.getByTestId('profile-avatar')).toBeVisible();
    await shot(page, 'account-profile-en');
    await page.getByTestId('open-password').click();
    await expect(page).toHaveURL(/\/profile\/password$/);
    const checklist = page.getByTestId('password-checklist');
    await page.getByTestId('password-new').fill('short');
    await expect(checklist.locator('[data-met="false"]')).toHaveCount(1);
    await page.getByTestId('password-new').fill('Long-enough-42');
    await expect(checklist.locator('[data-met="false"]')).toHaveCount(0);
    await page.getByTestId('password-current').fill('not-my-password');
    await page.getByTestId('password-confirm').fill('Long-enough-42');
    await page.getByTestId('password-submit').click();
    await expect(page.getByTestId('password-error')).toHaveText(en.errors.password_wrong_current);
    await windowShot(page, 'account-password-dialog-error');
    await page.getByTestId('password-current').fill(PASSWORD);
    await page.getByTestId('password-submit').click();
    await expect(notice(page, account.account.password.done)).toBeVisible();
    await expect(page).toHaveURL(/\/profile$/);

    await page.getByTestId('user-menu').click();
    await page.getByTestId('logout').click();
    const login = loginPage(page);
    await login.open();
    await login.signIn('acct-password', PASSWORD);
    await expect(login.error()).toBeVisible();
    await login.signIn('acct-password', 'Long-enough-42');
    await expect(page).toHaveURL(/\/desktops$/);
  });

  test('e-mail change: the link mailed to the new address verifies it, and every open tab shows it verified', async ({ page, context }) => {
    await signInAs(page, 'student01');
    await page.goto('/profile/email');
    await page.getByTestId('email-new').fill('sara.new@example.org');
    await page.getByTestId('email-submit').click();
    await expect(page.getByTestId('email-sent')).toBeVisible();
    await windowShot(page, 'account-email-sent');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('profile-email-pending')).toContainText('sara.new@example.org');
    await expect(page.getByTestId('profile-email-address')).toHaveText('student01@example.org');

    // A second tab of the same session.
    const other = await context.newPage();
    await other.goto('/profile');
    await expect(other.getByTestId('profile-email-pending')).toBeVisible();

    let link: string | undefined;
    await expect.poll(() => (link = sink.linkTo('sara.new@example.org')), { timeout: scaled(30_000) }).toBeTruthy();
    expect(link).toContain('/verify-email?token=');
    // The old address was told.
    expect(sink.mails.some((m) => m.to.includes('student01@example.org') && m.raw.includes('sara.new@example.org'))).toBe(true);

    const mailTab = await context.newPage();
    await mailTab.goto(link!);
    await expect(mailTab.getByTestId('redirect-countdown')).toBeVisible({ timeout: scaled(30_000) });
    await mailTab.close();

    for (const p of [page, other]) {
      await expect(p.getByTestId('profile-email-address')).toHaveText('sara.new@example.org');
      await expect(p.getByTestId('profile-email-status')).toHaveText(en.profile.email_verified);
      await expect(p.getByTestId('profile-email-pending')).toHaveCount(0);
    }
    await other.close();
  });

  test('migration: a code exported by one account moves its desktop to another account of the same category', async ({ page, request }) => {
    await adminCall(request, 'PUT', '/admin/settings/migration', {
      local: { export: true, import: true, force_migration: false },
      exceptions: { categories: [], groups: [], roles: [], users: [] },
    });
    // Two accounts of this run's own (an account takes one migration, and the origin ends disabled): the origin with a desktop.
    const run = Date.now().toString(36);
    const [originName, targetName] = [`acct-origin-${run}`, `acct-target-${run}`];
    await freshUser(request, originName);
    await freshUser(request, targetName);
    const origin = await apiToken(request, originName);
    const templates = (await (await api(request, origin, 'GET', '/user/templates/allowed/all')).json()) as { id: string; name: string }[];
    const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0]!;
    const made = await api(request, origin, 'POST', '/persistent_desktop', { name: 'Moving desktop', template_id: template.id });
    expect(made.ok()).toBe(true);
    const desk = (await made.json()) as { id: string };

    await signInAs(page, originName);
    await page.goto('/profile');
    await page.getByTestId('open-export').click();
    await expect(page).toHaveURL(/\/export-user$/);
    await page.getByTestId('export-generate').click();
    const code = (await page.getByTestId('export-code').textContent())!.trim();
    expect(code.split('.')).toHaveLength(3);
    await shot(page, 'account-export-user');
    await page.getByTestId('export-logout').click();
    await expect(page).toHaveURL(/\/login$/);

    // The sign-in page the sign-out led to, ready for typing.
    const login = loginPage(page);
    await login.open();
    await login.signIn(targetName);
    await expect(page).toHaveURL(/\/desktops$/);
    await page.goto('/profile');
    await page.getByTestId('open-import').click();
    await page.getByTestId('import-code').fill('not-a-code');
    await page.getByTestId('import-submit').click();
    await expect(page.getByTestId('import-error')).toHaveText(en.errors.invalid_token);
    await page.getByTestId('import-code').fill(code);
    await page.getByTestId('import-submit').click();
    await expect(page).toHaveURL(/\/migration$/);
    // The page tells this account's own import: from whom, and what moved.
    await expect(page.getByTestId('migration-done')).toContainText(originName);
    await expect(page.getByTestId('migration-done')).toContainText('1');
    await shot(page, 'account-migration-done');
    await page.getByTestId('migration-to-desktops').click();
    await expect(page).toHaveURL(/\/desktops$/);
    const target = await apiToken(request, targetName);
    const mine = (await (await api(request, target, 'GET', '/user/desktops')).json()) as { id: string }[];
    expect(mine.map((d) => d.id)).toContain(desk.id);
    // The code is spent.
    const again = await api(request, target, 'POST', '/user_migration/import', { token: code });
    expect((await again.json()).description_code).toBe('migration_code_used');
  });

  test('forced migration sends everyone but the exceptions to the export page', async ({ page, request }) => {
    const settings = (force: boolean) => ({
      local: { export: true, import: true, force_migration: force },
      exceptions: { categories: [], groups: [], roles: ['admin'], users: [] },
    });
    await adminCall(request, 'PUT', '/admin/settings/migration', settings(true));
    try {
      const login = loginPage(page);
      await login.open();
      await login.signIn('student01');
      await expect(page).toHaveURL(/\/export-user$/);
      await expect(page.getByTestId('export-forced')).toBeVisible();
      await page.goto('/desktops');
      await expect(page).toHaveURL(/\/export-user$/);
      await shot(page, 'account-export-forced');
    } finally {
      await adminCall(request, 'PUT', '/admin/settings/migration', settings(false));
    }
  });

  test('disclaimer: the text from the settings, accepted once, then a countdown to the desktops', async ({ page, request }) => {
    // Once the disclaimer is on, a new sign-in of the admin stops at it too: one session does both changes.
    const admin = await apiToken(request, 'admin');
    const setDisclaimer = async (value: unknown) => expect((await api(request, admin, 'PUT', '/admin/settings/disclaimer', value)).ok()).toBe(true);
    await setDisclaimer({ enabled: true, title: 'Acceptable use', body: 'These desktops are for coursework only.' });
    try {
      const login = loginPage(page);
      await login.open();
      await login.signIn('manager');
      await expect(page).toHaveURL(/\/disclaimer$/);
      await expect(page.getByTestId('disclaimer-body')).toHaveText('These desktops are for coursework only.');
      await shot(page, 'account-disclaimer');
      await page.getByTestId('disclaimer-accept').click();
      await expect(page.getByTestId('disclaimer-accepted')).toBeVisible();
      await page.getByTestId('disclaimer-continue').click();
      await expect(page).toHaveURL(/\/desktops$/);
      // Accepted once: the next sign-in goes straight on.
      await page.getByTestId('user-menu').click();
      await page.getByTestId('logout').click();
      await login.open();
      await login.signIn('manager');
      await expect(page).toHaveURL(/\/desktops$/);
    } finally {
      await setDisclaimer({ enabled: false, title: '', body: '' });
    }
  });

  test('viewers: the install guide per system, reached from the navigation; Help opens the configured documentation', async ({ page, request }) => {
    const frontend = { show_bookings_button: true, show_temporal_tab: true, documentation_url: 'https://docs.example.org/vdi/', viewers_documentation_url: 'https://docs.example.org/vdi/viewers/' };
    const before = await adminCall(request, 'GET', '/admin/settings/frontend');
    await adminCall(request, 'PUT', '/admin/settings/frontend', frontend);
    try {
    await signInAs(page, 'advanced');
    await expect(page.getByTestId('nav-help')).toHaveAttribute('href', frontend.documentation_url);
    await page.getByTestId('nav-viewers').click();
    await expect(page).toHaveURL(/\/viewers$/);
    for (const os of ['linux', 'windows', 'android', 'ios'] as const) {
      await page.getByTestId(`viewers-os-${os}`).click();
      await expect(page.getByTestId(`viewers-panel-${os}`)).toContainText(account.account.viewers.spice[os]);
    }
    await page.getByTestId('viewers-os-macos').click();
    await expect(page.getByTestId('viewers-panel-macos')).toContainText(account.account.viewers.macos);
    await page.getByTestId('viewers-os-linux').click();
    await expect(page.getByRole('link', { name: account.account.viewers.more })).toHaveAttribute('href', frontend.viewers_documentation_url);
    await shot(page, 'account-viewers-en');
    await expect(page.getByTestId('nav-viewers')).toBeVisible();
    await expect(page.getByTestId('nav-profile')).toBeVisible();
    } finally {
      // Help shows only where the address is set: as it was, for the specs after this one.
      await adminCall(request, 'PUT', '/admin/settings/frontend', before);
    }
  });

  test('screens in another language and at phone width', async ({ page, request }) => {
    // A person of the journey's own: the Spanish chosen is saved for them.
    // (a person per attempt: a retry would find the Spanish already saved, and no choice to make)
    const who = `acct-spanish-${test.info().retry}`;
    await freshUser(request, who);
    await signInAs(page, who);
    await page.goto('/profile');
    await chooseProfileLanguage(page, 'Español');
    await expect(page.getByTestId('open-password')).toHaveText('Cambiar contraseña');
    await shot(page, 'account-profile-es');
    await page.goto('/profile/password');
    await page.getByTestId('password-new').fill('abc');
    await windowShot(page, 'account-password-dialog-es');
    await page.goto('/viewers');
    await shot(page, 'account-viewers-es');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/profile');
    await expect(page.getByTestId('quota-table')).toBeVisible();
    await shot(page, 'account-profile-phone');
    await page.goto('/viewers');
    await shot(page, 'account-viewers-phone');
  });

  test('a booking about to end raises a message dialog that stays until closed', async ({ page, request }) => {
    test.setTimeout(scaled(6 * 60_000));
    const token = await apiToken(request, 'user');
    const desktops = (await (await api(request, token, 'GET', '/user/desktops')).json()) as { id: string; name: string }[];
    const gpu = desktops.find((d) => d.name === 'GPU desktop')!;
    // Begins in the current minute (a booking may: it starts at once) and ends so that the 5-minute
    // warning comes 30 to 90 s from now, time enough to start the desktop first.
    const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const end = new Date(start.getTime() + (Date.now() - start.getTime() <= 30_000 ? 6 : 7) * 60_000);
    const booked = await api(request, token, 'POST', '/booking/event', {
      element_id: gpu.id, element_type: 'desktop', start: formatBookingDate(start), end: formatBookingDate(end), title: 'Lab',
    });
    expect(booked.ok()).toBe(true);
    const bookingId = ((await booked.json()) as { id: string }).id;
    // Signing in ends the API session (one per user): the page's own token starts the desktop.
    let session = token;
    try {
      await signInAs(page, 'user');
      session = (await page.context().cookies()).find((c) => c.name === 'isardvdi_session')!.value;
      await expect.poll(async () => (await api(request, session, 'GET', `/desktop/start/${gpu.id}`)).status(), { timeout: scaled(3 * 60_000), intervals: [5_000] }).toBe(200);
      const dialog = page.getByTestId('message-dialog');
      await expect(dialog).toBeVisible({ timeout: scaled(3 * 60_000) });
      await expect(dialog).toContainText('GPU desktop');
      await windowShot(page, 'account-message-dialog');
      // Still there after the time a notification would have gone.
      await page.waitForTimeout(4_000);
      await expect(dialog).toBeVisible();
      await page.getByTestId('message-dialog-close').click();
      await expect(dialog).toHaveCount(0);
      // The running desktop's viewer menu leads to the viewers page.
      await page.getByTestId('desktop-viewers').first().click();
      await page.getByTestId('viewer-help').click();
      await expect(page).toHaveURL(/\/viewers$/);
    } finally {
      // The page renews its token every few minutes: the newest one.
      session = (await page.context().cookies()).find((c) => c.name === 'isardvdi_session')?.value ?? session;
      await api(request, session, 'GET', `/desktop/stop/${gpu.id}`);
      // A booking in progress is deleted once its desktop has stopped: wait for that, then it is gone for the specs after.
      await expect
        .poll(async () => (await api(request, session, 'DELETE', `/booking/event/${bookingId}`)).status(), { timeout: scaled(60_000), intervals: [1_000] })
        .toBe(200);
    }
  });
});
