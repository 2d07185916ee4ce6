import { expect, type APIRequestContext, type Locator, type Page } from '@playwright/test';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { E2E_DEMO_PASSWORD } from '../playwright.config';

export const PASSWORD = E2E_DEMO_PASSWORD;
const shots = join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots');

/** Screenshots a person looks at: artifacts/screenshots/<name>.png */
export async function shot(page: Page, name: string) {
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** The login page as a page object. */
export const loginPage = (page: Page) => ({
  async open() {
    await page.goto('/login');
    await expect(page.getByTestId('login-submit')).toBeVisible();
  },
  async signIn(username: string, password = PASSWORD, category?: string) {
    if (category) {
      await page.getByTestId('login-category').click();
      await page.getByRole('option', { name: category }).click();
    }
    await page.getByTestId('login-username').fill(username);
    await page.getByTestId('login-password').fill(password);
    await page.getByTestId('login-submit').click();
  },
  error: () => page.getByTestId('login-error'),
});

export async function signInAs(page: Page, username: string) {
  const login = loginPage(page);
  await login.open();
  await login.signIn(username);
  await expect(page).toHaveURL(/\/desktops$/);
}

/** A session token through the API, for set-up steps a person would do elsewhere. */
export async function apiToken(request: APIRequestContext, username: string, password = PASSWORD, category = 'default') {
  const res = await request.post(`/authentication/login?provider=form&category_id=${category}`, { multipart: { username, password } });
  expect(res.status()).toBe(200);
  return res.text();
}

export async function adminCall(request: APIRequestContext, method: 'PUT' | 'GET', path: string, data?: unknown) {
  const token = await apiToken(request, 'admin');
  const res = await request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });
  expect(res.ok()).toBe(true);
  return res.json();
}

export async function userId(request: APIRequestContext, username: string) {
  const users = (await adminCall(request, 'GET', `/admin/users?search=${encodeURIComponent(username)}&per_page=500`)) as { items: { id: string; username: string }[] };
  return users.items.find((u) => u.username === username)!.id;
}

/** The whole page in one window-sized shot: the fixed header, modals and their overlay sit where a person sees them. */
export async function windowShot(page: Page, name: string) {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, window.innerHeight));
  await page.setViewportSize({ width: size.width, height });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(450); // modal and progress transitions end
  await shot(page, name);
  await page.setViewportSize(size);
}

/** How many pixels of the first canvas in `scope` are lit (a desktop's screen drawn by noVNC, not an empty canvas). */
export async function litPixels(scope: Locator) {
  return scope.evaluate((el) => {
    const c = el instanceof HTMLCanvasElement ? el : el.querySelector('canvas');
    const g = c?.getContext('2d');
    if (!c || !g || !c.width) return 0;
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i]! + d[i + 1]! + d[i + 2]! > 300) n++;
    return n;
  });
}

/** The group of the journeys' own users: no spec rolls desktops out to it, so they change no other spec's counts. */
const E2E_GROUP = 'E2E accounts';

/**
 * A user of the journey's own, in the group "E2E accounts" of the default organisation, made through the
 * console's API: specs that change a person's password, account or items use one of these, never a demo
 * user other specs count on.
 */
export async function freshUser(request: APIRequestContext, username: string) {
  const token = await apiToken(request, 'admin');
  const headers = { authorization: `Bearer ${token}` };
  const groups = (await (await request.get(`/api/v3/admin/groups?search=${encodeURIComponent(E2E_GROUP)}`, { headers })).json()) as { items: { id: string; name: string }[] };
  let group = groups.items.find((g) => g.name === E2E_GROUP)?.id;
  if (!group) {
    const made = await request.post('/api/v3/admin/groups', { headers, data: { name: E2E_GROUP, category: 'default' } });
    expect(made.ok()).toBe(true);
    group = ((await made.json()) as { id: string }).id;
  }
  const res = await request.post('/api/v3/admin/users', {
    headers,
    data: { username, name: `${username} (e2e)`, email: `${username}@example.org`, role: 'user', category: 'default', group, password: PASSWORD },
  });
  // Made by an earlier run of the same spec on this data directory: fine.
  if (!res.ok()) expect((await res.json()).description_code).toBe('username_exists');
}

/** The critical and serious WCAG 2.2 A/AA failures axe-core finds on the page as it is now (accessibility.spec.ts scans every screen). */
export async function seriousViolations(page: Page) {
  const { default: AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'critical' || v.impact === 'serious')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A notification on screen with this text (not the live region's copy of it, which screen readers hear). */
export const notice = (page: Page, text: string) => page.locator('.mantine-Notification-root').getByText(text);

/** Every section of the console, from the sections.ts of each area (admins see them all). */
export function adminSections(): string[] {
  const root = join(import.meta.dirname, '..', 'src', 'features', 'admin');
  const paths: string[] = [];
  for (const area of readdirSync(root, { withFileTypes: true })) {
    if (!area.isDirectory()) continue;
    let text: string;
    try {
      text = readFileSync(join(root, area.name, 'sections.ts'), 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/\bpath:\s*'([^']+)'/g)) paths.push(m[1]!);
  }
  return paths;
}
