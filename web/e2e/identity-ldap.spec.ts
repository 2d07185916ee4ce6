import { expect, test, type APIRequestContext } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import { apiToken, freshUser, loginPage, PASSWORD, shot } from './support';
import { freePort, PEOPLE_BASE, slapdMissing, startSlapd, TEACHERS_DN, USER_FILTER, type Slapd } from '../../server/test/helpers/slapd';

/**
 * Sign-in with the organisation's directory (issue 27): Debian's slapd started here (StartTLS with a test CA),
 * connected by the admin through the API (the console's page is another journey's); people use the normal form.
 */
test.describe('sign-in with an LDAP directory', () => {
  test.skip(!!slapdMissing(), slapdMissing() ?? '');
  let slapd: Slapd;
  let providerId: string;
  /** The journeys' own group (support.ts freshUser): teachers go there, so no other journey's group counts change. */
  let groupId: string;

  const body = (slapdUrl: string) => ({
    kind: 'ldap',
    name: 'School directory (e2e)',
    category_id: 'default',
    rules: [{ attribute: 'groups', value: TEACHERS_DN, group_id: groupId, role: 'advanced' }],
    unmatched: 'refuse',
    settings: { url: slapdUrl, start_tls: true, ca: slapd.ca, bind_dn: slapd.bindDn, user_base: PEOPLE_BASE, user_filter: USER_FILTER },
    secret: slapd.bindPassword,
  });
  const admin = async (request: APIRequestContext, method: string, path: string, data?: unknown) => {
    const token = await apiToken(request, 'admin');
    const res = await request.fetch(`/api/v3/admin/identity-providers${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });
    expect(res.ok(), await res.text()).toBe(true);
    return res.json();
  };

  test.beforeAll(async ({ request }) => {
    await freshUser(request, 'ldap-e2e-local');
    const token = await apiToken(request, 'admin');
    const groups = (await (await request.get(`/api/v3/admin/groups?search=${encodeURIComponent('E2E accounts')}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: { id: string; name: string }[] };
    groupId = groups.items.find((g) => g.name === 'E2E accounts')!.id;
    slapd = await startSlapd();
    providerId = ((await admin(request, 'POST', '', body(slapd.url))) as { id: string }).id;
  });

  test.afterAll(async ({ request }) => {
    // Gone before the directory is: other journeys' wrong passwords must not meet a directory that is down.
    if (providerId) await admin(request, 'DELETE', `/${providerId}`);
    await slapd?.stop();
  });

  test('the teacher signs in with the directory account on the normal form and lands on the desktops', async ({ page }) => {
    const t = slapd.people.teacher;
    const login = loginPage(page);
    await login.open();
    await login.signIn(t.uid, t.password);
    await expect(page).toHaveURL(/\/desktops$/);
    await expect(page.getByTestId('user-menu')).toContainText(en.roles.advanced);
    await shot(page, 'identity-ldap-teacher');
  });

  test('the person in no mapped group sees the translated refusal, in English and in Catalan, on a phone too', async ({ page, browser }) => {
    const o = slapd.people.outsider;
    const login = loginPage(page);
    await login.open();
    await login.signIn(o.uid, o.password);
    await expect(login.error()).toHaveText(en.errors.identity_not_allowed);
    await expect(page.getByTestId('login-submit')).toBeEnabled();
    await shot(page, 'identity-ldap-refused');

    const context = await browser.newContext({ locale: 'ca-ES', viewport: { width: 390, height: 844 } });
    try {
      const phone = await context.newPage();
      const other = loginPage(phone);
      await other.open();
      await other.signIn(o.uid, o.password);
      await expect(other.error()).toHaveText(ca.errors.identity_not_allowed);
      await expect(phone.getByTestId('login-submit')).toBeEnabled();
      await shot(phone, 'identity-ldap-refused-ca-phone');
    } finally {
      await context.close();
    }
  });

  test('the directory down: its people are told so, local accounts still sign in', async ({ page, request }) => {
    await admin(request, 'PUT', `/${providerId}`, body(`ldap://127.0.0.1:${await freePort()}`));
    try {
      const t = slapd.people.teacher;
      const login = loginPage(page);
      await login.open();
      await login.signIn(t.uid, t.password);
      await expect(login.error()).toHaveText(en.errors.identity_provider_unavailable);
      await shot(page, 'identity-ldap-unavailable');
      // A local person is not held up by the directory.
      expect((await request.post('/authentication/login?provider=form&category_id=default', { multipart: { username: 'ldap-e2e-local', password: PASSWORD } })).status()).toBe(200);
    } finally {
      await admin(request, 'PUT', `/${providerId}`, body(slapd.url));
    }
  });
});
