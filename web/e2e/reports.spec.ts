import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext, type Locator } from '@playwright/test';
import infraEn from '../src/i18n/locales/admin-infra/en.json' with { type: 'json' };
import infraCa from '../src/i18n/locales/admin-infra/ca.json' with { type: 'json' };
import { join } from 'node:path';
import { apiToken, scaled, shot, SHOTS, showAsSaved, signInAs } from './support';

// Issue 29, usage reports: an admin opens Reports, reads the sign-ins of today as a chart and as its
// table, downloads that part as CSV, reads the storage used over time and per organisation (with its CSV),
// groups by user; the page in Catalan at phone width, one column.
// The dashboard draws its history (a row a minute): running desktops, starts, the queue, each hypervisor's CPU and memory.

const R = infraEn.admin_infra.reports;
const RCa = infraCa.admin_infra.reports;

test.describe.configure({ mode: 'serial' });

/** A screenshot of one card (artifacts/screenshots/<name>.png), to read its chart without the whole page. */
async function cardShot(card: Locator, name: string) {
  if (SHOTS) await card.screenshot({ path: join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots', `${name}.png`) });
}

/** The demo user's desktop, started (its hour under way counts in the reports), or already running. */
async function startedDesktop(request: APIRequestContext) {
  const headers = { authorization: `Bearer ${await apiToken(request, 'user')}` };
  const list = (await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; name: string; state: string }[];
  const id = list.find((d) => d.name === 'Demo desktop')!.id;
  expect([200, 409]).toContain((await request.get(`/api/v3/desktop/start/${id}`, { headers })).status());
  await expect
    .poll(async () => ((await (await request.get('/api/v3/user/desktops', { headers })).json()) as { id: string; state: string }[]).find((d) => d.id === id)!.state, { timeout: scaled(90_000) })
    .toBe('Started');
  return id;
}

test.describe('administration: usage reports', () => {
  let desktop: string | undefined;
  test.beforeAll(async ({ request }) => {
    test.setTimeout(scaled(150_000));
    desktop = await startedDesktop(request);
  });
  // A desktop left running would share the machine's cores with later journeys.
  test.afterAll(async ({ request }) => {
    const headers = { authorization: `Bearer ${await apiToken(request, 'admin')}` };
    if (desktop) await request.post('/api/v3/admin/desktops/force_stop', { headers, data: { ids: [desktop] } }).catch(() => undefined);
  });

  test('a chart and its table, a grouping, the CSV of a part', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    await signInAs(page, 'admin');
    await page.goto('/isard-admin/reports');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(R.heading);
    // Today's sign-ins (this one at least): a chart drawn…
    const card = page.getByTestId('report-sign-ins');
    await expect(card.getByTestId('report-sign-ins-chart').locator('svg.recharts-surface').first()).toBeVisible();
    await expect(card.getByTestId('report-sign-ins-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();
    await expect(page.getByTestId('report-total-sign-ins-value')).not.toHaveText('0');
    // The desktop running now: its hours so far, by organisation, and its template on top.
    await expect(page.getByTestId('report-hours-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();
    await expect(page.getByTestId('report-total-hours-value')).not.toHaveText('0');
    await page.getByTestId('report-templates-table-tab').click();
    await expect(page.getByTestId('report-templates-table').locator('tbody tr').first()).toContainText('Demo');
    // Concurrent desktops: each step's average and the most at once (to the minute), this desktop at least.
    const concurrency = page.getByTestId('report-concurrency');
    await expect(concurrency.getByText(R.concurrency_most).first()).toBeVisible();
    await expect(page.getByTestId('report-peak')).toContainText(R.peak);
    await concurrency.getByTestId('report-concurrency-table-tab').click();
    await expect(concurrency.getByTestId('report-concurrency-table').locator('thead th').nth(2)).toHaveText(R.concurrency_most);
    expect(Number(await concurrency.getByTestId('report-concurrency-table').locator('tbody tr').last().locator('td').nth(2).textContent())).toBeGreaterThanOrEqual(1);
    await concurrency.getByTestId('report-concurrency-chart-tab').click();
    await cardShot(concurrency, 'admin-reports-concurrency');
    // The storage used over time (read at each roll-up: this hour's reading at least), and per organisation as last read.
    const storage = page.getByTestId('report-storage');
    await expect(storage.getByRole('heading')).toHaveText(R.storage_title);
    await expect(storage.getByTestId('report-storage-chart').locator('svg.recharts-surface').first()).toBeVisible();
    await expect(storage.getByTestId('report-storage-latest')).toContainText(/\d/);
    await expect(page.getByTestId('report-storage-by-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();
    await storage.getByTestId('report-storage-table-tab').click();
    await expect(storage.getByTestId('report-storage-table').locator('tbody tr').first()).toContainText(/\d+(\.\d+)? [KMGT]?B/);
    const [storageCsv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('report-storage-by-csv').click()]);
    expect(storageCsv.suggestedFilename()).toMatch(/^usage-storage_by_group-/);
    const storageLines = readFileSync((await storageCsv.path())!, 'utf8').replace(/^\uFEFF/, '').split('\r\n');
    expect(storageLines[0]).toBe('organisation,name,storage_bytes');
    expect(storageLines[1]).toMatch(/^[^,]+,[^,]*,\d+$/);
    await storage.getByTestId('report-storage-chart-tab').click();
    await expect(storage.getByTestId('report-storage-chart').locator('svg.recharts-surface').first()).toBeVisible();
    await cardShot(storage, 'admin-reports-storage');
    await shot(page, 'admin-reports');
    // …and the same numbers as a table.
    await card.getByTestId('report-sign-ins-table-tab').click();
    const rows = card.getByTestId('report-sign-ins-table').locator('tbody tr');
    await expect(rows.first()).toBeVisible();
    expect(Number((await rows.last().locator('td').nth(1).textContent())?.replace(/\D/g, ''))).toBeGreaterThanOrEqual(1);
    // The part as CSV.
    const [download] = await Promise.all([page.waitForEvent('download'), card.getByTestId('report-sign-ins-csv').click()]);
    expect(download.suggestedFilename()).toMatch(/^usage-sign_ins-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8').replace(/^\uFEFF/, '').split('\r\n');
    expect(csv[0]).toBe('day,sign_ins');
    expect(csv[1]).toMatch(/^\d{4}-\d{2}-\d{2},\d+$/);
    // Grouped by user: the per-group card's title follows, and this year's period.
    await page.getByTestId('report-group-by').click();
    await page.getByRole('option', { name: R.group_by_user }).click();
    await expect(page.getByTestId('report-hours').getByRole('heading')).toHaveText(R.hours_by.replace('{{group}}', R.group_by_user));
    await page.getByTestId('report-preset').click();
    await page.getByRole('option', { name: R.preset_year }).click();
    await expect(page.getByTestId('report-from')).toHaveValue(`${new Date().getFullYear()}-01-01`);
    await expect(card.getByTestId('report-sign-ins-chart-tab')).toBeVisible();
  });

  test('in Catalan at phone width the page stacks in one column', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    await signInAs(page, 'admin');
    await showAsSaved(page, 'ca');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/isard-admin/reports');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(RCa.heading);
    await expect(page.getByTestId('report-sign-ins').getByRole('heading')).toHaveText(RCa.sign_ins_title);
    await expect(page.getByTestId('report-sign-ins-chart').locator('svg.recharts-surface').first()).toBeVisible();
    const boxes = await Promise.all(['report-hours', 'report-concurrency', 'report-gpu', 'report-sign-ins', 'report-storage', 'report-storage-by', 'report-templates'].map((id) => page.getByTestId(id).boundingBox()));
    for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.y).toBeGreaterThan(boxes[i - 1]!.y + boxes[i - 1]!.height - 1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, 'admin-reports-phone-ca');
    // The storage card in Catalan at phone width.
    await expect(page.getByTestId('report-storage').getByRole('heading')).toHaveText(RCa.storage_title);
    await expect(page.getByTestId('report-storage-chart').locator('svg.recharts-surface').first()).toBeVisible();
    await cardShot(page.getByTestId('report-storage'), 'admin-reports-storage-phone-ca');
    await page.evaluate((key) => {
      localStorage.setItem(key, 'dark');
      window.dispatchEvent(new StorageEvent('storage', { key, newValue: 'dark', storageArea: localStorage }));
    }, 'mantine-color-scheme-value');
    await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
    await shot(page, 'admin-reports-phone-ca-dark');
  });

  test('the dashboard draws its history: desktops and each hypervisor\'s CPU and memory, the last hour or day', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    const D = infraEn.admin_infra.dashboard;
    await signInAs(page, 'admin');
    await page.goto('/isard-admin/dashboard');
    const history = page.getByTestId('dash-history');
    await expect(history.getByRole('heading')).toHaveText(D.history);
    for (const id of ['desktops', 'cpu', 'memory']) await expect(page.getByTestId(`dash-history-${id}`).locator('svg.recharts-surface').first()).toBeVisible();
    await expect(page.getByTestId('dash-history-desktops')).toContainText(D.history_running);
    await page.getByTestId('dash-history-range').getByText(D.last_day).click();
    await expect(page.getByTestId('dash-history-range').locator('input[value="day"]')).toBeChecked();
    await expect(page.getByTestId('dash-history-cpu').locator('svg.recharts-surface').first()).toBeVisible();
    await shot(page, 'admin-dashboard-history');
    // In Catalan at phone width: one column.
    const DCa = infraCa.admin_infra.dashboard;
    await showAsSaved(page, 'ca');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(page.getByTestId('dash-history').getByRole('heading')).toHaveText(DCa.history);
    const boxes = await Promise.all(['desktops', 'cpu', 'memory'].map((id) => page.getByTestId(`dash-history-${id}`).boundingBox()));
    for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.y).toBeGreaterThan(boxes[i - 1]!.y + boxes[i - 1]!.height - 1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, 'admin-dashboard-history-phone-ca');
  });
});
