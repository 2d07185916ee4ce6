import { expect, type APIRequestContext, type Locator, type Page } from '@playwright/test';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { E2E_DEMO_PASSWORD } from '../playwright.config';

export const PASSWORD = E2E_DEMO_PASSWORD;

/** How much slower this machine is than a quiet one, measured when the suite starts (`npm test` sets it; 1 when unset). */
export const SLOWDOWN = Math.max(1, Number(process.env.TEST_SLOWDOWN ?? 1) || 1);
/** A time limit (ms) for a quiet machine, stretched by the measured slowdown. */
export const scaled = (ms: number) => Math.round(ms * SLOWDOWN);
const shots = join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots');

/**
 * Whether the journeys write their screenshots. Off on CI, where nobody looks at them and they were
 * about a tenth of the journeys' CPU; `E2E_SHOTS=1` forces them, `E2E_SHOTS=0` skips them elsewhere.
 */
export const SHOTS = process.env.E2E_SHOTS ? process.env.E2E_SHOTS !== '0' : !process.env.CI;

/** Screenshots a person looks at: artifacts/screenshots/<name>.png */
export async function shot(page: Page, name: string) {
  if (!SHOTS) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** How soon after a live event a screen reads again what it shows (it waits 100 ms for the rest of a burst): far below its fallback poll. */
export const EVENT_TO_READ_MS = Math.min(scaled(2_000), 10_000);

/**
 * What a page gets on its live socket and what it reads, each with when: the frames of one socket.io event (its payload
 * parsed), and its GET reads of one API path (when each was asked, and what it answered: a list). For a screen that reads
 * again on an event: `readByEvent` says whether a change was shown by a read the event caused, not by a poll.
 */
export function watchLiveReads<T>(page: Page, event: string, path: string) {
  const frames: { payload: Record<string, unknown>; at: number }[] = [];
  const reads: { at: number; items: T[] }[] = [];
  page.on('websocket', (ws) =>
    ws.on('framereceived', ({ payload }) => {
      // A socket.io event: 42/userspace,["<event>","<payload as JSON>"]
      const text = typeof payload === 'string' ? payload : payload.toString();
      const at = Date.now();
      const start = text.indexOf('[');
      if (start < 0 || !text.includes(`"${event}"`)) return;
      const [name, data] = JSON.parse(text.slice(start)) as [string, string];
      if (name === event) frames.push({ payload: JSON.parse(data) as Record<string, unknown>, at });
    }),
  );
  const asked = new WeakMap<object, number>();
  const isRead = (url: string, method: string) => method === 'GET' && new URL(url).pathname === path;
  page.on('request', (r) => {
    if (isRead(r.url(), r.method())) asked.set(r, Date.now());
  });
  page.on('response', async (r) => {
    if (!isRead(r.url(), r.request().method()) || !r.ok()) return;
    const at = asked.get(r.request()) ?? 0;
    reads.push({ at, items: (await r.json().catch(() => [])) as T[] });
  });
  return {
    /**
     * 'after the event' when a read asked after `since` answered an item that `shows` the change, at most
     * EVENT_TO_READ_MS after an event `about` it (a poll landing there by chance is unlikely, twice in a journey more
     * so; a poll that read the change before its event came does not count); else what was seen.
     */
    readByEvent(since: number, shows: (item: T) => boolean, about: (payload: Record<string, unknown>) => boolean) {
      const showing = reads.filter((r) => r.at >= since && r.items.some(shows));
      if (!showing.length) return `no read after ${since} shows it`;
      const events = frames.filter((f) => f.at >= since && about(f.payload));
      if (!events.length) return `no ${event} about it`;
      const byEvent = showing.some((r) => events.some((f) => f.at <= r.at && r.at - f.at <= EVENT_TO_READ_MS));
      return byEvent ? 'after the event' : `reads at ${showing.map((r) => r.at).join(', ')}; events at ${events.map((f) => f.at).join(', ')}`;
    },
  };
}

/** The login page as a page object. */
export const loginPage = (page: Page) => ({
  async open({ timeout }: { timeout?: number } = {}) {
    await page.goto('/login', { timeout });
    await expect(page.getByTestId('login-submit')).toBeVisible({ timeout });
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

/** `timeout`: for the sign-in page and for the desktops screen after the click (a class loading the portal and signing in at once waits its turn). */
export async function signInAs(page: Page, username: string, { timeout }: { timeout?: number } = {}) {
  const login = loginPage(page);
  await login.open({ timeout });
  await login.signIn(username);
  await expect(page).toHaveURL(/\/desktops$/, { timeout });
  // The URL changes before the portal's shell replaces the sign-in page (its chunk may still be
  // loading): until the sign-in page is gone, a click on the header (the language menu) may land on
  // the sign-in page's own menu, which then vanishes under it.
  await expect(page.getByTestId('login-submit')).toHaveCount(0);
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
  if (!SHOTS) return;
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, window.innerHeight));
  await page.setViewportSize({ width: size.width, height });
  await page.evaluate(() => window.scrollTo(0, 0));
  await stillScreen(page);
  await shot(page, name);
  await page.setViewportSize(size);
}

/**
 * Waits until nothing on the page moves: every transition and finite animation has ended, menus and
 * dialogs have fully faded in (colours mid-fade are not what a person sees), and a frame was drawn after.
 */
export async function stillScreen(page: Page) {
  await page.waitForFunction(
    () =>
      document.getAnimations().every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity) &&
      [...document.querySelectorAll('[role=menu], [role=dialog], [role=listbox]')].every((e) => getComputedStyle(e).opacity === '1'),
    null,
    { timeout: scaled(10_000), polling: 'raf' },
  );
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
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
 * A person of the journey's own (a user, or another role), in the group "E2E accounts" of the default
 * organisation, made through the console's API: specs that change a person's language, password, account
 * or items use one of these, never a demo user other specs count on (the language a person saves is
 * theirs on every later sign-in, and wins over the browser's).
 */
export async function freshUser(request: APIRequestContext, username: string, role: 'user' | 'advanced' | 'manager' | 'admin' = 'user') {
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
    data: { username, name: `${username} (e2e)`, email: `${username}@example.org`, role, category: 'default', group, password: PASSWORD },
  });
  // Made by an earlier run of the same spec on this data directory: fine.
  if (!res.ok()) expect((await res.json()).description_code).toBe('username_exists');
}

/**
 * This page takes the signed-in person as having saved `code` (`ca`, `zh_Hans`) as their language: the
 * server's answer to /user is changed for this page only. Screenshots of a demo person's screens in a
 * language use it instead of saving the language on a demo account that other journeys sign in as.
 */
export async function showAsSaved(page: Page, code: string) {
  await page.unroute('**/api/v3/user');
  await page.route('**/api/v3/user', async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, json: { ...((await res.json()) as object), lang: code } });
  });
}

