import { expect, test, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import enB from '../src/i18n/locales/bookings/en.json' with { type: 'json' };
import caB from '../src/i18n/locales/bookings/ca.json' with { type: 'json' };
import { chooseLanguage, freshUser, notice, scaled, signInAs, windowShot as shot } from './support';

// The admin plans the demo GPU (NVIDIA A40 #1): the seed offers its 2Q profile for four weeks
// from now, then 4Q for two; the admin adds a day of 4Q seven weeks ahead, is refused with the
// planner's messages when the dates break a rule, changes the plan and deletes it.

const pad = (n: number) => String(n).padStart(2, '0');
const ymd = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

/** The Tuesday seven weeks after this week's Monday: after every seeded plan. */
function planDay() {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7) + 7 * 7 + 1);
  return d;
}

async function fillPlan(page: Page, start: Date | string, startTime: string, end: Date | string, endTime: string) {
  await page.getByTestId('plan-start-date').fill(typeof start === 'string' ? start : ymd(start));
  await page.getByTestId('plan-start-time').fill(startTime);
  await page.getByTestId('plan-end-date').fill(typeof end === 'string' ? end : ymd(end));
  await page.getByTestId('plan-end-time').fill(endTime);
}

test.describe.serial('planner', () => {
  test('the admin makes a GPU profile available on a day and hours, and is refused when the dates break a rule', async ({ page, request }) => {
    // An administrator of the journey's own: the Catalan chosen on the way is saved for them.
    await freshUser(request, 'planner-admin', 'admin');
    await signInAs(page, 'planner-admin');
    // Planning sits in the sidebar, right under Bookings.
    await page.getByTestId('navbar').getByTestId('nav-planning').click();
    await expect(page).toHaveURL(/\/planning$/);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(enB.planner.heading);
    await expect(page.getByTestId('planner-item')).toHaveValue('NVIDIA A40 #1');
    const calendar = page.getByTestId('planner-calendar');
    // This week shows the seeded 2Q plan.
    await expect(calendar.locator('.plan-event').first()).toContainText('NVIDIA A40 · 2 GB');
    await shot(page, 'planner-week');

    const day = planDay();
    await page.getByTestId('planner-new').click();
    const modal = page.getByRole('dialog');
    await expect(modal).toContainText(enB.planner.modal.new_title);
    await expect(page.getByTestId('plan-type')).toHaveValue(enB.planner.types.gpus);
    await page.getByTestId('plan-subitem').click();
    await page.getByRole('option', { name: /NVIDIA A40 · 4 GB/ }).click();

    // End before start.
    await fillPlan(page, day, '17:00', day, '09:00');
    await page.getByTestId('plan-save').click();
    await expect(page.getByTestId('plan-error')).toHaveText(en.errors.planner_end_before_start);
    // Shorter than the minimum.
    await fillPlan(page, day, '09:00', day, '09:03');
    await page.getByTestId('plan-save').click();
    await expect(page.getByTestId('plan-error')).toHaveText(en.errors.planner_minimum_time.replace('{{minutes}}', '5'));
    // In the past.
    await fillPlan(page, '2020-01-06', '09:00', '2020-01-06', '17:00');
    await page.getByTestId('plan-save').click();
    await expect(page.getByTestId('plan-error')).toHaveText(en.errors.planner_past_booking);
    await shot(page, 'planner-modal-refused');
    // A good one: 09:00 to 17:00, seven weeks ahead.
    await fillPlan(page, day, '09:00', day, '17:00');
    await page.getByTestId('plan-save').click();
    await expect(modal).toBeHidden();

    // Go to that week: the plan is there.
    for (let i = 0; i < 7; i++) await calendar.getByRole('button', { name: /next/i }).click();
    const plan = calendar.locator('.plan-event', { hasText: 'NVIDIA A40 · 4 GB' });
    await expect(plan).toHaveCount(1);
    await shot(page, 'planner-new-plan');

    // Change it to end at 18:00.
    await plan.click();
    await expect(modal).toContainText(enB.planner.modal.edit_title);
    await expect(page.getByTestId('plan-id')).not.toHaveValue('');
    await expect(page.getByTestId('plan-end-time')).toHaveValue('17:00');
    await page.getByTestId('plan-end-time').fill('18:00');
    await shot(page, 'planner-modal-edit');
    await page.getByTestId('plan-save').click();
    await expect(modal).toBeHidden();
    await expect(plan).toContainText(/18[:.]00/);

    // An overlapping plan of the same card is refused.
    await page.getByTestId('planner-new').click();
    await fillPlan(page, day, '12:00', day, '20:00');
    await page.getByTestId('plan-save').click();
    await expect(page.getByTestId('plan-error')).toHaveText(en.errors.plan_overlap);
    await page.getByRole('button', { name: en.common.cancel }).click();

    // Delete it.
    await plan.click();
    await page.getByTestId('plan-delete').click();
    await expect(modal).toBeHidden();
    await expect(plan).toHaveCount(0);

    // A plan made elsewhere (here through the API, with this session) appears live, and goes.
    const token = decodeURIComponent((await page.context().cookies()).find((c) => c.name === 'isardvdi_session')!.value);
    const headers = { authorization: `Bearer ${token}` };
    const at = (h: number) => new Date(day.getFullYear(), day.getMonth(), day.getDate(), h).toISOString();
    const made = await page.request.post('/api/v3/admin/reservables_planner', {
      headers,
      data: { item_type: 'gpus', item_id: 'demo-nvidia-a40', subitem_id: 'NVIDIA-A40-2Q', start: at(13), end: at(15) },
    });
    expect(made.status()).toBe(200);
    const live = calendar.locator('.plan-event', { hasText: 'NVIDIA A40 · 2 GB' });
    await expect(live).toHaveCount(1);
    expect((await page.request.delete(`/api/v3/admin/reservables_planner/${((await made.json()) as { id: string }).id}`, { headers })).status()).toBe(200);
    await expect(live).toHaveCount(0);

    // Month view, in Catalan.
    await chooseLanguage(page, 'ca-ES');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(caB.planner.heading);
    await calendar.getByRole('tab', { name: 'Mes' }).click();
    await calendar.getByRole('button', { name: /avui/i }).click();
    await expect(calendar.locator('.plan-event').first()).toBeVisible();
    await expect(notice(page, ca.session.language_saved)).toBeHidden({ timeout: scaled(10_000) });
    await shot(page, 'planner-month-ca-ES');
    await chooseLanguage(page, 'en-US');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(enB.planner.heading);
  });

  test('the planner is for admins only', async ({ page }) => {
    await signInAs(page, 'manager');
    await expect(page.getByTestId('navbar').getByTestId('nav-booking_summary')).toBeVisible();
    await expect(page.getByTestId('nav-planning')).toHaveCount(0);
    await page.goto('/planning');
    await expect(page).not.toHaveURL(/\/planning$/);
  });
});
