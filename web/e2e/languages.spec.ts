import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import es from '../src/i18n/locales/es.json' with { type: 'json' };
import eu from '../src/i18n/locales/eu.json' with { type: 'json' };
import fr from '../src/i18n/locales/fr.json' with { type: 'json' };
import { loginPage, shot, signInAs } from './support';

const catalogues = { 'en-US': en, 'ca-ES': ca, 'es-ES': es, 'eu-ES': eu, 'fr-FR': fr } as const;

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

  test('a signed-in choice is saved and follows the user to another browser', async ({ page, browser }) => {
    await signInAs(page, 'student01');
    await page.getByTestId('language-menu').click();
    await page.getByTestId('language-es-ES').click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(es.desktops.heading);
    await expect(page.getByText(es.session.language_saved)).toBeVisible();
    await shot(page, 'desktops-es-ES');
    await page.reload();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(es.desktops.heading);

    // A fresh browser in English: after signing in, the saved Spanish applies.
    const other = await browser.newContext({ locale: 'en-US' });
    const p2 = await other.newPage();
    await signInAs(p2, 'student01');
    await expect(p2.getByRole('heading', { level: 1 })).toHaveText(es.desktops.heading);
    await p2.getByTestId('language-menu').click();
    await p2.getByTestId('language-en-US').click();
    await expect(p2.getByRole('heading', { level: 1 })).toHaveText(en.desktops.heading);
    await other.close();
  });
});
