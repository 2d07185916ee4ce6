import { expect, test, type APIRequestContext, type Locator, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import enB from '../src/i18n/locales/bookings/en.json' with { type: 'json' };
import { apiToken, PASSWORD, scaled, seriousViolations, windowShot as shot } from './support';

// A keyboard-only person (Uma, `user`): signs in, creates and starts a desktop, opens its viewer,
// books a slot for her GPU desktop, deletes the new desktop and reads it in the recycle bin —
// with Tab, Shift+Tab, Enter, Space and typing; never a click. Every element the Tab key lands
// on shows a visible focus (an outline, or a ring on what draws the control).

const DESKTOP = 'Keyboard desktop';
const pad = (n: number) => String(n).padStart(2, '0');
const local = (d: Date, hh: number, mm = 0) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(hh)}:${pad(mm)}`;

/** Whether the focused element is drawn with a focus indicator a person can see. */
async function focusVisible(page: Page) {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return 'nothing focused';
    const shown = (e: Element | null) => {
      if (!e) return false;
      const s = getComputedStyle(e);
      return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1) || (s.boxShadow !== 'none' && s.boxShadow !== '');
    };
    // Controls drawn by a sibling (switches, radios) show the ring there.
    if (shown(el) || shown(el.nextElementSibling) || shown(el.parentElement)) return 'visible';
    return `no visible focus on <${el.tagName.toLowerCase()} ${el.getAttribute('data-testid') ?? el.className}>`;
  });
}

/** Presses Tab (or Shift+Tab) until `target` has the focus, checking the focus is visible at every stop. */
async function tabTo(page: Page, target: Locator, { back = false, max = 150 } = {}) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const focused = await target.evaluate((el) => el === document.activeElement || el.contains(document.activeElement)).catch(() => false);
    const seen = await focusVisible(page);
    if (seen !== 'nothing focused') expect(seen, `focus after ${i + 1} Tab presses`).toBe('visible');
    if (focused) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

/** Uma's recycle bin without entries of this journey's desktop: an earlier try's (its clean-up deletes it) would be a second row of the same name. */
async function clearBin(request: APIRequestContext, headers: Record<string, string>) {
  const items = (await (await request.get('/api/v3/recycle_bin/item_count/user', { headers })).json()) as { id: string; item_name: string }[];
  for (const item of items.filter((i) => i.item_name === DESKTOP)) await request.delete(`/api/v3/recycle_bin/${item.id}`, { headers });
}

test.describe('keyboard only', () => {
  test.beforeAll(async ({ request }) => {
    // Any booking of Uma's left from an earlier journey would use up her one upcoming booking.
    const token = await apiToken(request, 'user');
    const headers = { authorization: `Bearer ${token}` };
    await clearBin(request, headers);
    const now = new Date();
    const later = new Date(now.getTime() + 60 * 86_400_000);
    const res = await request.get(`/api/v3/bookings/user?startDate=${now.toISOString()}&endDate=${later.toISOString()}`, { headers });
    if (res.ok()) {
      const body = (await res.json()) as { id: string }[] | { bookings?: { id: string }[] };
      const list = Array.isArray(body) ? body : (body.bookings ?? []);
      for (const b of list) await request.delete(`/api/v3/booking/event/${b.id}`, { headers });
    }
  });

  // Whatever happened, Uma's new desktop goes (stopped first): a card left shutting down keeps a loader on her list in later journeys.
  test.afterAll(async ({ request }) => {
    const headers = { authorization: `Bearer ${await apiToken(request, 'user')}` };
    const list = async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string; state: string }[]).filter((d) => d.name === DESKTOP);
    for (const d of await list()) {
      if (d.state.toLowerCase() !== 'stopped') {
        await request.get(`/api/v3/desktop/stop/${d.id}`, { headers });
        await expect
          .poll(async () => (await list()).find((x) => x.id === d.id)?.state.toLowerCase() ?? 'stopped', { timeout: scaled(60_000) })
          .toBe('stopped')
          .catch(() => request.get(`/api/v3/desktop/stop/${d.id}`, { headers }));
      }
      await request.delete(`/api/v3/desktop/${d.id}`, { headers });
    }
    await clearBin(request, headers);
  });

  test('sign in, create and start a desktop, open its viewer, book a GPU slot, read the recycle bin', async ({ page, context }) => {
    test.setTimeout(scaled(6 * 60_000));
    await page.goto('/login');
    await expect(page.getByTestId('login-submit')).toBeVisible();

    // Sign in.
    await tabTo(page, page.getByTestId('login-username'));
    await page.keyboard.type('user');
    await tabTo(page, page.getByTestId('login-password'));
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/desktops$/);

    // A new desktop from the Demo Linux template.
    await tabTo(page, page.getByTestId('new-desktop'));
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/desktops\/new$/);
    await tabTo(page, page.getByTestId('new-desktop-search'));
    await page.keyboard.type('demo');
    const demo = page.locator('[data-testid=new-desktop-template][data-template-name="Demo Linux"]');
    await tabTo(page, demo);
    await page.keyboard.press('Space');
    await expect(demo).toHaveAttribute('aria-checked', 'true');
    await tabTo(page, page.getByTestId('new-desktop-name'));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(DESKTOP);
    await shot(page, 'keyboard-new-desktop');
    await tabTo(page, page.getByTestId('new-desktop-create'));
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/desktops$/);

    // Start it.
    const mine = page.locator(`[data-testid=desktop-card][data-name="${DESKTOP}"]`);
    await expect(mine).toBeVisible();
    await tabTo(page, mine.getByTestId('desktop-action-start'));
    await shot(page, 'keyboard-start-focused');
    await page.keyboard.press('Enter');
    await expect(mine).toHaveAttribute('data-state', 'started', { timeout: scaled(90_000) });

    // Its viewer, in a new tab.
    const open = mine.getByTestId('desktop-open');
    await tabTo(page, open, { back: true });
    const [viewer] = await Promise.all([context.waitForEvent('page'), page.keyboard.press('Enter')]);
    await expect(viewer).toHaveURL(/\/viewer\/vnc$/);
    await expect(viewer.getByTestId('viewer-status')).toHaveText(en.viewer.status.connected, { timeout: scaled(30_000) });
    // The viewer hands the keys to the guest (Tab too): its toolbar is for the pointer, the guest for the keyboard.
    expect(await seriousViolations(viewer)).toEqual([]);
    await shot(viewer, 'keyboard-viewer');
    await viewer.close();

    // Stop it again (a second desktop's start would not wait for this one).
    await page.bringToFront();
    await tabTo(page, mine.getByTestId('desktop-action-stop'), { back: true });
    await page.keyboard.press('Enter');
    await expect(mine).not.toHaveAttribute('data-state', 'started', { timeout: scaled(30_000) });

    // Book the GPU desktop: from its card to its calendar, the calendar itself reachable.
    const gpu = page.locator('[data-testid=desktop-card][data-name="GPU desktop"]');
    await tabTo(page, gpu.getByTestId('desktop-book'));
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/booking\/desktop\//);
    await expect(page.getByRole('heading', { level: 1 })).toContainText('GPU desktop');
    // The calendar's own controls are in the Tab order (the view tabs, today, previous, next).
    await tabTo(page, page.getByTestId('booking-calendar').getByRole('tab', { name: /month/i }));
    await tabTo(page, page.getByTestId('booking-new'), { back: true });
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(enB.bookings.modal.new_title);
    // A week ahead: outside the week the calendar loaded, so the dialog's rules read that week's availability.
    const day = new Date();
    day.setDate(day.getDate() + 7);
    await tabTo(page, page.getByTestId('booking-title'));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Keyboard booking');
    await tabTo(page, page.getByTestId('booking-start'));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(local(day, 16));
    await tabTo(page, page.getByTestId('booking-end'));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(local(day, 16, 30));
    await shot(page, 'keyboard-booking');
    await tabTo(page, page.getByTestId('booking-save'));
    await page.keyboard.press('Enter');
    await expect(dialog).toBeHidden();
    // The dialog gave the focus back to the button that opened it.
    await expect(page.getByTestId('booking-new')).toBeFocused();
    // The next week, by the calendar's own button, shows it.
    await tabTo(page, page.getByTestId('booking-calendar').getByRole('button', { name: /next/i }));
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('booking-calendar').locator('.booking-event', { hasText: 'Keyboard booking' })).toHaveCount(1);

    // Back to the desktops through the navigation; delete the new desktop from its menu.
    await tabTo(page, page.getByTestId('navbar').getByTestId('nav-desktops'), { back: true });
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/desktops$/);
    // A guest still booting may not answer the shutdown: the card's button then forces the stop.
    if ((await mine.getAttribute('data-state')) !== 'stopped') {
      await tabTo(page, mine.getByTestId('desktop-action-forceStop'));
      await page.keyboard.press('Enter');
    }
    await expect(mine).toHaveAttribute('data-state', 'stopped', { timeout: scaled(60_000) });
    await tabTo(page, mine.getByTestId('desktop-menu'), { back: true });
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('desktop-delete')).toBeVisible();
    // Menus move with the arrow keys.
    const toDelete = async () => {
      // The open menu holds the focus; the arrow keys move through its items.
      await expect.poll(() => page.evaluate(() => Boolean(document.activeElement?.closest('[role=menu]')))).toBe(true);
      for (let i = 0; i < 10 && !(await page.getByTestId('desktop-delete').evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await expect(page.getByTestId('confirm-delete')).toBeVisible();
    };
    await toDelete();
    // Escape closes the dialog and gives the focus back to the menu's button.
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('confirm-delete')).toBeHidden();
    await expect(mine.getByTestId('desktop-menu')).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await tabTo(page, mine.getByTestId('desktop-menu'));
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('desktop-delete')).toBeVisible();
    await toDelete();
    await tabTo(page, page.getByTestId('confirm-delete'));
    await page.keyboard.press('Enter');
    await expect(mine).toHaveCount(0);

    // The recycle bin: the deleted desktop, its details.
    await tabTo(page, page.getByTestId('navbar').getByTestId('nav-recycleBins'), { back: true });
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/recycleBins$/);
    const entry = page.locator(`[data-testid=bin-row][data-name="${DESKTOP}"]`);
    await expect(entry).toBeVisible();
    await tabTo(page, entry.getByTestId('bin-info'));
    await shot(page, 'keyboard-recycle-bin');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/recyclebin\//);
    await expect(page.getByText(DESKTOP).first()).toBeVisible();
  });
});
