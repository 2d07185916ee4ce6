import { expect, test } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { adminCall, shot } from './support';

/** The code an administrator hands out (the demo seed makes one for Students 1B). */
async function registrationCode(request: import('@playwright/test').APIRequestContext): Promise<string> {
  const codes = (await adminCall(request, 'GET', '/admin/registration_codes?per_page=500')) as { items: { code: string; group: string }[] };
  return codes.items.find((c) => c.group === 'default-students-1b')!.code;
}

test.describe('registration', () => {
  test('a person signs up, gives a wrong and then a right code, and lands on the desktops', async ({ page, request }) => {
    const code = await registrationCode(request);
    await page.goto('/login');
    await page.getByRole('link', { name: en.login.signup }).click();
    await expect(page).toHaveURL(/\/register$/);
    await page.getByTestId('register-username').fill('newcomer');
    await page.getByTestId('register-name').fill('New Comer');
    await page.getByTestId('register-email').fill('newcomer@example.org');
    await page.getByTestId('register-password').fill('a-good-password');
    await page.getByTestId('register-confirm').fill('a-good-password');
    await shot(page, 'register');
    await page.getByTestId('register-next').click();
    await page.getByTestId('register-code').fill('wrong-code');
    await page.getByTestId('register-submit').click();
    await expect(page.getByRole('alert')).toHaveText(en.register.code_not_found);
    await page.getByTestId('register-code').fill(code);
    await page.getByTestId('register-submit').click();
    await expect(page).toHaveURL(/\/desktops$/);
  });
});
