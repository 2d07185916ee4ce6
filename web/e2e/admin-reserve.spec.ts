import { expect, test, type Page } from '@playwright/test';
import en from '../src/i18n/locales/admin-reserve/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/admin-reserve/ca.json' with { type: 'json' };
import core from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, chooseLanguage, freshUser, scaled, shot, signInAs, windowShot } from './support';

// The console's GPU cards, booking rules and auto-shutdown policies (issue 13): the admin adds a
// card with two profiles and the planner offers them at once; the admin changes the booking rules
// of the `user` role and a user's next booking follows; a desktop's card shows when its
// auto-shutdown policy stops it. Managers reach only the policies.

const T = en.admin_reserve;
const run = Math.random().toString(36).slice(2, 7);

async function openScreen(page: Page, path: string, heading: string) {
  await page.goto(`/isard-admin/${path}`);
  await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
  await expect(page.locator('.mantine-Skeleton-root')).toHaveCount(0, { timeout: scaled(20_000) });
}

/** The "saved" notices have gone (they would cover the screen's top in a screenshot). */
const noticesGone = (page: Page) => expect(page.locator('.mantine-Notification-root')).toHaveCount(0, { timeout: scaled(15_000) });

async function pick(page: Page, testId: string, option: string | RegExp) {
  await page.getByTestId(testId).click();
  await page.getByRole('option', { name: option }).first().click();
}

