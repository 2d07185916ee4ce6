import { expect, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import adminDesktopsEn from '../src/i18n/locales/admin-desktops/en.json' with { type: 'json' };
import adminDesktopsCa from '../src/i18n/locales/admin-desktops/ca.json' with { type: 'json' };
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import { apiToken, chooseLanguage, freshUser, loginPage, PASSWORD, scaled, shot, signInAs, windowShot } from './support';

// Issue 13, desktops part: an admin searches "maria" and finds every Maria's desktops across
// categories, sees which run (state, uptime, hypervisor, memory), force-stops one, opens another's
// screen as support (its owner, signed in elsewhere, sees the notice; the audit log records it)
// and deletes a third to its owner's recycle bin (the owner finds it there).

const D = adminDesktopsEn.admin_desktops;
const DCa = adminDesktopsCa.admin_desktops;
const suffix = Date.now().toString(36).slice(-4);
const FERRER = { username: `maria-ferrer-${suffix}`, name: 'Maria Ferrer', category: 'default', categoryName: 'Default' };
const LOPEZ = { username: `maria-lopez-${suffix}`, name: 'María López', category: 'lab', categoryName: 'Research Lab' };
const DESKS = { running: `Ferrer lab ${suffix}`, old: `Ferrer old ${suffix}`, thesis: `López thesis ${suffix}` };

type Api = { get: (path: string) => Promise<unknown>; post: (path: string, data: unknown) => Promise<unknown> };
async function apiAs(request: APIRequestContext, username: string, category = 'default'): Promise<Api> {
  const headers = { authorization: `Bearer ${await apiToken(request, username, PASSWORD, category)}` };
  const check = async (r: Awaited<ReturnType<APIRequestContext['get']>>) => {
    expect(r.ok(), `${r.url()}: ${r.status()} ${await r.text()}`).toBe(true);
    return r.json();
  };
  return {
    get: async (path) => check(await request.get(`/api/v3${path}`, { headers })),
    post: async (path, data) => check(await request.post(`/api/v3${path}`, { headers, data })),
  };
}

/** The two Marias (two categories) with their desktops: the first two started, the third stopped. */
async function seedMarias(request: APIRequestContext) {
  await freshUser(request, `e2e-group-${suffix}`); // makes sure the journeys' own group exists
  const admin = await apiAs(request, 'admin');
  const groups = (await admin.get(`/admin/groups?search=${encodeURIComponent('E2E accounts')}`)) as { items: { id: string; name: string }[] };
  const e2eGroup = groups.items.find((g) => g.name === 'E2E accounts')!.id;
  for (const [who, group] of [[FERRER, e2eGroup], [LOPEZ, 'lab-default']] as const) {
    await admin.post('/admin/users', { username: who.username, name: who.name, role: 'user', category: who.category, group, password: PASSWORD });
  }
  const made: Record<string, string> = {};
  for (const [who, names] of [[FERRER, [DESKS.running, DESKS.old]], [LOPEZ, [DESKS.thesis]]] as const) {
    const owner = await apiAs(request, who.username, who.category);
    const templates = (await owner.get('/user/templates/allowed/all')) as { id: string; name: string }[];
    const template = templates.find((t) => t.name === 'Demo Linux') ?? templates[0];
    for (const name of names) made[name] = ((await owner.post('/persistent_desktop', { name, template_id: template!.id })) as { id: string }).id;
    for (const name of names) {
      await expect.poll(async () => ((await owner.get('/user/desktops')) as { id: string; state: string }[]).find((d) => d.id === made[name])?.state.toLowerCase(), { timeout: scaled(60_000) }).toBe('stopped');
    }
    for (const name of names.filter((n) => n !== DESKS.old)) {
      await owner.get(`/desktop/start/${made[name]}`);
      await expect.poll(async () => ((await owner.get('/user/desktops')) as { id: string; state: string }[]).find((d) => d.id === made[name])?.state.toLowerCase(), { timeout: scaled(90_000) }).toMatch(/started|waitingip/);
    }
  }
  return made;
}

/** An owner signed in in a browser of their own (a second person). */
async function ownerSignsIn(browser: Browser, who: typeof FERRER) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const login = loginPage(page);
  await login.open();
  await login.signIn(who.username, PASSWORD, who.category === 'default' ? undefined : who.categoryName);
  await expect(page).toHaveURL(/\/desktops$/, { timeout: scaled(20_000) });
  return { page, context };
}

