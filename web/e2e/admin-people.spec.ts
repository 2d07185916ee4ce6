import { expect, test, type Browser, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import adminEn from '../src/i18n/locales/admin/en.json' with { type: 'json' };
import { apiToken, chooseLanguage, freshUser, scaled, shot, signInAs, windowShot } from './support';

// Issue 11, people part: an admin builds an organisation in the console, imports its students from
// a CSV (bad rows previewed first), a student signs in at once at the organisation's own address;
// a manager of another organisation cannot reach them; disabling a signed-in student signs them out.

const A = adminEn.admin;
const STUDENT_PASSWORD = 'Student-pass-1';
const student = (n: number) => `sec4-${String(n).padStart(3, '0')}`;

/** 120 rows: 117 good, a bad e-mail, an unknown group and a duplicate user name. */
function studentsCsv() {
  const rows = Array.from({ length: 117 }, (_, i) => `${student(i + 1)},Student ${i + 1},${student(i + 1)}@school.example.org,user,4th grade,${STUDENT_PASSWORD}`);
  rows.splice(20, 0, 'sec4-bad-mail,Bad Mail,not-an-email,user,4th grade,Student-pass-1');
  rows.splice(60, 0, 'sec4-no-group,No Group,,user,5th grade,Student-pass-1');
  rows.splice(100, 0, `${student(7)},Duplicate,,user,4th grade,Student-pass-1`);
  return ['username,name,email,role,group,password', ...rows].join('\n');
}

/** Dialogs closed (their fade-out ended): what a screenshot should show. */
const noDialog = (page: Page) => expect(page.getByRole('dialog')).toHaveCount(0);

async function openConsole(page: Page, section: string) {
  await page.getByTestId(`admin-nav-${section}`).click();
  await expect(page).toHaveURL(new RegExp(`/isard-admin/${section}$`));
}

/** A person signing in at the organisation's own address, in a browser of their own. */
async function studentSignsIn(browser: Browser, username: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto('/login/form/secondary-school');
  await expect(page.getByText('Secondary school')).toBeVisible();
  await expect(page.getByTestId('login-category')).toHaveCount(0);
  await page.getByTestId('login-username').fill(username);
  await page.getByTestId('login-password').fill(STUDENT_PASSWORD);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: scaled(20_000) });
  return { page, context };
}

test.describe.configure({ mode: 'serial' });

