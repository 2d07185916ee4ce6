import { expect, test, type APIRequestContext } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import fr from '../src/i18n/locales/fr.json' with { type: 'json' };
import { startSamlIdp, type SamlIdp } from '../../server/test/helpers/saml-idp';
import { adminCall, apiToken, loginPage, shot } from './support';

/**
 * Sign-in through a SAML 2.0 IdP (server/test/helpers/saml-idp-server.mjs in its own process, samlify's IdP side):
 * the sign-in page's button, the IdP's own page, back signed in as the role a rule gives; someone no rule matches
 * goes through the registration code; signing out offers the IdP's logout, which ends the IdP's session too.
 */
let idp: SamlIdp;
let providerId: string;
const NAME = 'Test University';

async function createProvider(request: APIRequestContext, metadataUrl: string) {
  const token = await apiToken(request, 'admin');
  const res = await request.post('/api/v3/admin/identity-providers', {
    headers: { authorization: `Bearer ${token}` },
    data: {
      kind: 'saml', name: NAME, category_id: 'default', unmatched: 'register',
      rules: [
        { attribute: 'groups', value: 'teachers', group_id: 'default-teachers', role: 'advanced' },
        { attribute: 'groups', value: 'students', group_id: 'default-students-1a', role: 'user' },
      ],
      settings: { metadata_url: metadataUrl },
    },
  });
  expect(res.status()).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

/** The account this IdP made (another journey's directory may have a person of the same name). */
async function userOf(request: APIRequestContext, username: string) {
  const users = (await adminCall(request, 'GET', `/admin/users?search=${encodeURIComponent(username)}&per_page=500`)) as { items: { username: string; role: string; group: string; provider: string }[] };
  return users.items.find((u) => u.username === username && u.provider === 'saml');
}

test.describe('sign-in with a SAML identity provider', () => {
  test.beforeAll(async ({ request }) => {
    idp = await startSamlIdp();
    providerId = await createProvider(request, idp.metadataUrl);
  });
  test.afterAll(async () => {
    await idp?.close();
  });

  test('a teacher signs in through the IdP as the mapped role, and signing out ends the IdP session too', async ({ page, request }) => {
    await page.goto('/login');
    const button = page.getByTestId(`login-provider-${providerId}`);
    await expect(button).toHaveText(en.login.sign_in_with.replace('{{name}}', NAME));
    await shot(page, 'login-saml-button');
    await button.click();
    // The IdP's own page.
    await expect(page).toHaveURL(new RegExp(`^${idp.url}/sso`));
    await page.getByLabel('User name').fill('teacher1');
    await page.getByLabel('Password').fill('teacher-pass');
    await shot(page, 'saml-idp-page');
    await page.getByRole('button', { name: 'Sign in to the IdP' }).click();
    await expect(page).toHaveURL(/\/desktops$/);
    await expect(page.getByTestId('user-menu')).toContainText(en.roles.advanced);
    expect(await userOf(request, 'teacher1')).toMatchObject({ role: 'advanced', group: 'default-teachers', provider: 'saml' });

    // Sign-out: the sign-in page offers the IdP's sign-out; following it ends the IdP's session and comes back.
    await page.getByTestId('user-menu').click();
    await page.getByTestId('logout').click();
    await expect(page).toHaveURL(/\/login$/);
    const offer = page.getByTestId('login-idp-logout');
    await expect(offer).toContainText(en.login.idp_still_signed_in);
    await shot(page, 'login-saml-idp-logout');
    await offer.getByRole('link', { name: en.login.idp_sign_out }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByTestId('login-idp-logout')).toHaveCount(0);
    // The IdP has no session for this browser any more: it asks for the password again.
    expect(await (await page.request.get(`${idp.url}/session`)).json()).toEqual({ username: null });
    await page.getByTestId(`login-provider-${providerId}`).click();
    await expect(page.getByLabel('User name')).toBeVisible();
  });

  test('someone no rule matches goes through the registration code and lands signed in', async ({ page, request }) => {
    const codes = (await adminCall(request, 'GET', '/admin/registration_codes?per_page=500')) as { items: { code: string; group: string }[] };
    const code = codes.items.find((c) => c.group === 'default-students-1b')!.code;
    await page.goto('/login');
    await page.getByTestId(`login-provider-${providerId}`).click();
    await page.getByLabel('User name').fill('outsider1');
    await page.getByLabel('Password').fill('outsider-pass');
    await page.getByRole('button', { name: 'Sign in to the IdP' }).click();
    await expect(page).toHaveURL(/\/register$/);
    await page.getByTestId('register-code').fill(code);
    await shot(page, 'register-code-after-saml');
    await page.getByTestId('register-submit').click();
    await expect(page).toHaveURL(/\/desktops$/);
    expect(await userOf(request, 'outsider1')).toMatchObject({ role: 'user', group: 'default-students-1b', provider: 'saml' });
  });

  test('an IdP that is down: the sign-in page says so, on a phone and in French, and local accounts still sign in', async ({ page, request }) => {
    const token = await apiToken(request, 'admin');
    const res = await request.post('/api/v3/admin/identity-providers', {
      headers: { authorization: `Bearer ${token}` },
      data: { kind: 'saml', name: 'Closed College', category_id: 'default', settings: { metadata_url: 'http://127.0.0.1:1/metadata' } },
    });
    const down = ((await res.json()) as { id: string }).id;
    await page.setViewportSize({ width: 390, height: 844 });
    await loginPage(page).open();
    await page.getByTestId('language-menu').click();
    await page.getByRole('menuitem', { name: 'Français' }).click();
    await expect(page.getByTestId(`login-provider-${providerId}`)).toHaveText(fr.login.sign_in_with.replace('{{name}}', NAME));
    await page.getByTestId(`login-provider-${down}`).click();
    await expect(page).toHaveURL(/\/login\?error=identity_provider_unavailable$/);
    await expect(page.getByTestId('login-error')).toHaveText(fr.errors.identity_provider_unavailable);
    // A long translated label wraps on a phone (its whole text shows).
    const button = page.getByTestId(`login-provider-${providerId}`);
    await expect(button).toBeVisible();
    const box = (await button.boundingBox())!;
    expect(await button.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect(box.width).toBeLessThanOrEqual(390);
    await shot(page, 'login-saml-unavailable-phone-fr');
    await loginPage(page).signIn('user');
    await expect(page).toHaveURL(/\/desktops$/);
  });
});
