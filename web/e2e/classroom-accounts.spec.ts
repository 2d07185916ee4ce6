import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import adminEn from '../src/i18n/locales/admin/en.json' with { type: 'json' };
import adminCa from '../src/i18n/locales/admin/ca.json' with { type: 'json' };
import { apiToken, chooseLanguage, loginPage, scaled, seriousViolations, shot, signInAs } from './support';

// Issue 28, classroom accounts: a manager picks a whole class (a group) in the console's users, resets
// their passwords at once (an admin in the class is refused, with why), downloads the credentials sheet
// as CSV and PDF (read back with poppler's pdftotext), and a student signs in with the one-time password,
// lands on the password step, sets their own and reaches the desktops.

const A = adminEn.admin.users;
const CLASS = 'Class 3B';
const SIZE = 120;
const NAMES = ['Àlex Núñez', '王小明', 'Пётр Ильин', '김민준'];
const nameOf = (i: number) => (i < NAMES.length ? NAMES[i]! : `Student ${i + 1}`);
const userOf = (i: number) => `c3b-${String(i + 1).padStart(3, '0')}`;
const ADMIN_IN_CLASS = 'c3b-teacher-admin';

async function adminHeaders(request: APIRequestContext) {
  return { authorization: `Bearer ${await apiToken(request, 'admin')}` };
}

/** The class: a group of Default with SIZE students and an admin, made by the CSV import. */
async function makeClass(request: APIRequestContext) {
  const headers = await adminHeaders(request);
  const made = await request.post('/api/v3/admin/groups', { headers, data: { name: CLASS, category: 'default' } });
  expect(made.ok(), await made.text()).toBe(true);
  const csv = [
    'username,name,email,role,group,password',
    ...Array.from({ length: SIZE }, (_, i) => `${userOf(i)},${nameOf(i)},,user,${CLASS},Placeholder-pass-1`),
    `${ADMIN_IN_CLASS},Teacher Admin,,admin,${CLASS},Placeholder-pass-1`,
  ].join('\n');
  const started = await request.post('/api/v3/admin/users/import?dry_run=false', { headers: { ...headers, 'content-type': 'text/csv' }, data: csv });
  expect(started.status(), await started.text()).toBe(202);
  const { id } = (await started.json()) as { id: string };
  await expect
    .poll(async () => ((await (await request.get(`/api/v3/admin/users/import/${id}`, { headers })).json()) as { status: string; created: number }).created, {
      timeout: scaled(120_000),
    })
    .toBe(SIZE + 1);
}

async function openUsers(page: Page) {
  await page.goto('/isard-admin/users');
  await expect(page.getByTestId('users-table')).toBeVisible();
}

async function filterGroup(page: Page) {
  await page.getByTestId('users-filter-group').click();
  await page.getByRole('option', { name: CLASS, exact: true }).click();
  await expect(page.getByTestId('users-table')).toHaveAttribute('data-total', String(SIZE + 1));
}

/** A download's bytes (the click that starts it given). */
async function downloaded(page: Page, click: () => Promise<void>) {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: download.suggestedFilename(), bytes: readFileSync((await download.path())!) };
}

test.describe.configure({ mode: 'serial' });

