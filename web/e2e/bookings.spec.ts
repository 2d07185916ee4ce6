import { expect, test, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import enB from '../src/i18n/locales/bookings/en.json' with { type: 'json' };
import caB from '../src/i18n/locales/bookings/ca.json' with { type: 'json' };
import { apiToken, chooseLanguage, notice, scaled, signInAs, windowShot as shot } from './support';

// The demo `user` (Uma) has "GPU desktop", which needs the NVIDIA A40 2Q profile; the seed plans
// 2Q on the demo card for the next four weeks (4Q for two more). Default booking rules: bookings
// of at most 60 minutes, one upcoming booking at a time, no advance notice. No other journey uses
// this desktop; the journey stops what it starts.

const GPU_DESKTOP = 'GPU desktop';
const PROFILE_2Q = 'NVIDIA-A40-2Q';
const PROFILE_4Q = 'NVIDIA-A40-4Q';

const pad = (n: number) => String(n).padStart(2, '0');
const local = (d: Date, hh: number, mm = 0) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(hh)}:${pad(mm)}`;
const dayFromToday = (days: number) => {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() + days);
  return d;
};
/** A catalogue text with its {{params}} filled in. */
const fill = (text: string, params: Record<string, string | number> = {}) => text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k]));

const card = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

/** A call with the browser's own session (signing in again through the API would end it). */
async function asUser(page: Page, method: 'GET' | 'PUT', path: string, data?: unknown) {
  const token = decodeURIComponent((await page.context().cookies()).find((c) => c.name === 'isardvdi_session')!.value);
  const res = await page.request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });
  expect(res.ok(), `${method} ${path}: ${res.status()}`).toBe(true);
  return res.json();
}

/** Stops the desktop through the API (a second stop forces it, as the card's force stop does). */
async function stopDesktop(page: Page, id: string) {
  await asUser(page, 'GET', `/desktop/stop/${id}`);
  const stopped = async () => ((await asUser(page, 'GET', '/user/desktops')) as { id: string; state: string }[]).find((d) => d.id === id)?.state.toLowerCase() === 'stopped';
  try {
    await expect.poll(stopped, { timeout: scaled(10_000) }).toBe(true);
  } catch {
    await asUser(page, 'GET', `/desktop/stop/${id}`);
    await expect.poll(stopped, { timeout: scaled(30_000) }).toBe(true);
  }
}

async function fillBooking(page: Page, start: string, end: string) {
  await page.getByTestId('booking-start').fill(start);
  await page.getByTestId('booking-end').fill(end);
  await page.getByTestId('booking-save').click();
}

test.describe.serial('bookings', () => {
  let desktopId = '';
  const tomorrow = dayFromToday(1);
  // The journey shows the calendar in Catalan: whatever happens, the demo user goes on in English.
  test.afterAll(async ({ request }) => {
    const token = await apiToken(request, 'user');
    await request.fetch('/api/v3/user/language/en', { method: 'PUT', headers: { authorization: `Bearer ${token}` } });
  });

  test('the user books the GPU desktop in its calendar, is refused by the rules, and finds the booking in the summary', async ({ page }) => {
    await signInAs(page, 'user');
    // No bookings yet: the summary says so.
    await page.getByTestId('navbar').getByTestId('nav-booking_summary').click();
    await expect(page.getByTestId('empty-state')).toContainText(enB.bookings.summary.empty_title);
    await shot(page, 'booking-summary-empty');
    await page.getByTestId('navbar').getByTestId('nav-desktops').click();
    const gpu = card(page, GPU_DESKTOP);
    await expect(gpu.getByText(en.desktops.needs_booking)).toBeVisible();
    desktopId = (await gpu.getAttribute('data-desktop-id'))!;
    await gpu.getByTestId('desktop-book').click();
    await expect(page).toHaveURL(new RegExp(`/booking/desktop/${desktopId}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(fill(enB.bookings.item_heading, { name: GPU_DESKTOP }));
    await expect(page.getByTestId('booking-profile')).toHaveAttribute('data-profile', PROFILE_2Q);
    await expect(page.getByTestId('booking-profile')).toHaveText('NVIDIA A40 · 2 GB');
    await expect(page.getByTestId('booking-limits')).toContainText(fill(enB.bookings.limits.max_time_other, { count: 60 }));

    // Week view (default): the 2Q plan shows as availability from now on.
    const calendar = page.getByTestId('booking-calendar');
    await expect(calendar.getByRole('tab', { name: 'Week' })).toHaveAttribute('aria-selected', 'true');
    await expect(calendar.locator('.availability-available').first()).toBeAttached();
    // It opens on the working hours (from 07:00, or earlier when it is earlier now); the whole day is one click away.
    const firstSlot = `${String(Math.min(7, new Date().getHours())).padStart(2, '0')}:00:00`;
    await expect(calendar.locator('[data-time]').first()).toHaveAttribute('data-time', firstSlot);
    await calendar.getByRole('button', { name: en.calendar.whole_day }).click();
    await expect(calendar.locator('[data-time]').first()).toHaveAttribute('data-time', '00:00:00');
    await calendar.getByRole('button', { name: en.calendar.working_hours }).click();
    await expect(calendar.locator('[data-time]').first()).toHaveAttribute('data-time', firstSlot);
    await shot(page, 'booking-week');
    // Month view.
    await calendar.getByRole('tab', { name: 'Month' }).click();
    await expect(calendar.locator('.availability-available').first()).toBeAttached();
    await shot(page, 'booking-month');
    await calendar.getByRole('tab', { name: 'Week' }).click();
    if (tomorrow.getDay() === 1) await calendar.getByRole('button', { name: /next/i }).click();

    // Dragging over tomorrow from 14:00 to 15:00 opens the booking modal with that time.
    const column = calendar.getByRole('columnheader', { name: new RegExp(`\\b${tomorrow.getDate()}\\b`) }).first();
    const x = await column.evaluate((el) => { const r = el.getBoundingClientRect(); return r.left + r.width / 2; });
    const slotY = async (time: string) => calendar.locator(`[data-time="${time}"]`).first().evaluate((el) => { const r = el.getBoundingClientRect(); return r.top + r.height / 2; });
    // The drag starts mid-window: near its edge (the calendar opens at 06:00 before 07:00, which puts 14:00 at the
    // bottom) the calendar scrolls while the pointer moves, and the drag ends an hour or more later.
    await calendar.locator('[data-time="14:00:00"]').first().evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await page.mouse.move(x, await slotY('14:00:00'));
    await page.mouse.down();
    await page.mouse.move(x, await slotY('14:30:00'), { steps: 4 });
    await page.mouse.up();
    const modal = page.getByRole('dialog');
    await expect(modal).toContainText(enB.bookings.modal.new_title);
    await expect(page.getByTestId('booking-start')).toHaveValue(local(tomorrow, 14));
    await expect(page.getByTestId('booking-end')).toHaveValue(local(tomorrow, 15));

    // The rules answer before anything is sent, with the server's own codes.
    await expect(page.getByTestId('booking-title')).toHaveValue(GPU_DESKTOP);
    await fillBooking(page, local(tomorrow, 11), local(tomorrow, 10));
    await expect(page.getByTestId('booking-error')).toHaveText(en.errors.booking_new_event_end_error);
    await fillBooking(page, local(tomorrow, 10), local(tomorrow, 10, 3));
    await expect(page.getByTestId('booking-error')).toHaveText(fill(en.errors.booking_minimum_time, { minutes: 5 }));
    await fillBooking(page, local(dayFromToday(-1), 10), local(dayFromToday(-1), 10, 30));
    await expect(page.getByTestId('booking-error')).toHaveText(en.errors.booking_new_event_start_error);
    await fillBooking(page, local(tomorrow, 10), local(tomorrow, 12));
    await expect(page.getByTestId('booking-error')).toHaveText(fill(en.errors.bookings_max_time_reached, { minutes: 60 }));
    await shot(page, 'booking-modal-refused');
    // Eight weeks ahead no plan offers the profile.
    await fillBooking(page, local(dayFromToday(56), 10), local(dayFromToday(56), 10, 30));
    await expect(page.getByTestId('booking-error')).toHaveText(en.errors.booking_does_not_fit_date);
    // A good one.
    await page.getByTestId('booking-title').fill('Rendering');
    await fillBooking(page, local(tomorrow, 10), local(tomorrow, 11));
    await expect(modal).toBeHidden();
    const booked = calendar.locator('.booking-event', { hasText: 'Rendering' });
    await expect(booked).toHaveCount(1);
    await expect(booked).toContainText('10:00');

    // One upcoming booking at most.
    await page.getByTestId('booking-new').click();
    await fillBooking(page, local(dayFromToday(2), 10), local(dayFromToday(2), 10, 30));
    await expect(page.getByTestId('booking-error')).toHaveText(fill(en.errors.booking_max_items_exceeded, { max: 1 }));
    await page.getByRole('button', { name: en.common.cancel }).click();

    // Move it: it ends at 10:45.
    await booked.click();
    await expect(modal).toContainText(enB.bookings.modal.edit_title);
    await expect(page.getByTestId('booking-start')).toHaveValue(local(tomorrow, 10));
    await fillBooking(page, local(tomorrow, 10), local(tomorrow, 10, 45));
    await expect(modal).toBeHidden();
    await expect(booked).toContainText('10:45');
    await shot(page, 'booking-week-booked');

    // The summary lists it, with a link back to the calendar.
    await page.getByTestId('navbar').getByTestId('nav-booking_summary').click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(enB.bookings.summary.heading);
    const row = page.getByTestId('booking-row');
    await expect(row).toHaveCount(1);
    await expect(row).toContainText(GPU_DESKTOP);
    await expect(row).toContainText('Rendering');
    await expect(row).toContainText(local(tomorrow, 10));
    await expect(row.getByTestId('booking-status')).toHaveText(enB.bookings.status.upcoming);
    await shot(page, 'booking-summary');
    await page.getByTestId('summary-view-calendar').click();
    await expect(page.getByTestId('summary-calendar').locator('.booking-event', { hasText: 'Rendering' })).toBeVisible();
    await shot(page, 'booking-summary-calendar');
    await page.getByTestId('summary-view-list').click();
    await row.getByTestId('booking-item-link').click();
    await expect(page).toHaveURL(new RegExp(`/booking/desktop/${desktopId}$`));

    // The calendar in Catalan.
    await chooseLanguage(page, 'ca-ES');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(fill(caB.bookings.item_heading, { name: ca.built_in.gpu_desktop }));
    await expect(page.getByTestId('booking-calendar').getByRole('tab', { name: 'Setmana' })).toBeVisible();
    await expect(notice(page, ca.session.language_saved)).toBeHidden({ timeout: scaled(10_000) });
    await shot(page, 'booking-week-ca-ES');
    await chooseLanguage(page, 'en-US');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(fill(enB.bookings.item_heading, { name: GPU_DESKTOP }));

    // And in the dark colour scheme.
    // (each language change says it was saved; wait until every such notice has gone)
    await expect(notice(page, ca.session.language_saved)).toHaveCount(0, { timeout: scaled(10_000) });
    await expect(notice(page, en.session.language_saved)).toHaveCount(0, { timeout: scaled(10_000) });
    await page.getByRole('button', { name: en.nav.dark_mode }).first().click();
    await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
    await shot(page, 'booking-week-dark');
    await page.getByRole('button', { name: en.nav.light_mode }).first().click();
  });

  test('outside a booking the desktop does not start: the cannot-start dialog, then start now with an end time', async ({ page }) => {
    test.setTimeout(scaled(180_000));
    await signInAs(page, 'user');
    const gpu = card(page, GPU_DESKTOP);
    const dialog = page.getByRole('dialog');

    // Booked tomorrow only: the start is refused, saying when the booking begins; start now is offered.
    await gpu.getByTestId('desktop-action-start').click();
    await expect(page.getByTestId('start-now-dialog')).toBeVisible();
    await expect(page.getByTestId('start-reason')).toContainText(local(tomorrow, 10));
    await expect(page.getByTestId('start-now-profile')).toHaveValue('NVIDIA A40 · 2 GB');
    await shot(page, 'start-now-dialog-booked-later');
    await dialog.getByRole('button', { name: en.common.cancel }).click();
    await expect(dialog).toBeHidden();
    await expect(gpu).toHaveAttribute('data-state', 'stopped');

    // With the 4Q profile (no plan offers it now; the change drops the bookings): cannot start.
    await asUser(page, 'PUT', `/domain/reservables/${desktopId}`, { vgpus: [PROFILE_4Q] });
    await page.reload();
    await gpu.getByTestId('desktop-action-start').click();
    await expect(page.getByTestId('cannot-start-dialog')).toBeVisible();
    await expect(page.getByTestId('start-reason')).toContainText(en.errors.current_plan_doesnt_match);
    // It offers the profile available now (2Q) with its end times, or going to bookings.
    await expect(page.getByTestId('start-now-profile')).toHaveValue('NVIDIA A40 · 2 GB');
    await expect(page.getByTestId('start-now-confirm')).toHaveText(enB.bookings.start_now.change_and_start);
    await expect(page.getByTestId('start-go-bookings')).toBeVisible();
    await shot(page, 'cannot-start-dialog');
    await page.getByTestId('start-go-bookings').click();
    await expect(page).toHaveURL(new RegExp(`/booking/desktop/${desktopId}$`));
    await expect(page.getByTestId('booking-calendar').locator('.booking-event')).toHaveCount(0);

    // Back to 2Q, nothing booked: start now, until the first half hour offered.
    await asUser(page, 'PUT', `/domain/reservables/${desktopId}`, { vgpus: [PROFILE_2Q] });
    await page.getByTestId('navbar').getByTestId('nav-desktops').click();
    await gpu.getByTestId('desktop-action-start').click();
    await expect(page.getByTestId('start-now-dialog')).toBeVisible();
    await expect(page.getByTestId('start-reason')).toContainText(en.errors.desktop_not_booked);
    await page.getByTestId('start-now-end').click();
    const options = page.getByRole('option');
    // 30-minute steps up to the max booking date (60 minutes for users): two choices.
    await expect(options).toHaveCount(2);
    const firstEnd = (await options.first().textContent())!;
    await options.first().click();
    await expect(page.getByTestId('start-now-end')).toHaveValue(firstEnd);
    await shot(page, 'start-now-dialog');
    await page.getByTestId('start-now-confirm').click();
    await expect(dialog).toBeHidden();
    await expect(gpu).toHaveAttribute('data-state', /starting|started|waitingip/, { timeout: scaled(30_000) });
    await expect(gpu).toHaveAttribute('data-state', /started|waitingip/, { timeout: scaled(90_000) });
    // The card tells until when it is booked.
    await expect(gpu.getByTestId('desktop-booking')).toContainText(firstEnd);
    await shot(page, 'start-now-started');

    // The booking shows in the summary as in progress.
    await page.getByTestId('navbar').getByTestId('nav-booking_summary').click();
    await expect(page.getByTestId('booking-row').getByTestId('booking-status')).toHaveText(enB.bookings.status.in_progress);
    await stopDesktop(page, desktopId);
  });
});