/** Waits for the signed-in person's language choice to be saved on the server (a page loaded before that would read the old one). */
function languageSaved(page: Page) {
  return page.waitForResponse((r) => /\/api\/v3\/user\/language\/[^/]+$/.test(r.url()) && r.request().method() === 'PUT');
}

/** A signed-in person chooses a language in the header's menu (`ca-ES`); answers once it is saved. */
export async function chooseLanguage(page: Page, tag: string) {
  const saved = languageSaved(page);
  // The header may render again while the first screen settles (the menu then closes): open it until the choice is made.
  await expect(async () => {
    if (!(await page.getByTestId(`language-${tag}`).isVisible())) await page.getByTestId('language-menu').click();
    await page.getByTestId(`language-${tag}`).click({ timeout: scaled(2_000) });
  }).toPass({ timeout: scaled(30_000) });
  expect((await saved).ok(), `language ${tag} saved`).toBe(true);
}

/** A signed-in person chooses a language in the profile's select (by its name, `Català`); answers once it is saved. */
export async function chooseProfileLanguage(page: Page, name: string) {
  const saved = languageSaved(page);
  await page.getByTestId('profile-language').click();
  await page.getByRole('option', { name }).click();
  expect((await saved).ok(), `language ${name} saved`).toBe(true);
}

/** The WCAG 2.2 A/AA rules the scans check. */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
type Axe = { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> };
export type AxeViolation = { id: string; impact?: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] };

/**
 * The WCAG 2.2 A/AA violations axe-core finds on the page as it is now. axe is put into the page once
 * per document and run there (the portal has no frames): @axe-core/playwright puts it in again and
 * opens a second page for every scan, several seconds each on a busy machine.
 */
/** The WCAG A/AA rules whose outcome depends on colours alone (the rest read the DOM, which a colour scheme does not change). */
export const COLOUR_RULES = ['color-contrast', 'link-in-text-block'];

/**
 * axe-core's WCAG 2.2 A/AA violations on the page as it is now; `rules`: only those rules; `also`: rules outside the
 * WCAG tags run in the same scan (one pass over the page).
 */
export async function axeViolations(page: Page, rules?: string[], also: string[] = []): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate((await import('axe-core')).default.source);
  return page.evaluate(
    ([runOnly, extra]) =>
      (window as unknown as { axe: Axe }).axe
        .run(document, { runOnly, rules: Object.fromEntries(extra.map((id) => [id, { enabled: true }])), resultTypes: ['violations'] })
        .then((r) => r.violations),
    [rules ? { type: 'rule', values: rules } : { type: 'tag', values: WCAG_TAGS }, also] as const,
  );
}

/** The critical and serious WCAG 2.2 A/AA failures axe-core finds on the page as it is now (accessibility.spec.ts scans every screen). */
export async function seriousViolations(page: Page) {
  return (await axeViolations(page))
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
    // (A section's pages below it, `:id`, need an object: scanned by lines of their own.)
    for (const m of text.matchAll(/\bpath:\s*'([^']+)'/g)) if (!m[1]!.includes(':')) paths.push(m[1]!);
  }
  return paths;
}