const row = (page: Page, name: string) => page.locator(`[data-testid="desktop-row"][data-name="${name}"]`);
const noDialog = (page: Page) => expect(page.getByRole('dialog')).toHaveCount(0);

test.describe.configure({ mode: 'serial' });

test.describe('administration: every desktop', () => {
  // Desktops still running stop with these journeys: the later ones share the machine's two cores.
  test.afterAll(async ({ request }) => {
    const owner = await apiAs(request, LOPEZ.username, LOPEZ.category).catch(() => null);
    if (!owner) return;
    const mine = (await owner.get('/user/desktops').catch(() => [])) as { id: string; state: string }[];
    for (const d of mine.filter((x) => x.state.toLowerCase() !== 'stopped')) {
      // The second stop forces it (as the card's force stop does).
      for (let i = 0; i < 2; i++) await owner.get(`/desktop/stop/${d.id}`).catch(() => undefined);
    }
  });

  test('an admin finds every Maria, force-stops one, opens another as support, deletes a third to its owner\'s bin', async ({ page, browser, request }) => {
    test.setTimeout(scaled(300_000));
    await seedMarias(request);

    await signInAs(page, 'admin');
    await page.goto('/isard-admin/desktops');
    await expect(page.getByTestId('desktops-table')).toBeVisible();
    await page.getByTestId('desktops-search').fill('maria');
    // Only the Marias' desktops (the demo ones are gone from the list), in both categories; "María" is found by "maria".
    await expect(page.locator('[data-testid="desktop-row"][data-name="Demo desktop"]')).toHaveCount(0);
    await expect(row(page, DESKS.thesis)).toBeVisible();
    await expect(row(page, DESKS.running)).toBeVisible();
    await expect(row(page, DESKS.old)).toBeVisible();
    await expect(row(page, DESKS.thesis)).toContainText(LOPEZ.categoryName);
    await expect(row(page, DESKS.running)).toContainText(FERRER.categoryName);
    // Which run: the state, the uptime ticking, where, with what memory.
    await expect(row(page, DESKS.running).getByTestId('desktop-state')).toHaveAttribute('data-state', /started|waitingip/);
    await expect(row(page, DESKS.old).getByTestId('desktop-state')).toHaveAttribute('data-state', 'stopped');
    await expect(row(page, DESKS.running).getByTestId('desktop-uptime')).toHaveText(/^\d+:\d\d(:\d\d)?$/);
    await expect(row(page, DESKS.running)).toContainText(en.built_in.local_hypervisor);
    await expect(row(page, DESKS.running)).toContainText('256 MB');
    await page.mouse.move(0, 0);
    await shot(page, 'admin-desktops-maria');

    // Force stop one (it asks first).
    await row(page, DESKS.running).getByTestId('desktop-actions').click();
    await page.getByTestId('desktop-force-stop').click();
    await expect(page.getByRole('dialog')).toContainText(D.desktops.confirm_force_stop_body);
    await windowShot(page, 'admin-desktops-force-stop-confirm');
    await page.getByTestId('desktops-confirm-confirm').click();
    await noDialog(page);
    await expect(row(page, DESKS.running).getByTestId('desktop-state')).toHaveAttribute('data-state', 'stopped', { timeout: scaled(60_000) });

    // Open another's screen as support: its owner, signed in elsewhere, sees the notice at once.
    const lopez = await ownerSignsIn(browser, LOPEZ);
    await row(page, DESKS.thesis).getByTestId('desktop-actions').click();
    await page.getByTestId('desktop-support').click();
    await expect(page.getByRole('dialog')).toContainText(LOPEZ.name);
    const viewer = page.context().waitForEvent('page');
    await page.getByTestId('desktops-support-confirm').click();
    const screen = await viewer;
    await expect(screen).toHaveURL(/\/viewer\/vnc/, { timeout: scaled(20_000) });
    const notice = lopez.page.getByTestId('support-notice');
    await expect(notice).toBeVisible({ timeout: scaled(20_000) });
    await expect(notice).toContainText(en.support_notice.title);
    await expect(notice).toContainText(DESKS.thesis);
    await shot(lopez.page, 'admin-desktops-owner-notice');
    await screen.close();
    // The audit log records it, as someone else's screen opened by support.
    await page.goto('/isard-admin/audit');
    const entry = page.getByRole('row').filter({ hasText: DESKS.thesis }).first();
    await expect(entry).toBeVisible({ timeout: scaled(20_000) });
    await expect(entry).toContainText('support: true');
    await shot(page, 'admin-desktops-audit');

    // A running desktop is not deleted: refused, with the reason.
    await page.goto('/isard-admin/desktops');
    await page.getByTestId('desktops-search').fill('maria');
    await expect(row(page, DESKS.thesis)).toBeVisible();
    await row(page, DESKS.thesis).getByTestId('desktop-select').check();
    await page.getByTestId('desktops-bulk-delete').click();
    await page.getByTestId('desktops-confirm-confirm').click();
    await expect(page.getByTestId('desktops-refusal')).toBeVisible();
    await expect(page.getByTestId('desktops-refusal')).toContainText(en.errors.desktop_action_not_available.slice(0, 12));
    await noDialog(page);
    await shot(page, 'admin-desktops-refused');
    await row(page, DESKS.thesis).getByTestId('desktop-select').uncheck();

    // Delete a third to its owner's recycle bin: the owner finds it there.
    await row(page, DESKS.old).getByTestId('desktop-select').check();
    await expect(page.getByTestId('desktops-selected-count')).toContainText('1');
    await page.getByTestId('desktops-bulk-delete').click();
    await expect(page.getByTestId('desktops-confirm-names')).toContainText(DESKS.old);
    await page.getByTestId('desktops-confirm-confirm').click();
    await noDialog(page);
    await expect(row(page, DESKS.old)).toHaveCount(0);
    const ferrer = await ownerSignsIn(browser, FERRER);
    await ferrer.page.goto('/recycleBins');
    await expect(ferrer.page.locator(`[data-testid=bin-row][data-name="${DESKS.old}"]`)).toBeVisible();
    await shot(ferrer.page, 'admin-desktops-owner-bin');

    // An empty search, at phone width.
    await page.getByTestId('desktops-search').fill('nobody-has-this-name');
    await expect(page.getByTestId('empty-state')).toContainText(D.desktops.none_found);
    await shot(page, 'admin-desktops-none-found');
    await page.getByTestId('desktops-search').fill('maria');
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByTestId('desktops-cards')).toBeVisible();
    await expect(row(page, DESKS.thesis)).toBeVisible();
    await expect(row(page, DESKS.thesis).getByTestId('desktop-uptime')).toBeVisible();
    await shot(page, 'admin-desktops-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    await lopez.context.close();
    await ferrer.context.close();
  });

  test('a manager sees only their category\'s Marias, in Catalan; the templates, media and deployments screens', async ({ page }) => {
    test.setTimeout(scaled(120_000));
    await signInAs(page, 'manager');
    await page.goto('/isard-admin/desktops');
    await chooseLanguage(page, 'ca-ES');
    await expect(page.getByTestId('desktops-search')).toHaveAttribute('placeholder', DCa.common.search);
    await page.getByTestId('desktops-search').fill('maria');
    await expect(page.locator('[data-testid="desktop-row"][data-name="Demo desktop"]')).toHaveCount(0);
    await expect(row(page, DESKS.running)).toBeVisible();
    await expect(row(page, DESKS.thesis)).toHaveCount(0);
    await page.mouse.move(0, 0);
    await shot(page, 'admin-desktops-manager-ca');
    for (const area of ['templates', 'media', 'deployments'] as const) {
      await page.getByTestId(`admin-nav-${area}`).click();
      await expect(page).toHaveURL(new RegExp(`/isard-admin/${area}$`));
      await expect(page.getByTestId(`${area}-table`).or(page.getByTestId('empty-state'))).toBeVisible();
      await shot(page, `admin-${area}-ca`);
    }
    // Back to English for the other journeys.
    await chooseLanguage(page, 'en-US');
    await page.getByTestId('admin-nav-templates').click();
    await page.getByTestId('templates-actions').first().click();
    await page.getByTestId('template-delete').click();
    await expect(page.getByTestId('templates-delete-tree')).toBeVisible();
    await windowShot(page, 'admin-templates-delete-tree');
    await page.keyboard.press('Escape');
  });
});
