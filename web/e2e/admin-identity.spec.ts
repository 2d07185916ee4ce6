import { expect, test, type Locator, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import ca from '../src/i18n/locales/ca.json' with { type: 'json' };
import adminEn from '../src/i18n/locales/admin/en.json' with { type: 'json' };
import adminCa from '../src/i18n/locales/admin/ca.json' with { type: 'json' };
import systemEn from '../src/i18n/locales/admin-system/en.json' with { type: 'json' };
import { apiToken, scaled, showAsSaved, signInAs, stillScreen, windowShot } from './support';
import { PEOPLE_BASE, slapdMissing, startSlapd, TEACHERS_DN, USER_FILTER } from '../../server/test/helpers/slapd';
import { startOidcIdp } from '../../server/test/helpers/oidc-test-idp';

// Issue 27, the console's part: an admin connects a directory (LDAP) with mapping rules through the form, a rule
// above the provider's highest role is refused with the translated message on its row, the secret is never shown
// again, a test against a directory that cannot be reached says so, the test's preview (answered here: the real
// flows are the protocols' own journeys), disable and delete from the list; an enabled OpenID Connect provider of
// one organisation is a "Sign in with …" button, with its logo, on that organisation's sign-in page only. Last, the
// form against Debian's slapd (StartTLS, its test CA uploaded as a file): the test shows the real teacher's preview.

const I = adminEn.admin.identity;
const port = Number(process.env.E2E_PORT ?? 18731);
/** Nothing listens here (a port of this run's range no service takes). */
const UNREACHABLE = `ldap://127.0.0.1:${port + 9}`;
const LOGO = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#2f9e44"/><path d="M16 34l10 10 22-24" stroke="#fff" stroke-width="7" fill="none"/></svg>',
);

/** The console's own session token (the cookie the page signed in with): a set-up call must not sign the admin in again (one session per person). */
async function consoleCall(page: Page, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown) {
  const token = (await page.context().cookies()).find((c) => c.name === 'isardvdi_session')!.value;
  return page.request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });
}

const row = (page: Page, name: string) => page.locator(`[data-testid="idp-row"][data-name="${name}"]`);
const dialog = (page: Page) => page.getByTestId('idp-form').getByRole('dialog');
const noDialog = (page: Page) => expect(page.getByRole('dialog')).toHaveCount(0);