test.describe('classroom accounts', () => {
  let csvText = '';

  test('a manager resets a whole class at once, one refused with why, and downloads the sheet as CSV and PDF', async ({ page, request, baseURL }) => {
    test.setTimeout(scaled(360_000));
    await makeClass(request);
    await signInAs(page, 'manager');
    await openUsers(page);
    await filterGroup(page);
    // One page holds 25: the whole group is one click away.
    await page.getByTestId('users-select-group').click();
    await expect(page.getByTestId('users-selected-count')).toHaveText(A.selected.replace('{{count}}', String(SIZE + 1)));
    await page.getByTestId('users-bulk-reset-passwords').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(A.accounts.title.replace('{{count}}', String(SIZE + 1)));
    await shot(page, 'classroom-accounts-confirm');
    await page.getByTestId('accounts-run').click();
    // The class goes in chunks: the progress shows while it runs, then the result.
    await expect(page.getByTestId('accounts-progress')).toBeVisible();
    const result = page.getByTestId('accounts-result');
    await expect(result).toBeVisible({ timeout: scaled(180_000) });
    await expect(result).toHaveAttribute('data-reset', String(SIZE));
    await expect(result).toHaveAttribute('data-refused', '1');
    await expect(result).toHaveText(A.accounts.result.replace('{{reset}}', String(SIZE)).replace('{{refused}}', '1'));
    // A manager does not manage admins: refused, with the reason in words.
    const refused = page.getByTestId('accounts-refused-row');
    await expect(refused).toHaveCount(1);
    await expect(refused).toHaveAttribute('data-username', ADMIN_IN_CLASS);
    await expect(refused).toContainText(en.errors.forbidden);
    await shot(page, 'classroom-accounts-result');
    expect(await seriousViolations(page)).toEqual([]);

    // The CSV: UTF-8 with a byte-order mark, a line per student, the configured address.
    const csv = await downloaded(page, () => page.getByTestId('accounts-csv').click());
    expect(csv.name).toBe(`${A.accounts.file_name}.csv`);
    expect([...csv.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    csvText = csv.bytes.toString('utf8').slice(1);
    const lines = csvText.trim().split('\r\n');
    expect(lines[0]).toBe([A.name, A.username, A.accounts.one_time_password, A.accounts.address, A.category].join(','));
    expect(lines).toHaveLength(SIZE + 1);
    expect(lines.find((l) => l.startsWith(`${NAMES[0]},${userOf(0)},`))).toMatch(new RegExp(`^${NAMES[0]},${userOf(0)},[^,]+,${baseURL}/login,Default$`));
    for (const name of NAMES) expect(csvText).toContain(name);
    expect(csvText).not.toContain(ADMIN_IN_CLASS);

    // The PDF: A4 cards, read back by a real reader, names in any script.
    const pdf = await downloaded(page, () => page.getByTestId('accounts-pdf').click());
    expect(pdf.name).toBe(`${A.accounts.file_name}.pdf`);
    expect(pdf.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const info = execFileSync('pdfinfo', ['-'], { input: pdf.bytes, encoding: 'utf8' });
    expect(info).toMatch(/Page size:\s+595\.28 x 841\.89 pts \(A4\)/);
    expect(info).toMatch(new RegExp(`Pages:\\s+${Math.ceil(SIZE / 10)}\\b`));
    const text = execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf.bytes, encoding: 'utf8' });
    for (const name of NAMES) expect(text).toContain(name);
    const firstPassword = lines.find((l) => l.includes(`,${userOf(0)},`))!.split(',')[2]!;
    expect(text).toContain(firstPassword);
    expect(text).toContain(`${baseURL}/login`);

    await page.getByTestId('accounts-close').click();
    await expect(dialog).toHaveCount(0);
    // The passwords were shown once: the selection is gone with them.
    await expect(page.getByTestId('users-bulk-bar')).toHaveCount(0);
  });

  test('a student signs in with the one-time password, must choose their own, and reaches the desktops', async ({ browser }) => {
    test.setTimeout(scaled(120_000));
    const line = csvText.split('\r\n').find((l) => l.includes(`,${userOf(1)},`))!;
    const oneTime = line.split(',')[2]!;
    const context = await browser.newContext();
    const page = await context.newPage();
    const login = loginPage(page);
    await login.open();
    await login.signIn(userOf(1), oneTime);
    await expect(page).toHaveURL(/\/reset-password$/);
    await expect(page.getByText(en.reset_password.required_subheading)).toBeVisible();
    // The one-time password again is no change.
    await page.getByTestId('reset-password').fill(oneTime);
    await page.getByTestId('reset-confirm').fill(oneTime);
    await page.getByTestId('reset-submit').click();
    await expect(page.getByText(en.errors.password_unchanged)).toBeVisible();
    await page.getByTestId('reset-password').fill('Mine-and-only-mine-7');
    await page.getByTestId('reset-confirm').fill('Mine-and-only-mine-7');
    await page.getByTestId('reset-submit').click();
    await expect(page.getByTestId('reset-done')).toBeVisible();
    await page.getByRole('button', { name: en.common.go_to_login }).click();
    await login.signIn(userOf(1), 'Mine-and-only-mine-7');
    await expect(page).toHaveURL(/\/desktops$/);
    await context.close();
  });

  test("no one-time password is in the server's log", async ({ baseURL }) => {
    const port = new URL(baseURL!).port;
    const dataDir = process.env.E2E_DATA_DIR ?? join(import.meta.dirname, '..', '..', '.tmp', 'e2e-data');
    const log = readFileSync(join(dataDir, '..', `e2e-server-${port}.log`), 'utf8');
    expect(log).toContain('password-reset');
    const passwords = csvText.trim().split('\r\n').slice(1).map((l) => l.split(',')[2]!);
    expect(passwords).toHaveLength(SIZE);
    for (const p of passwords) expect(log).not.toContain(p);
  });

  test('the dialog at phone width and in Catalan', async ({ page }) => {
    test.setTimeout(scaled(180_000));
    await signInAs(page, 'manager');
    await chooseLanguage(page, 'ca-ES');
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await openUsers(page);
      const C = adminCa.admin.users;
      await page.getByTestId('users-search').fill('c3b-00');
      await expect(page.getByTestId('users-table')).toHaveAttribute('data-total', '9');
      await page.getByTestId('user-select').nth(2).click();
      await page.getByTestId('users-bulk-reset-passwords').click();
      await expect(page.getByRole('dialog')).toContainText(C.accounts.title.replace('{{count}}', '1'));
      await page.getByTestId('accounts-run').click();
      await expect(page.getByTestId('accounts-result')).toHaveText(C.accounts.result.replace('{{reset}}', '1').replace('{{refused}}', '0'));
      await expect(page.getByTestId('accounts-pdf')).toHaveText(C.accounts.pdf);
      // Nothing of the dialog runs off a phone's screen.
      const box = (await page.getByRole('dialog').boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      await shot(page, 'classroom-accounts-phone-ca');
      expect(await seriousViolations(page)).toEqual([]);
      // And in the dark theme, as the theme button of another tab switches it.
      await page.evaluate(() => {
        localStorage.setItem('mantine-color-scheme-value', 'dark');
        window.dispatchEvent(new StorageEvent('storage', { key: 'mantine-color-scheme-value', newValue: 'dark', storageArea: localStorage }));
      });
      await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
      await shot(page, 'classroom-accounts-phone-ca-dark');
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByTestId('accounts-close').click();
    } finally {
      await page.evaluate(() => localStorage.setItem('mantine-color-scheme-value', 'light'));
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto('/desktops');
      await chooseLanguage(page, 'en-US');
    }
  });
});
