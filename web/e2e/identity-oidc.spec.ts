import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import { startOidcIdp, type OidcIdp } from '../../server/test/helpers/oidc-test-idp';
import { apiToken, scaled, shot } from './support';

// OpenID Connect sign-in (issue 27) in Chromium against a real OpenID provider in its own process (oidc-provider,
// with its own sign-in page): the whole redirect dance, the mapping of a teacher to their role, a refusal, and the
// sign-out that offers the provider's own.

const BASE = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 18731)}`;
let idp: OidcIdp;
let providerId: string;

async function adminHeaders(request: APIRequestContext) {
  return { authorization: `Bearer ${await apiToken(request, 'admin')}` };
}

test.beforeAll(async ({ playwright }) => {
  // The IdP first, then the provider through the console's API (the IdP's issuer is known once it listens).
  idp = await startOidcIdp(BASE);
  const request = await playwright.request.newContext({ baseURL: BASE });
  try {
    const res = await request.post('/api/v3/admin/identity-providers', {
      headers: await adminHeaders(request),
      data: {
        kind: 'oidc', name: 'Campus IdP', category_id: 'default', enabled: true, unmatched: 'refuse', max_role: 'advanced',
        rules: [
          { attribute: 'groups', value: 'teachers', group_id: 'default-teachers', role: 'advanced' },
          { attribute: 'groups', value: 'students', group_id: 'default-students-1a', role: 'user' },
        ],
        settings: { issuer: idp.issuer, client_id: idp.clientId, scopes: 'openid profile email groups' },
        secret: idp.clientSecret,
      },
    });
    expect(res.status(), await res.text()).toBe(200);
    providerId = ((await res.json()) as { id: string }).id;
  } finally {
    await request.dispose();
  }
});

test.afterAll(async ({ playwright }) => {
  // The provider goes (other journeys' sign-in pages stay as they were), then the IdP.
  if (providerId) {
    const request = await playwright.request.newContext({ baseURL: BASE });
    await request.delete(`/api/v3/admin/identity-providers/${providerId}`, { headers: await adminHeaders(request) });
    await request.dispose();
  }
  await idp?.close();
});

/** On the IdP's own sign-in page: the account's name and password. */
async function signInAtIdp(page: Page, account: string) {
  await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/interaction/`));
  await page.getByTestId('idp-login').fill(account);
  await page.getByTestId('idp-password').fill(idp.password);
  await page.getByTestId('idp-submit').click();
}

test.describe('OpenID Connect sign-in', () => {
  test('a teacher signs in at the IdP, lands on the desktops as a teacher, and signs out of the IdP too', async ({ page }) => {
    await page.goto('/login');
    const button = page.getByTestId(`login-provider-${providerId}`);
    await expect(button).toHaveText(en.login.sign_in_with.replace('{{name}}', 'Campus IdP'));
    await shot(page, 'login-oidc-button');
    await button.click();
    await signInAtIdp(page, idp.accounts.teacher);
    await expect(page).toHaveURL(/\/desktops$/, { timeout: scaled(30_000) });
    await expect(page.getByTestId('user-menu')).toContainText(en.roles.advanced);
    await shot(page, 'desktops-oidc-teacher');

    // Sign-out: the sign-in page offers the IdP's sign-out; following it ends the IdP's session.
    await page.getByTestId('user-menu').click();
    await page.getByTestId('logout').click();
    await expect(page).toHaveURL(/\/login$/);
    const offer = page.getByTestId('login-idp-logout');
    await expect(offer).toContainText(en.login.idp_still_signed_in);
    await expect(page.getByTestId(`login-provider-${providerId}`)).toBeVisible();
    await shot(page, 'login-oidc-signed-out-offer');
    await offer.getByRole('link', { name: en.login.idp_sign_out }).click();
    await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/session/end`));
    await page.getByTestId('idp-logout').click();
    await expect(page).toHaveURL(`${BASE}/login`);
    await expect(page.getByTestId('login-idp-logout')).toHaveCount(0);

    // Signing in again asks for the password at the IdP.
    await page.getByTestId(`login-provider-${providerId}`).click();
    await expect(page.getByTestId('idp-password')).toBeVisible();
    await signInAtIdp(page, idp.accounts.teacher);
    await expect(page).toHaveURL(/\/desktops$/, { timeout: scaled(30_000) });
  });

  test('someone in no mapped group is refused with the translated message', async ({ page }) => {
    await page.goto('/login');
    await page.getByTestId(`login-provider-${providerId}`).click();
    await signInAtIdp(page, idp.accounts.outsider);
    await expect(page).toHaveURL(/\/login\?error=identity_not_allowed$/);
    await expect(page.getByTestId('login-error')).toHaveText(en.errors.identity_not_allowed);
    await shot(page, 'login-oidc-refused');
  });

  test('the refusal in Catalan, at phone width', async ({ browser }) => {
    const context = await browser.newContext({ locale: 'ca-ES', viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    try {
      await page.goto('/login');
      await expect(page.getByTestId(`login-provider-${providerId}`)).toHaveText(ca.login.sign_in_with.replace('{{name}}', 'Campus IdP'));
      await page.getByTestId(`login-provider-${providerId}`).click();
      await signInAtIdp(page, idp.accounts.outsider);
      await expect(page.getByTestId('login-error')).toHaveText(ca.errors.identity_not_allowed);
      await shot(page, 'login-oidc-refused-ca-phone');
    } finally {
      await context.close();
    }
  });
});