async function choose(page: Page, select: Locator, option: string) {
  await select.click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

async function openList(page: Page) {
  await page.goto('/isard-admin/identity_providers');
  await expect(page.getByTestId('idp-table').or(page.getByTestId('empty-state'))).toBeVisible({ timeout: scaled(30_000) });
}

const PREVIEW = {
  identity: { uid: 'uid=tina,ou=people,dc=example,dc=org', username: 'tina', name: 'Tina Teacher', email: 'tina@example.org', photo: '', groups: ['cn=teachers,ou=groups,dc=example,dc=org', 'cn=staff,ou=groups,dc=example,dc=org'] },
  rule: 1,
  outcome: 'create',
  category_id: 'default',
  group_id: 'default-teachers',
  role: 'advanced',
  reason: null,
};

test.describe.configure({ mode: 'serial' });

/** The providers these journeys make: gone at the end even when a journey stopped half-way (no other journey's sign-in page or form meets them). */
const MINE = ['School directory', 'School directory (AD)', 'Lab Login', 'Campus SAML', "Directori de l'escola", 'Real directory', 'Campus OpenID'];

test.describe('administration: sign-in providers', () => {
  test.afterAll(async ({ request }) => {
    const headers = { authorization: `Bearer ${await apiToken(request, 'admin')}` };
    const all = (await (await request.get('/api/v3/admin/identity-providers', { headers })).json()) as { id: string; name: string }[];
    for (const p of all.filter((x) => MINE.includes(x.name))) await request.delete(`/api/v3/admin/identity-providers/${p.id}`, { headers });
  });

  test('an admin connects a directory with rules, tests it, disables and deletes it', async ({ page }) => {
    test.setTimeout(scaled(300_000));
    await signInAs(page, 'admin');
    await openList(page);
    // The section is in the console's navigation, for admins.
    await expect(page.getByTestId('admin-nav-identity_providers')).toBeVisible();
    if ((await page.getByTestId('idp-row').count()) === 0) {
      await expect(page.getByTestId('empty-state')).toContainText(I.empty);
      await windowShot(page, 'admin-identity-empty');
    }

    // The form: general, connection, mapping.
    await page.getByTestId('idp-new').first().click();
    await expect(dialog(page)).toBeVisible();
    await page.getByTestId('idp-form-name').fill('School directory');
    const logoInput = dialog(page).locator('input[type=file][accept^="image"]');
    // A logo too large is refused where it was chosen; a small one is shown.
    await logoInput.setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: Buffer.alloc(150 * 1024, 1) });
    await expect(page.getByTestId('idp-form-logo-help')).toHaveText(I.logo_size);
    await logoInput.setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: LOGO });
    await expect(page.getByTestId('idp-form-logo-help')).toHaveText(I.logo_help);
    await expect(page.getByTestId('idp-form-logo-preview').locator('img')).toHaveAttribute('src', /^data:image\/svg\+xml;base64,/);
    await choose(page, page.getByTestId('idp-form-category'), 'Default');

    await page.getByTestId('idp-tab-connection').click();
    await page.getByTestId('idp-form-ldap-url').fill(UNREACHABLE);
    await dialog(page).locator('input[type=file][accept^=".pem"]').setInputFiles({ name: 'ca.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n') });
    await expect(page.getByTestId('idp-form-ldap-ca')).toHaveValue(/^-----BEGIN CERTIFICATE-----/);
    // (Not a real certificate: the directory's own journeys use their test CA.)
    await page.getByTestId('idp-form-ldap-ca').fill('');
    await page.getByTestId('idp-form-ldap-binddn').fill('cn=portal,ou=services,dc=example,dc=org');
    await page.getByTestId('idp-form-secret').fill('bind-secret-1');
    await page.getByTestId('idp-form-ldap-userbase').fill('ou=people,dc=example,dc=org');
    await expect(page.getByTestId('idp-form-ldap-userfilter')).toHaveValue('(uid={username})');
    await expect(page.getByTestId('idp-form-attr-groups')).toHaveValue('memberOf');

    // Two rules; the second gives a role above the highest one (Advanced): flagged before saving, refused by the server.
    await page.getByTestId('idp-tab-mapping').click();
    await expect(page.getByTestId('idp-form-no-rules')).toBeVisible();
    await page.getByTestId('idp-rule-add').click();
    const rules = page.getByTestId('idp-rule');
    await rules.nth(0).getByTestId('idp-rule-value').fill('cn=teachers,*');
    // A rule without its group: the browser stops the save there, nothing is sent.
    await page.getByTestId('idp-form-save').click();
    await expect(rules.nth(0).getByTestId('idp-rule-group')).toBeFocused();
    expect(await rules.nth(0).getByTestId('idp-rule-group').evaluate((el) => (el as HTMLInputElement).validity.valueMissing)).toBe(true);
    await page.keyboard.press('Escape');
    await expect(dialog(page)).toBeVisible();
    await choose(page, rules.nth(0).getByTestId('idp-rule-group'), 'Teachers');
    await choose(page, rules.nth(0).getByTestId('idp-rule-role'), en.roles.advanced);
    await page.getByTestId('idp-rule-add').click();
    await rules.nth(1).getByTestId('idp-rule-value').fill('cn=admins,*');
    await choose(page, rules.nth(1).getByTestId('idp-rule-group'), 'Default');
    await choose(page, rules.nth(1).getByTestId('idp-rule-role'), en.roles.admin);
    await expect(page.getByTestId('idp-form-rules-flagged')).toBeVisible();
    await expect(rules.nth(1)).toContainText(I.rule_above.replace('{{role}}', en.roles.advanced));
    await page.getByTestId('idp-form-save').click();
    await expect(rules.nth(1).getByTestId('idp-rule-error')).toHaveText(en.errors.identity_role_not_allowed);
    await expect(page.getByTestId('idp-form-error')).toHaveText(en.errors.identity_role_not_allowed);
    await windowShot(page, 'admin-identity-rule-refused');

    // Lowered, and moved first (the first matching rule wins).
    await choose(page, rules.nth(1).getByTestId('idp-rule-role'), en.roles.user);
    await expect(page.getByTestId('idp-form-rules-flagged')).toHaveCount(0);
    await rules.nth(1).getByTestId('idp-rule-up').click();
    await expect(rules.nth(0).getByTestId('idp-rule-value')).toHaveValue('cn=admins,*');
    await page.getByTestId('idp-form-unmatched-register').check();
    await page.getByTestId('idp-form-save').click();
    await noDialog(page);
    const directory = row(page, 'School directory');
    await expect(directory.getByTestId('idp-kind')).toHaveText('LDAP');
    await expect(directory.getByTestId('idp-organisation')).toHaveText('Default');
    await expect(directory.getByTestId('idp-rules')).toHaveText('2');
    await expect(directory.getByTestId('idp-enabled')).toBeChecked();
    await expect(directory.locator('img')).toHaveAttribute('src', /^data:image\/svg\+xml/);

    // The secret is never shown again: not in the list's answer, not in the form (a stored one is kept when left empty).
    const listed = await consoleCall(page, 'GET', '/admin/identity-providers');
    expect(listed.ok()).toBe(true);
    const text = await listed.text();
    expect(text).not.toContain('bind-secret-1');
    const stored = (JSON.parse(text) as { id: string; name: string; secret_set: boolean; rules: { value: string; role: string }[]; unmatched: string }[]).find((p) => p.name === 'School directory')!;
    expect(stored.secret_set).toBe(true);
    expect(stored.rules.map((r) => [r.value, r.role])).toEqual([['cn=admins,*', 'user'], ['cn=teachers,*', 'advanced']]);
    expect(stored.unmatched).toBe('register');

    await directory.getByTestId('idp-edit').click();
    await expect(dialog(page)).toBeVisible();
    await page.getByTestId('idp-tab-connection').click();
    await expect(page.getByTestId('idp-form-secret')).toHaveValue('');
    await expect(page.getByTestId('idp-form-secret')).toHaveAttribute('placeholder', I.secret_keep);
    await expect(dialog(page)).toContainText(I.secret_stored);
    await expect(page.getByTestId('idp-form-secret-clear')).not.toBeChecked();
    await page.getByTestId('idp-tab-general').click();
    await page.getByTestId('idp-form-name').fill('School directory (AD)');
    await page.getByTestId('idp-form-save').click();
    await noDialog(page);
    const edited = row(page, 'School directory (AD)');
    await expect(edited).toBeVisible();
    const after = (await (await consoleCall(page, 'GET', '/admin/identity-providers')).json()) as { id: string; name: string; secret_set: boolean }[];
    expect(after.find((p) => p.id === stored.id)!.secret_set).toBe(true);

    // A test against a directory nobody answers at: the translated "cannot be reached".
    const probe = await consoleCall(page, 'POST', `/admin/identity-providers/${stored.id}/test`, { username: 'nobody', password: 'x' });
    const ldapBuilt = ((await probe.json()) as { description_code?: string }).description_code !== 'identity_provider_not_found';
    await edited.getByTestId('idp-test-open').click();
    await expect(page.getByTestId('idp-test').getByRole('dialog')).toBeVisible();
    await page.getByTestId('idp-test-username').fill('tina');
    await page.getByTestId('idp-test-password').fill('tina-pass');
    await page.getByTestId('idp-test-run').click();
    if (ldapBuilt) await expect(page.getByTestId('idp-test-error')).toHaveText(en.errors.identity_provider_unavailable, { timeout: scaled(60_000) });
    else {
      // This branch has no LDAP protocol yet (a parallel part of the issue): the server says the kind cannot be tested.
      test.info().annotations.push({ type: 'note', description: 'LDAP protocol not registered: the unreachable-directory message was not checked' });
      await expect(page.getByTestId('idp-test-error')).toHaveText(en.errors.identity_provider_not_found);
    }
    await windowShot(page, 'admin-identity-test-unreachable');

    // The preview of what a sign-in would do (the test's answer given here).
    await page.route('**/api/v3/admin/identity-providers/*/test', (route) => route.fulfill({ json: { preview: PREVIEW } }));
    await page.getByTestId('idp-test-run').click();
    const preview = page.getByTestId('idp-test').getByTestId('idp-preview');
    await expect(preview.getByTestId('idp-preview-name')).toHaveText('Tina Teacher');
    await expect(preview.getByTestId('idp-preview-outcome')).toHaveText(I.outcome.create);
    await expect(preview.getByTestId('idp-preview-rule')).toHaveText('Rule 2 matched: groups = cn=teachers,*');
    await expect(preview.getByTestId('idp-preview-group')).toContainText('Teachers');
    await expect(preview.getByTestId('idp-preview-role')).toContainText(en.roles.advanced);
    await expect(page.getByTestId('idp-test-password')).toHaveValue('');
    await windowShot(page, 'admin-identity-test-preview');
    await page.unroute('**/api/v3/admin/identity-providers/*/test');
    await page.keyboard.press('Escape');
    await noDialog(page);

    // Back from an OpenID Connect or SAML test: the callback's ?preview=… opens the preview.
    await page.route('**/api/v3/admin/identity-providers/previews/*', (route) =>
      route.fulfill({ json: { ...PREVIEW, rule: null, outcome: 'refused', group_id: null, category_id: null, role: null, reason: 'identity_not_allowed' } }),
    );
    await page.goto(`/isard-admin/identity_providers?preview=test-preview-1&provider=${stored.id}`);
    const returned = page.getByTestId('idp-returned');
    await expect(returned.getByTestId('idp-preview-outcome')).toHaveText(I.outcome.refused);
    await expect(returned.getByTestId('idp-preview-rule')).toHaveText(I.preview.no_rule);
    await expect(returned.getByTestId('idp-preview-reason')).toHaveText(en.errors.identity_not_allowed);
    await expect(returned).toContainText('School directory (AD)');
    await returned.getByTestId('idp-returned-close').click();
    await expect(page).toHaveURL(/\/isard-admin\/identity_providers$/);
    await page.unroute('**/api/v3/admin/identity-providers/previews/*');

    // Disabled from the list, then deleted.
    await edited.getByTestId('idp-enabled').click();
    await expect(edited.getByTestId('idp-enabled')).not.toBeChecked();
    const disabled = (await (await consoleCall(page, 'GET', '/admin/identity-providers')).json()) as { id: string; enabled: boolean; secret_set: boolean }[];
    expect(disabled.find((p) => p.id === stored.id)).toMatchObject({ enabled: false, secret_set: true });
    await edited.getByTestId('idp-delete').click();
    await page.getByTestId('idp-delete-confirm').click();
    await expect(edited).toHaveCount(0);

    // Each change is in the audit log, under its own words.
    await page.goto('/isard-admin/audit');
    const deleted = page.locator('[data-testid="audit-row"][data-action="identity_provider.delete"]').first();
    await expect(deleted).toContainText(systemEn.admin_system.audit.actions.identity_provider_delete);
    await expect(deleted).toContainText('School directory (AD)');
  });

  test("an enabled OpenID Connect provider is a button with its logo on its organisation's sign-in page only", async ({ page, browser }) => {
    test.setTimeout(scaled(240_000));
    await signInAs(page, 'admin');
    await openList(page);
    await page.getByTestId('idp-new').first().click();
    await page.getByTestId('idp-form-kind').getByText('OpenID Connect').click();
    await page.getByTestId('idp-form-name').fill('Lab Login');
    await dialog(page).locator('input[type=file][accept^="image"]').setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: LOGO });
    await choose(page, page.getByTestId('idp-form-category'), 'Research Lab');
    // Saved with a required field of another tab empty: that tab opens.
    await page.getByTestId('idp-form-save').click();
    await expect(page.getByTestId('idp-tab-connection')).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('idp-form-oidc-issuer')).toBeVisible();
    await expect(page.getByTestId('idp-form-urls-after-save')).toBeVisible();
    await page.getByTestId('idp-form-oidc-issuer').fill('https://login.example.org/realms/lab');
    await page.getByTestId('idp-form-oidc-clientid').fill('vdi-portal');
    await page.getByTestId('idp-form-secret').fill('client-secret-1');
    await expect(page.getByTestId('idp-form-attr-username')).toHaveValue('preferred_username');
    await page.getByTestId('idp-form-save').click();
    // A new OIDC provider stays open on its connection: the redirect URI to give the provider exists now.
    await expect(page.getByTestId('idp-form-callback-url')).toHaveValue(new RegExp(`^http://127\\.0\\.0\\.1:${port}/authentication/oidc/callback/[\\w-]+$`));
    await expect(page.getByTestId('idp-form-secret')).toHaveValue('');
    await windowShot(page, 'admin-identity-oidc-saved');
    await page.getByTestId('idp-form-save').click();
    await noDialog(page);
    await expect(row(page, 'Lab Login').getByTestId('idp-kind')).toHaveText('OpenID Connect');
    const secretSet = async () =>
      ((await (await consoleCall(page, 'GET', '/admin/identity-providers')).json()) as { name: string; secret_set: boolean }[]).find((p) => p.name === 'Lab Login')!.secret_set;
    expect(await secretSet()).toBe(true);
    // The stored secret removed on purpose (a box, not an empty field), then typed again.
    await row(page, 'Lab Login').getByTestId('idp-edit').click();
    await page.getByTestId('idp-tab-connection').click();
    await page.getByTestId('idp-form-secret-clear').check();
    await expect(page.getByTestId('idp-form-secret')).toBeDisabled();
    await page.getByTestId('idp-form-save').click();
    await noDialog(page);
    expect(await secretSet()).toBe(false);
    await row(page, 'Lab Login').getByTestId('idp-edit').click();
    await page.getByTestId('idp-tab-connection').click();
    await expect(page.getByTestId('idp-form-secret-clear')).toHaveCount(0);
    await page.getByTestId('idp-form-secret').fill('client-secret-2');
    await page.getByTestId('idp-form-save').click();
    await noDialog(page);
    expect(await secretSet()).toBe(true);

    const visitor = await browser.newContext();
    const lab = await visitor.newPage();
    await lab.goto('/login/form/lab');
    const button = lab.getByRole('button', { name: en.login.sign_in_with.replace('{{name}}', 'Lab Login') }).or(lab.getByRole('link', { name: en.login.sign_in_with.replace('{{name}}', 'Lab Login') }));
    await expect(button).toBeVisible({ timeout: scaled(30_000) });
    await expect(button.locator('img')).toHaveAttribute('src', /^data:image\/svg\+xml/);
    await lab.goto('/login/form/default');
    await expect(lab.getByTestId('login-submit')).toBeVisible();
    await expect(lab.getByText(en.login.sign_in_with.replace('{{name}}', 'Lab Login'))).toHaveCount(0);
    await visitor.close();

    // Disabled: no button any more.
    await row(page, 'Lab Login').getByTestId('idp-enabled').click();
    await expect(row(page, 'Lab Login').getByTestId('idp-enabled')).not.toBeChecked();
    const again = await browser.newContext();
    const labAgain = await again.newPage();
    await labAgain.goto('/login/form/lab');
    await expect(labAgain.getByTestId('login-submit')).toBeVisible();
    await expect(labAgain.getByText(en.login.sign_in_with.replace('{{name}}', 'Lab Login'))).toHaveCount(0);
    await again.close();

    // A SAML provider shows our SP metadata to download and the ACS address to copy.
    await page.getByTestId('idp-new').first().click();
    await page.getByTestId('idp-form-kind').getByText('SAML').click();
    await page.getByTestId('idp-form-name').fill('Campus SAML');
    await page.getByTestId('idp-tab-connection').click();
    await dialog(page).locator('input[type=file][accept^=".xml"]').setInputFiles({ name: 'idp.xml', mimeType: 'application/xml', buffer: Buffer.from('<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.org"/>') });
    await expect(page.getByTestId('idp-form-saml-xml')).toHaveValue(/entityID="https:\/\/idp\.example\.org"/);
    await page.getByTestId('idp-form-save').click();
    await expect(page.getByTestId('idp-form-callback-url')).toHaveValue(/\/authentication\/saml\/acs\/[\w-]+$/);
    await expect(page.getByTestId('idp-form-metadata-download')).toHaveAttribute('href', /\/authentication\/saml\/metadata\/[\w-]+$/);
    await page.getByTestId('idp-form-save').click();
    await noDialog(page);
    for (const name of ['Lab Login', 'Campus SAML']) {
      const id = ((await (await consoleCall(page, 'GET', '/admin/identity-providers')).json()) as { id: string; name: string }[]).find((p) => p.name === name)!.id;
      expect((await consoleCall(page, 'DELETE', `/admin/identity-providers/${id}`)).ok()).toBe(true);
    }
  });

  test('the page in a second language, at desktop and phone width, with a load error', async ({ page }) => {
    test.setTimeout(scaled(240_000));
    const C = adminCa.admin.identity;
    await signInAs(page, 'admin');
    // A provider in the list (the empty list was shot by the first journey).
    const made = await consoleCall(page, 'POST', '/admin/identity-providers', {
      kind: 'ldap', name: 'Directori de l\'escola', category_id: 'default', max_role: 'advanced',
      settings: { url: UNREACHABLE, user_base: 'ou=people,dc=example,dc=org' },
      rules: [{ attribute: 'groups', value: 'cn=teachers,*', group_id: 'default-teachers', role: 'advanced' }],
    });
    expect(made.ok(), await made.text()).toBe(true);
    await showAsSaved(page, 'ca');
    await page.route('**/api/v3/admin/identity-providers', (route) =>
      route.request().method() === 'GET' ? route.fulfill({ status: 500, json: { error: 'internal_server_error', msg: 'boom', description_code: 'generic_error', description: '', params: null } }) : route.fallback(),
    );
    await page.goto('/isard-admin/identity_providers');
    await expect(page.getByTestId('empty-state')).toContainText(C.load_failed);
    await windowShot(page, 'admin-identity-ca-load-error');
    await page.unroute('**/api/v3/admin/identity-providers');
    await page.getByTestId('idp-retry').click();
    await expect(row(page, "Directori de l'escola").getByTestId('idp-kind')).toHaveText('LDAP');
    await expect(row(page, "Directori de l'escola").getByTestId('idp-organisation')).toHaveText(ca.built_in.default_category);
    await windowShot(page, 'admin-identity-ca-list');

    // The form's mapping in Catalan, with a flagged rule; then the same at phone width.
    await page.getByTestId('idp-new').first().click();
    await page.getByTestId('idp-form-name').fill('Directori');
    await page.getByTestId('idp-tab-mapping').click();
    await page.getByTestId('idp-rule-add').click();
    await page.getByTestId('idp-rule-value').fill('cn=admins,*');
    await choose(page, page.getByTestId('idp-rule-role'), ca.roles.admin);
    await expect(page.getByTestId('idp-form-rules-flagged')).toHaveText(C.rules_flagged.replace('{{role}}', ca.roles.advanced));
    await stillScreen(page);
    await windowShot(page, 'admin-identity-ca-form-mapping');
    await page.setViewportSize({ width: 390, height: 844 });
    await stillScreen(page);
    await windowShot(page, 'admin-identity-ca-form-mapping-phone');
    await page.getByTestId('idp-tab-connection').click();
    await windowShot(page, 'admin-identity-ca-form-connection-phone');
    await page.keyboard.press('Escape');
    await noDialog(page);
    await windowShot(page, 'admin-identity-ca-list-phone');
    expect((await consoleCall(page, 'DELETE', `/admin/identity-providers/${((await made.json()) as { id: string }).id}`)).ok()).toBe(true);
  });

  test("a test against a real directory (slapd, StartTLS with its CA) shows who the teacher is and the rule that matched", async ({ page }) => {
    test.skip(!!slapdMissing(), slapdMissing() ?? '');
    test.setTimeout(scaled(240_000));
    const slapd = await startSlapd();
    try {
      const t = slapd.people.teacher;
      await signInAs(page, 'admin');
      await openList(page);
      await page.getByTestId('idp-new').first().click();
      await page.getByTestId('idp-form-name').fill('Real directory');
      await choose(page, page.getByTestId('idp-form-category'), 'Default');
      // Off: the test works on a provider nobody signs in with yet (other journeys' sign-ins never reach it).
      await page.getByTestId('idp-form-enabled').uncheck();
      await page.getByTestId('idp-tab-connection').click();
      await page.getByTestId('idp-form-ldap-url').fill(slapd.url);
      await page.getByTestId('idp-form-ldap-starttls').check();
      await dialog(page).locator('input[type=file][accept^=".pem"]').setInputFiles({ name: 'school-ca.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(slapd.ca) });
      await expect(page.getByTestId('idp-form-ldap-ca')).toHaveValue(/BEGIN CERTIFICATE/);
      await page.getByTestId('idp-form-ldap-binddn').fill(slapd.bindDn);
      await page.getByTestId('idp-form-secret').fill(slapd.bindPassword);
      await page.getByTestId('idp-form-ldap-userbase').fill(PEOPLE_BASE);
      await page.getByTestId('idp-form-ldap-userfilter').fill(USER_FILTER);
      await page.getByTestId('idp-tab-mapping').click();
      await page.getByTestId('idp-rule-add').click();
      await expect(page.getByTestId('idp-rule-attribute')).toHaveValue('groups');
      await page.getByTestId('idp-rule-value').fill(TEACHERS_DN);
      await choose(page, page.getByTestId('idp-rule-group'), 'Teachers');
      await choose(page, page.getByTestId('idp-rule-role'), en.roles.advanced);
      await page.getByTestId('idp-form-save').click();
      await noDialog(page);
      const directory = row(page, 'Real directory');
      await expect(directory.getByTestId('idp-enabled')).not.toBeChecked();

      // A wrong password: the directory's answer, translated.
      await directory.getByTestId('idp-test-open').click();
      await page.getByTestId('idp-test-username').fill(t.uid);
      await page.getByTestId('idp-test-password').fill('not-the-password');
      await page.getByTestId('idp-test-run').click();
      await expect(page.getByTestId('idp-test-error')).toHaveText(en.errors.login_failed, { timeout: scaled(30_000) });
      // The teacher's own: who the directory says they are, their groups, the rule, what a sign-in would do.
      await page.getByTestId('idp-test-password').fill(t.password);
      await page.getByTestId('idp-test-run').click();
      const preview = page.getByTestId('idp-test').getByTestId('idp-preview');
      await expect(preview.getByTestId('idp-preview-name')).toHaveText(t.name, { timeout: scaled(30_000) });
      await expect(preview).toContainText(t.email);
      await expect(preview).toContainText(TEACHERS_DN);
      await expect(preview.getByTestId('idp-preview-rule')).toHaveText(`Rule 1 matched: groups = ${TEACHERS_DN}`);
      // Created on a first sign-in; another journey (the directory's own) may have made the account already.
      const outcome = await preview.getByTestId('idp-preview-outcome').getAttribute('data-outcome');
      expect(['create', 'existing', 'update']).toContain(outcome);
      if (outcome === 'create') {
        await expect(preview.getByTestId('idp-preview-group')).toContainText('Teachers');
        await expect(preview.getByTestId('idp-preview-role')).toContainText(en.roles.advanced);
      }
      await windowShot(page, 'admin-identity-test-slapd');
      await page.keyboard.press('Escape');
      await noDialog(page);
      // Nothing was created by the test.
      const users = (await (await consoleCall(page, 'GET', `/admin/users?search=${t.uid}&per_page=50`)).json()) as { items: { username: string }[] };
      if (outcome === 'create') expect(users.items.filter((u) => u.username === t.uid)).toEqual([]);
      await directory.getByTestId('idp-delete').click();
      await page.getByTestId('idp-delete-confirm').click();
      await expect(directory).toHaveCount(0);
    } finally {
      await slapd.stop();
    }
  });

  test('a test of an OpenID Connect provider opens it in the same tab and, back in the console, shows the preview', async ({ page }) => {
    test.setTimeout(scaled(240_000));
    const idp = await startOidcIdp(`http://127.0.0.1:${port}`);
    try {
      await signInAs(page, 'admin');
      await openList(page);
      await page.getByTestId('idp-new').first().click();
      await page.getByTestId('idp-form-kind').getByText('OpenID Connect').click();
      await page.getByTestId('idp-form-name').fill('Campus OpenID');
      await choose(page, page.getByTestId('idp-form-category'), 'Default');
      await page.getByTestId('idp-form-enabled').uncheck();
      await page.getByTestId('idp-tab-connection').click();
      await page.getByTestId('idp-form-oidc-issuer').fill(idp.issuer);
      await page.getByTestId('idp-form-oidc-clientid').fill(idp.clientId);
      await page.getByTestId('idp-form-secret').fill(idp.clientSecret);
      await page.getByTestId('idp-form-oidc-scopes').fill('openid profile email groups');
      await page.getByTestId('idp-tab-mapping').click();
      await page.getByTestId('idp-rule-add').click();
      await page.getByTestId('idp-rule-value').fill('teachers');
      await choose(page, page.getByTestId('idp-rule-group'), 'Teachers');
      await choose(page, page.getByTestId('idp-rule-role'), en.roles.advanced);
      await page.getByTestId('idp-form-save').click();
      await expect(page.getByTestId('idp-form-callback-url')).toBeVisible();
      await page.getByTestId('idp-form-save').click();
      await noDialog(page);

      await row(page, 'Campus OpenID').getByTestId('idp-test-open').click();
      await expect(page.getByTestId('idp-test')).toContainText(I.test_redirect_help);
      await page.getByTestId('idp-test-run').click();
      // The provider's own sign-in page, in this tab.
      await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/interaction/`), { timeout: scaled(30_000) });
      await page.getByTestId('idp-login').fill(idp.accounts.teacher);
      await page.getByTestId('idp-password').fill(idp.password);
      await page.getByTestId('idp-submit').click();
      // Back in the console with the preview the callback left.
      await expect(page).toHaveURL(/\/isard-admin\/identity_providers\?preview=/, { timeout: scaled(30_000) });
      const returned = page.getByTestId('idp-returned');
      await expect(returned).toContainText('Campus OpenID');
      await expect(returned.getByTestId('idp-preview-name')).toHaveText('Ada Teacher');
      await expect(returned.getByTestId('idp-preview-rule')).toHaveText('Rule 1 matched: groups = teachers');
      await expect(returned).toContainText(I.preview.groups_provider);
      expect(['create', 'existing', 'update']).toContain(await returned.getByTestId('idp-preview-outcome').getAttribute('data-outcome'));
      await windowShot(page, 'admin-identity-oidc-preview');
      await returned.getByTestId('idp-returned-close').click();
      await expect(page).toHaveURL(/\/isard-admin\/identity_providers$/);
      await row(page, 'Campus OpenID').getByTestId('idp-delete').click();
      await page.getByTestId('idp-delete-confirm').click();
      await expect(row(page, 'Campus OpenID')).toHaveCount(0);
    } finally {
      await idp.close();
    }
  });
});