test.describe.serial('reservations in the console', () => {
  test('the admin adds a GPU card with two profiles; the planner offers them at once', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    const name = `NVIDIA L4 ${run}`;
    await signInAs(page, 'admin');
    await openScreen(page, 'reservables', T.nav.reservables);
    await expect(page.getByTestId('card-panel').first()).toBeVisible();
    await page.getByTestId('cards-new').click();
    await page.getByTestId('card-form-name').fill(name);
    await page.getByTestId('card-form-brand').fill('NVIDIA');
    await page.getByTestId('card-form-model').fill('L4');
    await page.getByTestId('card-form-save').click();
    const panel = page.getByTestId('card-panel').filter({ hasText: name });
    await expect(panel.getByTestId('card-no-profiles')).toBeVisible();
    for (const [profile, label, units] of [['2Q', 'L4 · 2 GB', '12'], ['4Q', 'L4 · 4 GB', '6']] as const) {
      await panel.getByTestId('card-add-profile').click();
      await page.getByTestId('profile-form-profile').fill(profile);
      await page.getByTestId('profile-form-name').fill(label);
      await page.getByTestId('profile-form-units').fill(units);
      if (profile === '2Q') await windowShot(page, 'admin-reserve-profile-form');
      await page.getByTestId('profile-form-save').click();
      await expect(panel.getByTestId('profile-row').filter({ hasText: label })).toBeVisible();
    }
    await expect(panel.getByTestId('profile-row')).toHaveCount(2);
    await noticesGone(page);
    await shot(page, 'admin-reserve-cards-en');

    // The planner, at once: the new card and its two profiles.
    await page.goto('/planning');
    await pick(page, 'planner-item', name);
    await expect(page.getByTestId('planner-profiles')).toContainText('L4 · 2 GB');
    await expect(page.getByTestId('planner-profiles')).toContainText('L4 · 4 GB');
    await page.getByTestId('planner-new').click();
    await page.getByTestId('plan-subitem').click();
    await expect(page.getByRole('option', { name: 'L4 · 2 GB' })).toBeVisible();
    await expect(page.getByRole('option', { name: 'L4 · 4 GB' })).toBeVisible();
    await windowShot(page, 'admin-reserve-planner-offers');
    await page.keyboard.press('Escape');

    // A profile a desktop asks for cannot go while no other card offers it; this card goes.
    await openScreen(page, 'reservables', T.nav.reservables);
    const demo = page.getByTestId('card-panel').filter({ hasText: 'NVIDIA A40 #1' });
    await demo.getByTestId('profile-row').filter({ hasText: 'NVIDIA-A40-2Q' }).getByTestId('profile-remove').click();
    await page.getByTestId('profile-remove-confirm').click();
    await expect(page.getByTestId('profile-remove-error')).toContainText(/desktops or templates still ask/);
    await windowShot(page, 'admin-reserve-profile-in-use');
    await page.keyboard.press('Escape');
    await page.getByTestId('card-panel').filter({ hasText: name }).getByTestId('card-delete').click();
    await page.getByTestId('card-delete-confirm').click();
    await expect(page.getByTestId('card-panel').filter({ hasText: name })).toHaveCount(0);
  });

  test("the admin changes the booking rules of the user role; the user's next booking follows", async ({ page, request }) => {
    test.setTimeout(scaled(120_000));
    const user = await apiToken(request, 'user');
    const headers = { authorization: `Bearer ${user}` };
    const desktops = (await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string }[];
    const gpu = desktops.find((d) => d.name === 'GPU desktop')!.id;
    const fmt = (d: Date) => `${d.toISOString().slice(0, 16)}+0000`;
    const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3 * 3_600_000;
    const book = (fromMin: number, toMin: number) =>
      request.post('/api/v3/booking/event', { headers, data: { element_id: gpu, element_type: 'desktop', start: fmt(new Date(base + fromMin * 60_000)), end: fmt(new Date(base + toMin * 60_000)) } });
    // The default rule: 60 minutes at most.
    const refused = await book(0, 90);
    expect(refused.status()).toBeGreaterThanOrEqual(400);

    await signInAs(page, 'admin');
    await openScreen(page, 'booking_rules', T.nav.booking_rules);
    await expect(page.getByTestId('rule-row')).toHaveCount(2);
    await page.getByTestId('rules-new').click();
    await page.getByTestId('rule-form-name').fill(`Students ${run}`);
    // A person clicks the multi-select's box (its input sits under the pills' wrapper).
    await page.locator('.mantine-MultiSelect-input', { has: page.getByTestId('rule-form-roles') }).click();
    await page.getByRole('option', { name: core.roles.user }).click();
    await page.keyboard.press('Escape');
    await page.getByTestId('rule-form-priority').fill('10');
    await page.getByTestId('rule-form-max-time').fill('120');
    await page.getByTestId('rule-form-max-items').fill('2');
    await page.getByTestId('rule-form-forbid').fill('30');
    await windowShot(page, 'admin-reserve-rule-form');
    await page.getByTestId('rule-form-save').click();
    const row = page.getByTestId('rule-row').filter({ hasText: `Students ${run}` });
    await expect(row.getByTestId('rule-max-time')).toHaveText(`120 ${T.min}`);
    await expect(row.getByTestId('rule-max-items')).toHaveText('2');
    await noticesGone(page);
    await shot(page, 'admin-reserve-rules-en');

    // The user's next booking: 90 minutes now fit, and a second one.
    const priority = await (await request.get(`/api/v3/bookings/priority/desktop/${gpu}`, { headers })).json();
    expect(priority).toMatchObject({ max_time: 120, max_items: 2, forbid_time: 30 });
    const first = await book(0, 90);
    expect(first.status()).toBe(200);
    const second = await book(24 * 60, 24 * 60 + 30);
    expect(second.status()).toBe(200);
    expect((await book(48 * 60, 48 * 60 + 30)).status()).toBe(428);
    for (const b of [first, second]) await request.delete(`/api/v3/booking/event/${((await b.json()) as { id: string }).id}`, { headers });

    // The rule goes again (as the admin does it): the default applies.
    await row.getByTestId('rule-delete').click();
    await page.getByTestId('rule-delete-confirm').click();
    await expect(page.getByTestId('rule-row').filter({ hasText: `Students ${run}` })).toHaveCount(0);
    expect(await (await request.get(`/api/v3/bookings/priority/desktop/${gpu}`, { headers })).json()).toMatchObject({ max_time: 60, max_items: 1 });
  });

  test("an auto-shutdown policy: the owner's desktop card shows when it stops", async ({ page, browser, request }) => {
    test.setTimeout(scaled(240_000));
    const username = `shutdown-${run}`;
    await freshUser(request, username);
    const token = await apiToken(request, username);
    const headers = { authorization: `Bearer ${token}` };
    const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string; name: string }[];
    const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0];
    expect((await request.post('/api/v3/persistent_desktop', { headers, data: { name: 'Report desktop', template_id: template!.id } })).status()).toBe(200);

    await signInAs(page, 'admin');
    await openScreen(page, 'shutdown_policies', T.nav.shutdown_policies);
    await page.getByTestId('policies-new').click();
    await page.getByTestId('policy-form-name').fill(`Evening stop ${run}`);
    await pick(page, 'policy-form-kind', T.policies.kind_user);
    await page.getByTestId('policy-form-target').fill(username);
    await page.getByRole('option', { name: new RegExp(username) }).click();
    await expect(page.getByTestId('policy-form-target')).toHaveValue(new RegExp(username));
    await page.getByTestId('policy-form-max-time').fill('240');
    await page.getByTestId('policy-form-idle-time').fill('60');
    await windowShot(page, 'admin-reserve-policy-form');
    await page.getByTestId('policy-form-save').click();
    const row = page.getByTestId('policy-row').filter({ hasText: `Evening stop ${run}` });
    await expect(row.getByTestId('policy-max-time')).toHaveText(T.policies.minutes.replace('{{count}}', '240'));
    await noticesGone(page);
    await shot(page, 'admin-reserve-policies-en');

    // The owner starts the desktop; its card says when it stops by itself (started + 4 h).
    const owner = await browser.newContext();
    const ownerPage = await owner.newPage();
    await signInAs(ownerPage, username);
    const card = ownerPage.getByTestId('desktop-card').filter({ hasText: 'Report desktop' });
    const before = Date.now();
    await card.getByTestId('desktop-action-start').click();
    await expect(card).toHaveAttribute('data-state', 'started', { timeout: scaled(120_000) });
    const notice = card.getByTestId('desktop-shutdown');
    await expect(notice).toBeVisible({ timeout: scaled(20_000) });
    const expected = new Date(before + 240 * 60_000);
    const hhmm = (d: Date) => d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
    const shown = (await notice.innerText()).trim();
    expect([hhmm(expected), hhmm(new Date(expected.getTime() + 60_000)), hhmm(new Date(expected.getTime() + 120_000))].some((t) => shown.includes(t))).toBe(true);
    await shot(ownerPage, 'admin-reserve-desktop-card-shutdown');
    // At phone width, loaded as a phone would (no sidebar sliding away mid-shot).
    await ownerPage.setViewportSize({ width: 390, height: 844 });
    await ownerPage.reload();
    await expect(notice).toBeVisible({ timeout: scaled(20_000) });
    await shot(ownerPage, 'admin-reserve-desktop-card-shutdown-phone');
    await ownerPage.setViewportSize({ width: 1280, height: 800 });

    // The policy goes: the card's notice goes at once.
    await row.getByTestId('policy-delete').click();
    await page.getByTestId('policy-delete-confirm').click();
    await expect(row).toHaveCount(0);
    await expect(notice).toHaveCount(0, { timeout: scaled(20_000) });
    await card.getByTestId('desktop-action-stop').click();
    await expect(card).toHaveAttribute('data-state', /stopped|shutting-down|stopping/, { timeout: scaled(60_000) });
    await owner.close();
  });

  test('managers reach only the policies of their category; screens in Catalan, at phone width, empty and failing', async ({ page, browser, request }) => {
    test.setTimeout(scaled(180_000));
    const managerContext = await browser.newContext();
    const manager = await managerContext.newPage();
    await signInAs(manager, 'manager');
    await manager.goto('/isard-admin/shutdown_policies');
    await expect(manager.getByRole('heading', { name: T.nav.shutdown_policies, level: 1 })).toBeVisible({ timeout: scaled(20_000) });
    const nav = manager.locator('nav');
    await expect(nav.getByText(T.nav.shutdown_policies)).toBeVisible();
    await expect(nav.getByText(T.nav.reservables)).toHaveCount(0);
    await expect(nav.getByText(T.nav.booking_rules)).toHaveCount(0);
    await expect(manager.getByTestId('empty-state')).toBeVisible();
    await shot(manager, 'admin-reserve-policies-empty-manager');
    await managerContext.close();

    // An administrator of the journey's own: the Catalan chosen is saved for them.
    await freshUser(request, 'reserve-ca-admin', 'admin');
    await signInAs(page, 'reserve-ca-admin');
    const screens = [
      { path: 'reservables', en: T.nav.reservables, ca: ca.admin_reserve.nav.reservables, name: 'cards' },
      { path: 'booking_rules', en: T.nav.booking_rules, ca: ca.admin_reserve.nav.booking_rules, name: 'rules' },
      { path: 'shutdown_policies', en: T.nav.shutdown_policies, ca: ca.admin_reserve.nav.shutdown_policies, name: 'policies' },
    ];
    await openScreen(page, 'reservables', T.nav.reservables);
    await chooseLanguage(page, 'ca-ES');
    try {
      for (const s of screens) {
        await openScreen(page, s.path, s.ca);
        await shot(page, `admin-reserve-${s.name}-ca`);
      }
    } finally {
      await chooseLanguage(page, 'en-US');
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(T.nav.shutdown_policies);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const s of screens) {
      await openScreen(page, s.path, s.en);
      await shot(page, `admin-reserve-${s.name}-phone`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    // A list that cannot be read says so.
    await page.route('**/api/v3/admin/reservables/gpus', (r) => r.abort());
    await page.goto('/isard-admin/reservables');
    await expect(page.getByTestId('cards-error')).toBeVisible({ timeout: scaled(20_000) });
    await shot(page, 'admin-reserve-cards-error');
  });
});