test.describe('administration: people', () => {
  test('an admin creates an organisation, a group with a code and a quota, imports 120 students (3 bad), and a student signs in', async ({ page, browser }) => {
    test.setTimeout(scaled(240_000));
    await signInAs(page, 'admin');
    await page.getByTestId('nav-isard_admin').click();
    // The console opens on its dashboard; the people are one click away.
    await expect(page).toHaveURL(/\/isard-admin\/dashboard$/);
    await page.getByTestId('admin-nav-users').click();
    await expect(page).toHaveURL(/\/isard-admin\/users$/);
    await expect(page.getByTestId('users-table')).toBeVisible();
    await shot(page, 'admin-users');

    // The organisation, with its sign-in address and allowed domains.
    await openConsole(page, 'categories');
    await page.getByTestId('categories-new').click();
    await page.getByTestId('category-form-name').fill('Secondary school');
    await expect(page.getByTestId('category-form-url')).toHaveValue('secondary-school');
    await page.getByTestId('category-form-domains').fill('school.example.org');
    await page.keyboard.press('Enter');
    await windowShot(page, 'admin-category-form');
    await page.getByTestId('category-form-save').click();
    await expect(page.locator('[data-testid="category-row"][data-name="Secondary school"]')).toBeVisible();
    await noDialog(page);
    await shot(page, 'admin-categories');

    // The group, with a quota for each member and limits for all.
    await openConsole(page, 'groups');
    await page.getByTestId('groups-new').click();
    await page.getByTestId('group-form-name').fill('4th grade');
    await page.getByTestId('group-form-category').click();
    await page.getByRole('option', { name: 'Secondary school' }).click();
    await page.getByTestId('group-form-quota-toggle').check();
    await page.getByTestId('group-form-quota-desktops').fill('3');
    await page.getByTestId('group-form-limits-toggle').check();
    await page.getByTestId('group-form-limits-users').fill('150');
    await windowShot(page, 'admin-group-form');
    await page.getByTestId('group-form-save').click();
    const group = page.locator('[data-testid="group-row"][data-name="4th grade"]');
    await expect(group).toBeVisible();
    await expect(group).toContainText(A.quota.users_limit.replace('{{count}}', '150'));
    await noDialog(page);
    await shot(page, 'admin-groups');

    // A registration code for the role user.
    await openConsole(page, 'registration_codes');
    await page.getByTestId('codes-new').click();
    await page.getByTestId('code-form-group').click();
    await page.getByRole('option', { name: '4th grade · Secondary school' }).click();
    await page.getByTestId('code-form-save').click();
    const codeRow = page.locator('[data-testid="code-row"][data-group="4th grade"]');
    await expect(codeRow).toBeVisible();
    await noDialog(page);
    await shot(page, 'admin-codes');

    // A person signs up with the code (an address of the allowed domain) and lands on their desktops.
    const code = (await codeRow.getByTestId('code-value').textContent())!.trim();
    const newcomer = await browser.newContext();
    const reg = await newcomer.newPage();
    await reg.goto('/register');
    await reg.getByTestId('register-category').click();
    await reg.getByRole('option', { name: 'Secondary school' }).click();
    await reg.getByTestId('register-username').fill('sec4-signup');
    await reg.getByTestId('register-name').fill('Sign Up');
    await reg.getByTestId('register-email').fill('signup@school.example.org');
    await reg.getByTestId('register-password').fill(STUDENT_PASSWORD);
    await reg.getByTestId('register-confirm').fill(STUDENT_PASSWORD);
    await reg.getByTestId('register-next').click();
    await reg.getByTestId('register-code').fill(code);
    await reg.getByTestId('register-submit').click();
    await expect(reg).toHaveURL(/\/desktops$/, { timeout: scaled(20_000) });
    await newcomer.close();

    // The CSV: a wrong header is refused; the real one previews its 3 bad rows, writes nothing, then imports 117.
    await openConsole(page, 'users');
    await page.getByTestId('users-import').click();
    await page.getByTestId('import-text').fill('user,name\nx,y');
    await page.getByTestId('import-check').click();
    await expect(page.getByTestId('import-error')).toHaveText(en.errors.csv_bad_header);
    await windowShot(page, 'admin-import-error');
    await page.getByTestId('import-text').fill(studentsCsv());
    await page.getByTestId('import-check').click();
    await expect(page.getByTestId('import-preview')).toHaveAttribute('data-invalid', '3');
    await expect(page.getByTestId('import-preview')).toHaveAttribute('data-valid', '117');
    const bad = page.getByTestId('import-bad-row');
    await expect(bad).toHaveCount(3);
    await expect(bad.nth(0)).toContainText(en.errors.invalid_email);
    await expect(bad.nth(1)).toContainText(en.errors.group_not_found);
    await expect(bad.nth(2)).toContainText('username_exists');
    await windowShot(page, 'admin-import-preview');
    // The import is a job: its progress shows (with a stop button) until it ends, then its result with the rows not created.
    await page.getByTestId('import-run').click();
    await expect(page.getByTestId('import-progress').or(page.getByTestId('import-result'))).toBeVisible();
    await expect(page.getByTestId('import-result')).toHaveAttribute('data-status', 'done', { timeout: scaled(180_000) });
    await expect(page.getByTestId('import-result')).toHaveAttribute('data-created', '117');
    await expect(page.getByTestId('import-result')).toHaveAttribute('data-failed', '3');
    await expect(page.getByTestId('import-bad-row')).toHaveCount(3);
    await expect(page.getByTestId('import-cancel')).toHaveCount(0);
    await windowShot(page, 'admin-import-result');
    await page.getByTestId('import-close').click();
    await noDialog(page);

    // The user form: a person added by hand, with a password the admin sets.
    await page.getByTestId('users-new').click();
    await page.getByTestId('user-form-username').fill('sec4-teacher');
    await page.getByTestId('user-form-name').fill('Tina Teacher');
    await page.getByTestId('user-form-role').click();
    await page.getByRole('option', { name: en.roles.advanced }).click();
    await page.getByTestId('user-form-category').click();
    await page.getByRole('option', { name: 'Secondary school' }).click();
    await page.getByTestId('user-form-group').click();
    await page.getByRole('option', { name: '4th grade' }).click();
    await page.getByTestId('user-form-password').fill('short');
    await page.getByTestId('user-form-save').click();
    await expect(page.getByTestId('user-form-error')).toHaveText(en.errors.password_policy_length.replace('{{length}}', '8'));
    await windowShot(page, 'admin-user-form-error');
    await page.getByTestId('user-form-password').fill('Teacher-pass-1');
    await page.getByTestId('user-form-save').click();
    await noDialog(page);

    // The list, filtered and searched on the server.
    await page.getByTestId('users-search').fill('sec4-0');
    await expect(page.getByTestId('users-table')).toHaveAttribute('data-total', '99');
    await expect(page.getByTestId('user-row')).toHaveCount(25);
    await shot(page, 'admin-users-imported');

    // A student signs in at once, at the organisation's address.
    const { context } = await studentSignsIn(browser, student(42));
    await context.close();
  });

  test('each section names the browser tab, and the console signs out', async ({ page }) => {
    await signInAs(page, 'admin');
    await page.goto('/isard-admin/users');
    await expect(page).toHaveTitle(`${en.app.title} · ${adminEn.admin.nav.users} · ${adminEn.admin.shell.title}`);
    await page.getByTestId('admin-nav-groups').click();
    await expect(page).toHaveTitle(`${en.app.title} · ${adminEn.admin.nav.groups} · ${adminEn.admin.shell.title}`);
    // The navigation in groups: one closes and stays closed (its sections hidden); the current section's stays open.
    const nav = page.getByTestId('admin-navbar');
    await expect(nav.getByTestId('admin-group-people')).toHaveText(adminEn.admin.groups.people);
    await nav.getByTestId('admin-group-system').click();
    await expect(nav.getByTestId('admin-nav-audit')).toBeHidden();
    await shot(page, 'admin-nav-groups');
    await page.reload();
    await expect(nav.getByTestId('admin-nav-audit')).toBeHidden();
    await nav.getByTestId('admin-group-system').click();
    await expect(nav.getByTestId('admin-nav-audit')).toBeVisible();
    await nav.getByTestId('admin-group-people').click();
    await expect(nav.getByTestId('admin-nav-groups')).toBeVisible();
    await page.getByTestId('admin-logout').click();
    await expect(page).toHaveURL(/\/login$/);
    await page.goto('/isard-admin/users');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('a manager of another organisation cannot reach them', async ({ page, request }) => {
    await signInAs(page, 'manager');
    await page.getByTestId('nav-isard_admin').click();
    // The console opens on its dashboard; the people are one click away.
    await expect(page).toHaveURL(/\/isard-admin\/dashboard$/);
    await page.getByTestId('admin-nav-users').click();
    await expect(page).toHaveURL(/\/isard-admin\/users$/);
    // Managers get no organisation screen.
    await expect(page.getByTestId('admin-nav-categories')).toHaveCount(0);
    await page.getByTestId('users-search').fill('sec4-');
    await expect(page.getByTestId('empty-state')).toBeVisible();
    await expect(page.getByTestId('empty-state')).toContainText(A.users.none_found);
    await shot(page, 'admin-users-manager-empty');
    // Not even by typing an id.
    const admin = await apiToken(request, 'admin');
    const list = await (await request.get('/api/v3/admin/users?search=sec4-042', { headers: { authorization: `Bearer ${admin}` } })).json();
    const id = list.items[0].id as string;
    const manager = await apiToken(request, 'manager');
    const res = await request.get(`/api/v3/admin/users/${id}`, { headers: { authorization: `Bearer ${manager}` } });
    expect(res.status()).toBe(404);
    const put = await request.put(`/api/v3/admin/users/${id}`, { headers: { authorization: `Bearer ${manager}` }, data: { active: false } });
    expect(put.status()).toBe(404);
  });

  test('the admin disables a signed-in student: the student’s portal signs out', async ({ page, browser }) => {
    const { page: studentPage, context } = await studentSignsIn(browser, student(43));
    await signInAs(page, 'admin');
    await page.goto('/isard-admin/users');
    await page.getByTestId('users-search').fill(student(43));
    const row = page.locator(`[data-testid="user-row"][data-username="${student(43)}"]`);
    await expect(row).toBeVisible();
    await expect(page.getByTestId('user-row')).toHaveCount(1);
    await row.getByTestId('user-actions').click();
    await page.getByTestId('user-toggle-active').click();
    await expect(row.getByTestId('user-status')).toHaveAttribute('data-active', 'false');
    // Within seconds, without the student doing anything.
    await expect(studentPage).toHaveURL(/\/login/, { timeout: scaled(15_000) });
    await shot(studentPage, 'admin-disabled-student-signed-out');
    await context.close();
  });

  test('screens in another language and at phone width', async ({ page, request }) => {
    // An administrator of the journey's own: the Catalan chosen is saved for them.
    await freshUser(request, 'people-ca-admin', 'admin');
    await signInAs(page, 'people-ca-admin');
    await page.goto('/isard-admin/users');
    await chooseLanguage(page, 'ca-ES');
    await expect(page.getByTestId('admin-badge')).toHaveText('Administració');
    try {
      await page.getByTestId('users-search').fill('sec4-');
      await expect(page.getByTestId('users-table')).toHaveAttribute('data-total', '119');
      await shot(page, 'admin-users-ca');
      await page.getByTestId('users-select-page').check();
      await expect(page.getByTestId('users-bulk-bar')).toBeVisible();
      await shot(page, 'admin-users-bulk-ca');
      await page.goto('/isard-admin/groups');
      await page.getByTestId('group-edit').first().click();
      await expect(page.getByRole('dialog')).toBeVisible();
      await windowShot(page, 'admin-group-form-ca');
      await page.keyboard.press('Escape');
      await expect(page.getByRole('dialog')).toHaveCount(0);
    } finally {
      // The choice is saved for the admin and follows them: back to English for the specs after this one.
      await chooseLanguage(page, 'en-US');
      await expect(page.getByTestId('admin-badge')).toHaveText('Administration');
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/isard-admin/users');
    await expect(page.getByTestId('users-table')).toBeVisible();
    await shot(page, 'admin-users-phone');
    await page.goto('/isard-admin/registration_codes');
    await expect(page.getByTestId('codes-table')).toBeVisible();
    await shot(page, 'admin-codes-phone');
  });
});
