import { expect, test } from '@playwright/test';
import de from '../src/i18n/locales/de.json' with { type: 'json' };
import zh from '../src/i18n/locales/zh.json' with { type: 'json' };
import { apiToken, scaled, showAsSaved, windowShot } from './support';

// The demo's seeded names in the person's language, and the shutting-down countdown in two
// languages (the screens in several languages are a tour for a person to look at:
// web/tours/language-shots.spec.ts, `npm run screenshots`).

test.describe('screens in several languages', () => {
  // The demo's names are data, stored in English; while a name is still as seeded it reads in the
  // person's language (the desktop list, the new desktop's template picker, the console's group column).
  // One journey per person (each a few screens in three languages: over 3 minutes together on a busy machine).
  for (const who of ['user', 'admin']) {
    test(`seeded demo names in German and Chinese (${who})`, async ({ page, request }) => {
      test.setTimeout(scaled(180_000));
      const token = await apiToken(request, who);
      await page.context().addCookies([{ name: 'isardvdi_session', value: encodeURIComponent(token), domain: '127.0.0.1', path: '/' }]);
      for (const v of [
        { lang: 'de-DE', code: 'de', texts: de.built_in, width: 1280, height: 800 },
        { lang: 'zh-Hans', code: 'zh_Hans', texts: zh.built_in, width: 1280, height: 800 },
        { lang: 'zh-Hans', code: 'zh_Hans', texts: zh.built_in, width: 390, height: 844 },
      ]) {
        await showAsSaved(page, v.code);
        await page.setViewportSize({ width: v.width, height: v.height });
        await page.addInitScript((lang) => localStorage.setItem('vdi.language', lang), v.lang);
        if (who === 'admin') {
          await page.goto('/isard-admin/users');
          // Other journeys add people: the demo's user is found by the list's search.
          await page.getByTestId('users-search').fill('Uma');
          await expect(page.locator('[data-testid=user-row][data-username=user]').first()).toContainText(v.texts.students_1a, { timeout: scaled(30_000) });
          continue;
        }
        await page.goto('/desktops');
        const demo = page.locator('[data-testid=desktop-card][data-name="Demo desktop"]');
        await expect(demo.getByTestId('desktop-name')).toHaveText(v.texts.demo_desktop, { timeout: scaled(30_000) });
        await expect(demo).toContainText(v.texts.demo_desktop_description);
        await expect(page.locator('[data-testid=desktop-card][data-name="Lab desktop"]').getByTestId('desktop-name')).toHaveText(v.texts.lab_desktop);
        await windowShot(page, `lang-demo-names-desktops-${v.lang}-${v.width}`);
        await page.goto('/desktops/new');
        const tile = page.locator('[data-testid=new-desktop-template][data-template-name="Demo Linux"]');
        await expect(tile).toContainText(v.texts.demo_template, { timeout: scaled(30_000) });
        await expect(tile).toContainText(v.texts.demo_template_description);
        await tile.click();
        await expect(page.getByTestId('new-desktop-summary')).toHaveText(v.texts.demo_template);
        // The name field is the person's to fill: nothing translated is put into it.
        await expect(page.getByTestId('new-desktop-name')).toHaveValue('');
        await windowShot(page, `lang-demo-names-new-desktop-${v.lang}-${v.width}`);
      }
    });
  }

  // The card of a desktop that is shutting down: the time left before the forced stop, counting
  // down. The list is the server's, with one desktop shown as shutting down (a real one powers off
  // at once: its guest honours the power button).
  test('shutting down: the countdown to the forced stop', async ({ page, request }) => {
    test.setTimeout(scaled(120_000));
    const token = await apiToken(request, 'user');
    await page.context().addCookies([{ name: 'isardvdi_session', value: encodeURIComponent(token), domain: '127.0.0.1', path: '/' }]);
    const at = new Date(Date.now() + 95_000).toISOString();
    await page.route('**/api/v3/user/desktops*', async (route) => {
      const res = await route.fetch();
      const list = (await res.json()) as { name: string; state: string; force_stop_at: string | null }[];
      for (const d of list) if (d.name === 'Demo desktop') Object.assign(d, { state: 'Shutting-down', force_stop_at: at });
      await route.fulfill({ response: res, json: list });
    });
    for (const v of [
      { lang: 'en-US', code: 'en', width: 1280, height: 800 },
      { lang: 'pl-PL', code: 'pl', width: 390, height: 844 },
    ]) {
      await showAsSaved(page, v.code);
      await page.setViewportSize({ width: v.width, height: v.height });
      await page.addInitScript((lang) => localStorage.setItem('vdi.language', lang), v.lang);
      await page.goto('/desktops');
      const countdown = page.getByTestId('force-stop-countdown').first();
      await expect(countdown).toBeVisible({ timeout: scaled(30_000) });
      const first = Number(await countdown.getAttribute('data-seconds'));
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(95);
      await expect.poll(async () => Number(await countdown.getAttribute('data-seconds')), { timeout: scaled(10_000) }).toBeLessThan(first);
      await windowShot(page, `lang-shutting-down-${v.lang}-${v.width}`);
    }
  });
});
