import { expect, test, type Page } from '@playwright/test';
import enCore from '../src/i18n/locales/en.json' with { type: 'json' };
import enContent from '../src/i18n/locales/content/en.json' with { type: 'json' };
import enDep from '../src/i18n/locales/deployments/en.json' with { type: 'json' };
import enB from '../src/i18n/locales/bookings/en.json' with { type: 'json' };
import { apiToken, notice, scaled, signInAs, windowShot as shot } from './support';

/** The English texts these journeys read: the core catalogue and the content area (templates, media, disks, the desktop form). */
const en = { ...enCore, ...enContent };

// `advanced` (Teo) rolls Demo Linux out to Students 1A (Sara, Pau and a member by a second group) with the NVIDIA A40 2Q
// profile and lets the students recreate their desktop; he books the deployment in its calendar
// and sees the booking on the deployment. Pau (student02) then recreates his stopped desktop from
// its menu. No VM boots. The deployment is deleted at the end, so the other journeys never see it.

const t = enDep.deployments;
const NAME = 'GPU lab';
const DESKTOP = 'GPU lab desktop';
const PROFILE = 'NVIDIA A40 · 2 GB';

const pad = (n: number) => String(n).padStart(2, '0');
const local = (d: Date, hh: number, mm = 0) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(hh)}:${pad(mm)}`;
const tomorrow = (() => {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() + 1);
  return d;
})();
const fill = (text: string, params: Record<string, string | number> = {}) => text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k]));

async function chooseOption(page: Page, testId: string, option: string) {
  await page.getByTestId(testId).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

test.describe.serial('deployments with a GPU', () => {
  let deploymentId = '';

  test.afterAll(async ({ request }) => {
    if (!deploymentId) return;
    const token = await apiToken(request, 'advanced');
    const res = await request.delete(`/api/v3/deployments/${deploymentId}/permanent`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.ok(), `delete: ${res.status()} ${await res.text()}`).toBe(true);
  });

  test('a teacher gives a group GPU desktops and books them', async ({ page }) => {
    await signInAs(page, 'advanced');
    await page.getByTestId('navbar').getByTestId('nav-deployments').click();
    await page.getByTestId('deployment-new').click();
    await page.getByTestId('deployment-template').click();
    await page.getByRole('option', { name: 'Demo Linux' }).click();
    await page.getByTestId('deployment-form-name').fill(NAME);
    await page.getByTestId('deployment-form-desktop-name').fill(DESKTOP);
    await page.getByTestId('sharing-groups').check();
    const search = page.getByTestId('sharing-groups-search');
    await search.click();
    await search.fill('Stud');
    await page.getByRole('option', { name: 'Students 1A' }).click();
    await page.keyboard.press('Escape');

    // Without a GPU the video is the default one and cannot be changed.
    const video = page.getByTestId('deployment-form-video');
    await expect(video).toBeDisabled();
    await expect(video).toHaveValue(en.domain_edit.choices.videos.default);
    // With the 2Q profile, "Only GPU" is refused while a non-RDP viewer is on.
    await chooseOption(page, 'deployment-form-gpu', PROFILE);
    await expect(video).toBeEnabled();
    await chooseOption(page, 'deployment-form-video', en.domain_edit.choices.videos.none);
    await expect(video).toHaveAttribute('aria-invalid', 'true');
    await page.getByTestId('deployment-form-recreate').check();
    await page.getByTestId('deployment-form-submit').click();
    await expect(page.getByTestId('viewers-error')).toHaveText(en.errors.only_works_rdp);
    await shot(page, 'deployment-gpu-only-refused');
    await chooseOption(page, 'deployment-form-video', en.domain_edit.choices.videos.default);
    await expect(video).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByTestId('viewers-error')).toHaveCount(0);
    await shot(page, 'deployment-gpu-form');

    await page.getByTestId('deployment-form-submit').click();
    await expect(page.getByTestId('deployment-confirm-count')).toHaveAttribute('data-count', '3');
    await page.getByTestId('deployment-confirm-create').click();
    await expect(page).toHaveURL(/\/deployment\/[^/]+$/);
    deploymentId = page.url().split('/').pop()!;
    await expect(page.getByTestId('deployment-user')).toHaveCount(3, { timeout: scaled(30_000) });
    await expect(page.getByTestId('deployment-needs-booking')).toHaveText(t.needs_booking);
    await expect(page.getByTestId('deployment-next-booking')).toHaveText(t.no_booking);

    // What was sent and kept: the profile, the default video, the students' recreate right.
    // (with the browser's own session: signing in again through the API would end it)
    const token = decodeURIComponent((await page.context().cookies()).find((c) => c.name === 'isardvdi_session')!.value);
    const info = await (await page.request.get(`/api/v3/deployment/info/${deploymentId}`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(info.reservables.vgpus).toEqual(['NVIDIA-A40-2Q']);
    expect(info.hardware.videos).toEqual(['default']);
    expect(info.user_permissions).toContain('recreate');

    // The edit page shows the profile chosen.
    await page.getByTestId('deployment-more').click();
    await page.getByTestId('deployment-edit').click();
    await expect(page.getByTestId('deployment-form-gpu')).toHaveValue(PROFILE);
    await page.getByRole('button', { name: en.common.cancel }).click();

    // Book: the deployment's calendar; a half hour tomorrow morning.
    await page.getByTestId('deployment-book').click();
    await expect(page).toHaveURL(new RegExp(`/booking/deployment/${deploymentId}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(fill(enB.bookings.item_heading, { name: NAME }));
    await page.getByTestId('booking-new').click();
    await page.getByTestId('booking-start').fill(local(tomorrow, 10));
    await page.getByTestId('booking-end').fill(local(tomorrow, 10, 30));
    await page.getByTestId('booking-save').click();
    await expect(page.getByRole('dialog')).toBeHidden();
    // The week shown is this one (Monday to Sunday): on a Sunday, tomorrow is in the next.
    if (tomorrow.getDay() === 1) await page.getByTestId('booking-calendar').getByRole('button', { name: /next/i }).click();
    await expect(page.getByTestId('booking-calendar').locator('.booking-event').first()).toBeVisible();
    await shot(page, 'deployment-gpu-booked');

    // The deployment shows its next booking.
    await page.goto(`/deployment/${deploymentId}`);
    await expect(page.getByTestId('deployment-next-booking')).toHaveText(fill(t.next_booking, { start: local(tomorrow, 10), end: local(tomorrow, 10, 30) }));
    await shot(page, 'deployment-gpu-detail');
    // The list's card links to the calendar too.
    await page.goto('/deployments');
    const card = page.locator(`[data-testid=deployment-card][data-name="${NAME}"]`);
    await expect(card.getByText(t.needs_booking)).toBeVisible();
    await shot(page, 'deployment-gpu-list');
    await card.getByTestId('deployment-card-book').click();
    await expect(page).toHaveURL(new RegExp(`/booking/deployment/${deploymentId}$`));
  });

  test('a student recreates the stopped desktop the deployment lets them recreate', async ({ page }) => {
    await signInAs(page, 'student02');
    const card = page.locator(`[data-testid=desktop-card][data-name="${DESKTOP}"]`);
    await expect(card).toHaveAttribute('data-state', 'stopped');
    // Their own desktop has no such action.
    await page.locator('[data-testid=desktop-card][data-name="Demo desktop"]').getByTestId('desktop-menu').click();
    await expect(page.getByTestId('desktop-recreate')).toHaveCount(0);
    await page.keyboard.press('Escape');
    await card.getByTestId('desktop-menu').click();
    await expect(page.getByTestId('desktop-recreate')).toBeEnabled();
    await shot(page, 'desktop-recreate-menu');
    await page.getByTestId('desktop-recreate').click();
    await expect(page.getByRole('dialog')).toContainText(fill(en.domain_edit.recreate_body, { name: DESKTOP }));
    await shot(page, 'desktop-recreate-confirm');
    await page.getByTestId('confirm-recreate').click();
    await expect(notice(page, fill(en.domain_edit.recreated, { name: DESKTOP }))).toBeVisible();
    await expect(card).toHaveAttribute('data-state', 'stopped');
  });
});
