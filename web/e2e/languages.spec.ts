import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import es from '../src/i18n/locales/es.json' with { type: 'json' };
import eu from '../src/i18n/locales/eu.json' with { type: 'json' };
import fr from '../src/i18n/locales/fr.json' with { type: 'json' };
import de from '../src/i18n/locales/de.json' with { type: 'json' };
import pl from '../src/i18n/locales/pl.json' with { type: 'json' };
import { apiToken, freshUser, loginPage, notice, scaled, shot, signInAs } from './support';

const catalogues = { 'en-US': en, 'ca-ES': ca, 'es-ES': es, 'eu-ES': eu, 'fr-FR': fr, 'de-DE': de, 'pl-PL': pl } as const;

test.describe('languages', () => {
  for (const [lang, cat] of Object.entries(catalogues)) {
    test(`the login page speaks ${lang}`, async ({ page }) => {
      await loginPage(page).open();
      await page.getByTestId('language-menu').click();
      await page.getByTestId(`language-${lang}`).click();
      await expect(page.getByTestId('login-submit')).toHaveText(cat.login.submit);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(cat.login.heading);
      await expect(page).toHaveTitle(`${cat.app.title} · ${cat.routes.login}`);
      await shot(page, `login-${lang}`);
    });
  }

  test('the browser language is the default', async ({ browser }) => {
    const context = await browser.newContext({ locale: 'fr-FR' });
    const page = await context.newPage();
    await page.goto('/login');
    await expect(page.getByTestId('login-submit')).toHaveText(fr.login.submit);
    await context.close();
  });

  // Each journey that saves a language signs in as a person of its own: what one saves is that
  // person's language on every later sign-in, whatever the browser says.
  test('a signed-in choice is saved and follows the user to another browser', async ({ page, browser, request }) => {
    await freshUser(request, 'lang-choice');
    await signInAs(page, 'lang-choice');
    await page.getByTestId('language-menu').click();
    await page.getByTestId('language-es-ES').click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(es.desktops.heading);
    await expect(notice(page, es.session.language_saved)).toBeVisible();
    await shot(page, 'desktops-es-ES');
    await page.reload();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(es.desktops.heading);

    // A fresh browser in English: after signing in, the saved Spanish applies.
    const other = await browser.newContext({ locale: 'en-US' });
    const p2 = await other.newPage();
    await signInAs(p2, 'lang-choice');
    await expect(p2.getByRole('heading', { level: 1 })).toHaveText(es.desktops.heading);
    await p2.getByTestId('language-menu').click();
    await p2.getByTestId('language-en-US').click();
    await expect(p2.getByRole('heading', { level: 1 })).toHaveText(en.desktops.heading);
    await other.close();
  });

  // Spec 001 §9: German and Polish have complete catalogues; a browser in either gets them.
  for (const [locale, cat, tag] of [['de-DE', de, 'de-DE'], ['de-AT', de, 'de-DE'], ['pl-PL', pl, 'pl-PL']] as const) {
    test(`a browser in ${locale} gets ${tag}, on the sign-in page and the desktops`, async ({ browser, request }) => {
      // Someone who never chose a language: the browser's applies.
      const person = `lang-browser-${locale.toLowerCase()}`;
      await freshUser(request, person);
      const context = await browser.newContext({ locale });
      const page = await context.newPage();
      await page.goto('/login');
      await expect(page.getByTestId('login-submit')).toHaveText(cat.login.submit);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(cat.login.heading);
      await expect(page.locator('html')).toHaveAttribute('lang', tag);
      if (locale !== 'de-AT') await shot(page, `login-${tag}`);
      await signInAs(page, person);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(cat.desktops.heading);
      // The menu marks the additional languages as such, in the language shown.
      await page.getByTestId('language-menu').click();
      await expect(page.getByTestId('language-additional')).toHaveText(cat.nav.additional_languages);
      await expect(page.getByTestId(`language-${tag}`)).toBeVisible();
      await expect(page.getByRole('menu')).toHaveCSS('opacity', '1');
      if (locale !== 'de-AT') await shot(page, `desktops-menu-${tag}`);
      await page.keyboard.press('Escape');
      await expect(page.getByRole('menu')).toBeHidden();
      if (locale !== 'de-AT') await shot(page, `desktops-${tag}`);
      // The profile's language select groups the additional languages under the same label.
      await page.goto('/profile');
      await page.getByTestId('profile-language').click();
      await expect(page.getByRole('option', { name: tag === 'de-DE' ? 'Deutsch' : 'Polski' })).toBeVisible();
      await expect(page.getByText(cat.nav.additional_languages).last()).toBeVisible();
      if (locale !== 'de-AT') await shot(page, `profile-${tag}`);
      await context.close();
    });
  }

  test('a browser in a language without a complete catalogue gets English (hi is empty)', async ({ browser }) => {
    for (const locale of ['hi-IN', 'ja-JP', 'zh-TW']) {
      const context = await browser.newContext({ locale });
      const page = await context.newPage();
      await page.goto('/login');
      await expect(page.getByTestId('login-submit'), locale).toHaveText(en.login.submit);
      await expect(page.locator('html')).toHaveAttribute('lang', 'en-US');
      await page.getByTestId('language-menu').click();
      await expect(page.getByTestId('language-hi-IN')).toHaveCount(0);
      await context.close();
    }
  });

  test('German chosen in the menu is saved as `de` and follows the user', async ({ page, browser, request }) => {
    await freshUser(request, 'lang-de-menu');
    await signInAs(page, 'lang-de-menu');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(en.desktops.heading);
    const saved = page.waitForResponse((r) => r.url().endsWith('/api/v3/user/language/de') && r.request().method() === 'PUT');
    // The header may render again while the first screen settles (the menu then closes): open it until the choice is made.
    await expect(async () => {
      if (!(await page.getByTestId('language-de-DE').isVisible())) await page.getByTestId('language-menu').click();
      await page.getByTestId('language-de-DE').click({ timeout: scaled(2_000) });
    }).toPass({ timeout: scaled(30_000) });
    expect((await saved).status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(de.desktops.heading);
    await expect(notice(page, de.session.language_saved)).toBeVisible();

    const other = await browser.newContext({ locale: 'en-US' });
    const p2 = await other.newPage();
    await signInAs(p2, 'lang-de-menu');
    await expect(p2.getByRole('heading', { level: 1 })).toHaveText(de.desktops.heading);
    await p2.getByTestId('language-menu').click();
    await p2.getByTestId('language-en-US').click();
    await expect(p2.getByRole('heading', { level: 1 })).toHaveText(en.desktops.heading);
    await other.close();
  });

  test('the saved language shows from the first frame after signing in, never English first', async ({ browser, request }) => {
    await freshUser(request, 'lang-first-frame');
    const token = await apiToken(request, 'lang-first-frame');
    expect((await request.put('/api/v3/user/language/ca', { headers: { authorization: `Bearer ${token}` } })).ok()).toBe(true);
    // A browser in English that never saw this person: every main heading drawn is written down.
    const context = await browser.newContext({ locale: 'en-US' });
    await context.addInitScript(() => {
      const seen: string[] = ((window as unknown as { headings: string[] }).headings = []);
      new MutationObserver(() => {
        for (const h of document.querySelectorAll('h1')) if (h.textContent && seen.at(-1) !== h.textContent) seen.push(h.textContent);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    const page = await context.newPage();
    await signInAs(page, 'lang-first-frame');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(ca.desktops.heading);
    await expect(page.locator('html')).toHaveAttribute('lang', 'ca-ES');
    const headings = await page.evaluate(() => (window as unknown as { headings: string[] }).headings);
    expect(headings).not.toContain(en.desktops.heading);
    expect(headings).toContain(ca.desktops.heading);
    await context.close();
  });
});
