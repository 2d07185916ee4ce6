import { expect, test } from '@playwright/test';
import { apiToken, scaled, showAsSaved, windowShot } from '../e2e/support';

// Screenshots of the main screens in several languages, one of them with CJK glyphs (Chinese and
// Korean): a person looks at them (artifacts/screenshots/lang-<screen>-<lang>-<width>.png) for cut
// texts, overflow, untranslated strings and missing glyphs. A tour (`npm run screenshots`), not a
// test: the languages' own checks are in web/e2e/languages.spec.ts and language-shots.spec.ts.

const SCREENS = [
  { name: 'desktops', user: 'user', path: '/desktops' },
  { name: 'new-desktop', user: 'user', path: '/desktops/new' },
  { name: 'deployments', user: 'advanced', path: '/deployments' },
  { name: 'admin-users', user: 'admin', path: '/isard-admin/users' },
] as const;

const VARIANTS = [
  { lang: 'en-US', width: 1280, height: 800 },
  { lang: 'ca-ES', width: 1280, height: 800 },
  { lang: 'de-DE', width: 1280, height: 800 },
  { lang: 'zh-Hans', width: 1280, height: 800 },
  { lang: 'ko-KR', width: 1280, height: 800 },
  { lang: 'zh-Hans', width: 390, height: 844 },
  { lang: 'ko-KR', width: 390, height: 844 },
] as const;

test.describe('screens in several languages', () => {
  for (const s of SCREENS) {
    test(s.name, async ({ page, request }) => {
      test.setTimeout(scaled(180_000));
      const token = await apiToken(request, s.user);
      await page.context().addCookies([{ name: 'isardvdi_session', value: encodeURIComponent(token), domain: '127.0.0.1', path: '/' }]);
      // The language the person saved on the server wins over the browser's: the page takes the one asked
      // here as saved (the demo account itself keeps its own for the journeys after this one).
      for (const v of VARIANTS) {
        await showAsSaved(page, v.lang === 'zh-Hans' ? 'zh_Hans' : v.lang.slice(0, 2));
        await page.setViewportSize({ width: v.width, height: v.height });
        await page.addInitScript((lang) => localStorage.setItem('vdi.language', lang), v.lang);
        await page.goto(s.path);
        await expect(page.locator('h1').first()).toBeVisible({ timeout: scaled(30_000) });
        await expect(page.locator('.mantine-Loader-root, [data-testid$=-loading]')).toHaveCount(0, { timeout: scaled(30_000) });
        await expect(page.locator('html')).toHaveAttribute('lang', v.lang);
        await windowShot(page, `lang-${s.name}-${v.lang}-${v.width}`);
      }
    });
  }
});
