import { expect, test, type APIRequestContext, type Browser, type Page, type WebSocketRoute } from '@playwright/test';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as OTPAuth from 'otpauth';
import { BOOKING_END_MSG_CODE, desktopState, formatBookingDate, SESSION_COOKIE, SOCKET_NAMESPACE, SOCKET_PATH, type TDesktopState } from '@vdi/contracts';
import { startMediaFileServer, type MediaFileServer } from '../../server/test/helpers/media-file-server';
import { ROUTES, mounted } from '../src/app/routes';
import { adminSections, apiToken, axeViolations, COLOUR_RULES, loginPage, scaled, stillScreen } from './support';

// The accessibility scan: every screen and dialog of the portal, light and dark, at desktop
// (1280) and phone (390) width, through axe-core; 0 critical and 0 serious violations (WCAG 2.2
// A/AA rules: every rule in one colour scheme at each width — light at desktop width, dark at phone
// width — and in the other the rules that read colours, since a scheme changes colours only). A new
// screen is one line in SCREENS (a route of ROUTES without one fails the coverage test); the
// console's sections are read from their sections.ts files, so every section another area adds is
// scanned too.
//
// One signed-in page per demo user (and one signed out) serves every screen: each screen is
// opened once (its dialog opened on it once), scanned at both widths by resizing the window, and
// light and dark by switching the colour scheme as the theme button does, without loading it again.

type Ids = {
  deployment: string;
  bin: string;
  desktop: string;
  gpuDesktop: string;
  /** The demo user's desktop of the class (hidden from them): the one desktop the scan starts, for the dialogs of a running one. */
  classDesktop: string;
};
type Screen = {
  /** The screen, and after a colon the dialog opened on it. */
  name: string;
  /** Signed in as this demo user; none: a public page. */
  user?: string;
  path: string | ((ids: Ids) => string);
  /** Opens a dialog (or menu) on the screen before the scan; the scan covers the dialog. */
  open?: (page: Page) => Promise<void>;
  /** The ROUTES names the screen covers (the coverage test's key). */
  route?: string;
  /** Undoes what opening the dialog changed (after the scan, passed or not). */
  after?: (page: Page) => Promise<void>;
  /** Only at phone width (the navigation drawer: the burger that opens it is a phone's). */
  phone?: boolean;
  /** The dialog shows a spinner while it waits (the scan does not wait for it to go). */
  busy?: boolean;
};

const card = (page: Page, testId: string) => page.getByTestId(testId).first();
const dialog = async (page: Page) => expect(page.getByRole('dialog').first()).toBeVisible();
/** Clicks these (by test id, the first of each: a menu's button, then its item…) and waits for the dialog they open. */
const via =
  (...testIds: string[]) =>
  async (page: Page) => {
    for (const id of testIds) await card(page, id).click();
    await dialog(page);
  };

/**
 * Every dialog of the portal and the console (Modal, Drawer and the dialogs of @mantine/modals), opened where a
 * person opens it; those that need a state the demo data has not (a running desktop, a provider saved, a job under
 * way…) are in STATEFUL, each with its state put in place and undone.
 */
const DIALOGS: Screen[] = [
  // The portal.
  { name: 'navigation-drawer', user: 'user', path: '/desktops', phone: true, open: async (p) => (await p.locator('.mantine-Burger-root').first().click(), dialog(p)) },
  { name: 'desktops:delete', user: 'user', path: '/desktops', open: via('desktop-menu', 'desktop-delete') },
  { name: 'recycle-bin:delete', user: 'advanced', path: (ids) => `/recyclebin/${ids.bin}`, open: via('bin-detail-delete') },
  { name: 'templates:to-desktop', user: 'admin', path: '/templates', open: via('template-menu', 'template-to-desktop') },
  { name: 'templates:delete', user: 'admin', path: '/templates', open: via('template-menu', 'template-delete') },
  { name: 'templates:choose-desktop', user: 'admin', path: '/templates', open: via('templates-new') },
  // The class is made hidden: shown first (the students see it), then the dialog that hides it again.
  { name: 'deployment:hide', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: async (p) => (await card(p, 'deployment-show').click(), await via('deployment-hide')(p)) },
  { name: 'deployment:recreate', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: via('deployment-recreate') },
  { name: 'deployment:users', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: via('deployment-more', 'deployment-edit-users') },
  { name: 'deployment:csv', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: via('deployment-more', 'deployment-csv') },
  { name: 'deployment:co-owners', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: via('deployment-more', 'deployment-co-owners') },
  { name: 'deployment:delete', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: via('deployment-more', 'deployment-delete') },
  { name: 'profile:email', user: 'user', path: '/profile', open: via('open-email') },
  { name: 'profile:vpn', user: 'user', path: '/profile', open: via('open-vpn') },
  { name: 'profile:new-token', user: 'user', path: '/profile', open: via('token-new') },
  { name: 'planner:new', user: 'admin', path: '/planning', open: via('planner-new') },
  // The console.
  { name: 'admin:users:new', user: 'admin', path: '/isard-admin/users', open: via('users-new') },
  { name: 'admin:users:edit', user: 'admin', path: '/isard-admin/users', open: via('user-actions', 'user-edit') },
  { name: 'admin:users:import', user: 'admin', path: '/isard-admin/users', open: via('users-import') },
  { name: 'admin:users:delete', user: 'admin', path: '/isard-admin/users', open: async (p) => (await card(p, 'user-select').check(), await via('users-bulk-delete')(p)) },
  { name: 'admin:groups:new', user: 'admin', path: '/isard-admin/groups', open: via('groups-new') },
  { name: 'admin:groups:edit', user: 'admin', path: '/isard-admin/groups', open: via('group-edit') },
  { name: 'admin:groups:delete', user: 'admin', path: '/isard-admin/groups', open: via('group-delete') },
  { name: 'admin:categories:new', user: 'admin', path: '/isard-admin/categories', open: via('categories-new') },
  { name: 'admin:categories:delete', user: 'admin', path: '/isard-admin/categories', open: via('category-delete') },
  { name: 'admin:categories:edit', user: 'admin', path: '/isard-admin/categories', open: via('category-edit') },
  { name: 'admin:codes:new', user: 'admin', path: '/isard-admin/registration_codes', open: via('codes-new') },
  { name: 'admin:desktops:columns', user: 'admin', path: '/isard-admin/desktops', open: async (p) => (await card(p, 'desktops-columns').click(), await expect(card(p, 'desktops-columns-menu')).toBeVisible()) },
  { name: 'admin:desktops:delete', user: 'admin', path: '/isard-admin/desktops', open: via('desktop-actions', 'desktop-delete') },
  { name: 'admin:templates:owner', user: 'admin', path: '/isard-admin/templates', open: via('templates-actions', 'template-owner') },
  { name: 'admin:templates:delete', user: 'admin', path: '/isard-admin/templates', open: via('templates-actions', 'template-delete') },
  { name: 'admin:deployments:delete', user: 'admin', path: '/isard-admin/deployments', open: via('deployments-actions', 'deployment-delete') },
  { name: 'admin:hypervisors:add', user: 'admin', path: '/isard-admin/hypervisors', open: via('hypervisor-add') },
  // Draining the only host stops new starts: it takes new desktops again once scanned.
  {
    name: 'admin:hypervisors:drain',
    user: 'admin',
    path: '/isard-admin/hypervisors',
    open: via('hypervisor-drain'),
    after: async (p) => {
      await p.keyboard.press('Escape');
      await expect(p.getByRole('dialog')).toHaveCount(0);
      await card(p, 'hypervisor-drain').click();
      await expect(card(p, 'hypervisor-draining')).toHaveCount(0);
    },
  },
  { name: 'admin:reservables:new', user: 'admin', path: '/isard-admin/reservables', open: via('cards-new') },
  { name: 'admin:reservables:edit', user: 'admin', path: '/isard-admin/reservables', open: via('card-edit') },
  { name: 'admin:reservables:delete', user: 'admin', path: '/isard-admin/reservables', open: via('card-delete') },
  { name: 'admin:reservables:profile', user: 'admin', path: '/isard-admin/reservables', open: via('card-add-profile') },
  { name: 'admin:booking_rules:edit', user: 'admin', path: '/isard-admin/booking_rules', open: via('rule-edit') },
  { name: 'admin:booking_rules:delete', user: 'admin', path: '/isard-admin/booking_rules', open: via('rule-delete') },
  { name: 'admin:deployments:owner', user: 'admin', path: '/isard-admin/deployments', open: via('deployments-actions', 'deployment-owner') },
  { name: 'admin:booking_rules:new', user: 'admin', path: '/isard-admin/booking_rules', open: via('rules-new') },
  { name: 'admin:shutdown_policies:new', user: 'admin', path: '/isard-admin/shutdown_policies', open: via('policies-new') },
  { name: 'admin:password_policies:new', user: 'admin', path: '/isard-admin/settings/passwords', open: via('policy-add') },
];


/** The page's own session (each sign-in ends the person's earlier session: a set-up sign-in would end the page's). */
async function sessionOf(page: Page) {
  return decodeURIComponent((await page.context().cookies()).find((c) => c.name === SESSION_COOKIE)!.value);
}
/** An API call as the person signed in on this page, with the page's session. */
async function pageCall(page: Page, method: string, path: string, data?: unknown) {
  const res = await page.request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${await sessionOf(page)}` } });
  expect(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`).toBe(true);
  return res.json().catch(() => null);
}
/** A demo user's page (made if not yet), for a step done as another person than the screen's. */
const other = (user: string) => pageOf(run.browser, run.request, user);
/** A desktop pool of the page's person, shown: nothing prepared (no guest boots), a timetable row. */
async function withPool(p: Page) {
  const templates = (await pageCall(p, 'GET', '/user/templates/allowed/all')) as { id: string; name: string }[];
  const template = templates.find((x) => x.name === 'Demo Linux')!.id;
  made.pool = ((await pageCall(p, 'POST', '/desktop-pools', { name: 'Accessibility pool', template_id: template, allowed: {}, max_desktops: 2, prepared: 0, schedule: [{ days: [1, 2, 3], from: '08:45', to: '14:00', prepared: 0 }] })) as { id: string }).id;
  await p.reload();
  await settled(p);
  await expect(p.getByTestId('pool-admin-card')).toBeVisible();
}
async function dropPool(p: Page) {
  await p.keyboard.press('Escape');
  if (made.pool) await pageCall(p, 'DELETE', `/desktop-pools/${made.pool}`);
  made.pool = undefined;
}
const closeDialog = async (p: Page) => {
  await p.keyboard.press('Escape');
  await expect(p.getByRole('dialog')).toHaveCount(0);
};
const root = join(import.meta.dirname, '..', '..');
const dataDir = process.env.E2E_DATA_DIR ?? join(root, '.tmp', 'e2e-data');
const STEP = 30_000;
/** What the states below made, to undo (afterAll undoes what a failed step left). */
const made: { pool?: string; bastionWas?: boolean; provider?: string; policy?: string; media?: string; files?: MediaFileServer; orphan?: string; twoFactor?: OTPAuth.TOTP; directLink?: string; person?: string } = {};
const PREVIEW = {
  identity: { uid: 'uid=tina,ou=people,dc=example,dc=org', username: 'tina', name: 'Tina Teacher', email: 'tina@example.org', photo: '', groups: ['cn=teachers,ou=groups,dc=example,dc=org'] },
  rule: 1,
  outcome: 'create',
  category_id: 'default',
  group_id: 'default-teachers',
  role: 'advanced',
  reason: null,
};
/** A stored sign-in provider (disabled: no sign-in page shows it) for its test, preview and delete dialogs. */
async function provider(page: Page) {
  if (!made.provider) {
    const p = (await pageCall(page, 'POST', '/admin/identity-providers', {
      kind: 'ldap', name: 'Accessibility directory', category_id: 'default', enabled: false, settings: { url: 'ldap://127.0.0.1:1', user_base: 'dc=example,dc=org' },
    })) as { id: string };
    made.provider = p.id;
    await page.reload();
    await settled(page);
  }
  return made.provider;
}
/** The class desktop of the demo user running (the videowall, the quota held, the console's force stop). */
async function classDesktopRunning() {
  const admin = await other('admin');
  const state = async () => ((await pageCall(admin, 'GET', `/admin/desktops/${ids.classDesktop}`)) as { status: string }).status;
  if ((await state()) !== 'Started') {
    if ((await state()) === 'Stopped') await pageCall(admin, 'POST', '/admin/desktops/start', { ids: [ids.classDesktop] });
    await expect.poll(state, { message: 'the class desktop runs', timeout: scaled(90_000) }).toBe('Started');
  }
}
async function classDesktopStopped() {
  const admin = await other('admin');
  const state = async () => ((await pageCall(admin, 'GET', `/admin/desktops/${ids.classDesktop}`)) as { status: string }).status;
  if ((await state()) !== 'Stopped') await pageCall(admin, 'POST', '/admin/desktops/force_stop', { ids: [ids.classDesktop] }).catch(() => undefined);
  await expect.poll(state, { message: 'the class desktop stopped', timeout: scaled(60_000) }).toBe('Stopped');
}
/** A remote hypervisor that is offline (with `unknown` desktops in doubt), as the console's list would show it: a lab host is not started for two dialogs. */
async function remoteHostShown(page: Page, unknown: number) {
  await page.unroute('**/api/v3/admin/hypervisors');
  await page.route('**/api/v3/admin/hypervisors', async (route) => {
    const res = await route.fetch();
    const list = (await res.json()) as { items: Record<string, unknown>[]; total: number };
    const host = { ...list.items[0]!, id: 'a11y-lab-host', name: 'Lab host 1', uri: 'qemu+ssh://lab-host-1/system', state: 'Offline', desktops_running: 0, desktops_unknown: unknown, draining: false, watched_by: null, last_error: null };
    await route.fulfill({ response: res, json: { items: [...list.items, host], total: list.total + 1 } });
  });
  await page.reload();
  await settled(page);
}
const lab = (p: Page) => p.getByTestId('hypervisor-card').filter({ hasText: 'Lab host 1' });

/**
 * Dialogs that need a state the demo data has not: each puts it in place through the API (as the person the screen
 * belongs to, or as the admin), scans, and undoes it. One desktop is started for those that need a running one (the
 * class's desktop of the demo user, hidden from them: the videowall, the quota it holds, the console's force stops, its
 * direct link). A state this machine cannot hold still (a disk operation under way, a second running desktop) is the
 * server's answer changed on the page (`page.route`), a live message the frame the server would send; everything else
 * is a stopped desktop or a stored row.
 */
const STATEFUL: Screen[] = [
  // A teacher's pool (nothing prepared: no guest boots): its card, its form with a timetable row, its delete confirmation.
  { name: 'pools:edit', user: 'advanced', path: '/pools', open: async (p) => (await withPool(p), await via('pool-actions', 'pool-edit')(p)), after: dropPool },
  { name: 'pools:delete', user: 'advanced', path: '/pools', open: async (p) => (await withPool(p), await via('pool-actions', 'pool-delete')(p)), after: dropPool },
  // The portal: a start that needs a booking (the GPU desktop has none now), the edit page's recreate, the bastion.
  { name: 'desktops:start-needs-booking', user: 'user', path: '/desktops', open: async (p) => (await p.locator(`[data-desktop-id="${ids.gpuDesktop}"]`).first().getByTestId('desktop-action-start').click(), dialog(p)), after: closeDialog },
  // A booking refused with the server's answer (eight weeks ahead no plan offers the profile): nothing is saved.
  {
    name: 'booking-calendar:refused',
    user: 'user',
    path: (ids) => `/booking/desktop/${ids.gpuDesktop}`,
    open: async (p) => {
      await via('booking-new')(p);
      const day = new Date();
      day.setDate(day.getDate() + 56);
      const at = (hh: number, mm: number) => `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')} ${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}`;
      await p.getByTestId('booking-start').fill(at(10, 0));
      await p.getByTestId('booking-end').fill(at(10, 30));
      await p.getByTestId('booking-save').click();
      await expect(p.getByTestId('booking-error')).toBeVisible();
    },
    after: closeDialog,
  },
  { name: 'desktop-edit:recreate', user: 'user', path: (ids) => `/domain/edit?id=${ids.desktop}`, open: via('edit-recreate'), after: closeDialog },
  {
    name: 'desktops:bastion',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      made.bastionWas = ((await pageCall(await other('admin'), 'GET', '/admin/settings/bastion')) as { enabled: boolean }).enabled;
      await pageCall(await other('admin'), 'PUT', '/admin/settings/bastion', { enabled: true });
      await p.reload();
      await settled(p);
      await via('desktop-menu', 'desktop-bastion')(p);
    },
    after: async (p) => {
      await p.keyboard.press('Escape');
      // As it was (a journey before this one in the same run may have left it on).
      if (made.bastionWas !== undefined) await pageCall(await other('admin'), 'PUT', '/admin/settings/bastion', { enabled: made.bastionWas });
      made.bastionWas = undefined;
    },
  },
  // The API token just made (its secret shown once), then its revoke (which takes it away).
  {
    name: 'profile:token-created',
    user: 'user',
    path: '/profile',
    open: async (p) => {
      await card(p, 'token-new').click();
      await p.getByTestId('token-name').fill('Accessibility token');
      await p.getByTestId('token-create').click();
      await expect(p.getByTestId('token-secret')).toBeVisible();
    },
    after: async (p) => {
      await p.getByTestId('token-created-done').click();
      await expect(p.getByRole('dialog')).toHaveCount(0);
    },
  },
  {
    name: 'profile:token-revoke',
    user: 'user',
    path: '/profile',
    open: async (p) => (await p.locator('[data-testid=token-row][data-name="Accessibility token"]').getByTestId('token-revoke').click(), dialog(p)),
    after: async (p) => {
      await p.getByTestId('confirm-token-revoke').click();
      await expect(p.locator('[data-testid=token-row][data-name="Accessibility token"]')).toHaveCount(0);
    },
  },
  // Two-factor turned on: its recovery codes; then off again with a code (the demo user signs in with a password only).
  {
    name: 'profile:recovery-codes',
    user: 'user',
    path: '/profile',
    open: async (p) => {
      await p.getByTestId('two-factor-enable').click();
      const secret = (await p.getByTestId('two-factor-secret').textContent())!;
      made.twoFactor = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret.replace(/\s+/g, '')), digits: 6, period: 30, algorithm: 'SHA1' });
      await p.getByTestId('two-factor-confirm-code').fill(made.twoFactor.generate());
      await p.getByTestId('two-factor-confirm').click();
      await expect(p.getByTestId('recovery-code')).toHaveCount(10);
    },
    // Two-factor stays on for the dialogs below (the console's reset turns it off).
    after: async (p) => {
      await p.getByTestId('recovery-done').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
    },
  },
  { name: 'profile:two-factor-regenerate', user: 'user', path: '/profile', open: via('two-factor-regenerate'), after: closeDialog },
  { name: 'profile:two-factor-disable', user: 'user', path: '/profile', open: via('two-factor-disable'), after: closeDialog },
  // The console's reset of the person's two-factor, confirmed: it is off again.
  {
    name: 'admin:users:two-factor-reset',
    user: 'admin',
    path: '/isard-admin/users',
    open: async (p) => {
      await p.getByTestId('users-search').fill('user');
      const row = p.locator('[data-testid=user-row][data-username=user]');
      await expect(row.getByTestId('user-two-factor')).toBeVisible();
      await row.getByTestId('user-actions').click();
      await via('user-two-factor-reset')(p);
    },
    after: async (p) => {
      await p.getByTestId('confirm-two-factor-reset').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
      await expect(p.locator('[data-testid=user-row][data-username=user]').getByTestId('user-two-factor')).toHaveCount(0);
      made.twoFactor = undefined;
    },
  },
  { name: 'deployments:new:confirm', user: 'advanced', path: '/deployments/new', open: async (p) => {
    await p.getByTestId('deployment-template').click();
    await p.getByRole('option', { name: 'Demo Linux' }).click();
    await p.getByTestId('deployment-form-name').fill('Accessibility review');
    await p.getByTestId('deployment-form-desktop-name').fill('Review desktop');
    await p.getByTestId('sharing-groups').check();
    await p.getByTestId('sharing-groups-search').fill('Students 1B');
    await p.getByRole('option', { name: 'Students 1B' }).click();
    await p.keyboard.press('Escape');
    await p.getByTestId('deployment-form-submit').click();
    await expect(p.getByTestId('deployment-confirm-count')).toBeVisible();
  }, after: async (p) => {
    await p.getByTestId('deployment-confirm').getByRole('button', { name: 'Cancel' }).click();
    await expect(p.getByRole('dialog')).toHaveCount(0);
  } },
  // The one running desktop: the videowall's enlarged screen, the quota it holds, the console's force stop from its list and
  // from its page (which stops it).
  {
    name: 'deployment:videowall:enlarged',
    user: 'advanced',
    path: (ids) => `/deployment/${ids.deployment}/videowall`,
    open: async (p) => {
      await classDesktopRunning();
      await p.reload();
      await p.locator(`[data-testid=videowall-tile][data-desktop-id="${ids.classDesktop}"]`).getByTestId('videowall-enlarge').click();
      await dialog(p);
      await expect(p.getByTestId('videowall-enlarged-screen')).toHaveAttribute('data-status', /connected|error|disconnected/, { timeout: scaled(30_000) });
    },
    after: closeDialog,
  },
  {
    name: 'desktops:quota-held',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      await classDesktopRunning();
      await p.locator(`[data-desktop-id="${ids.desktop}"]`).first().getByTestId('desktop-action-start').click();
      await expect(p.getByTestId('quota-held')).toBeVisible();
    },
    after: closeDialog,
  },
  // A temporary desktop asked for while the class desktop holds the running quota: the server makes it, its start is
  // refused and it is removed; the refusal is the dialog that names the running desktop, with its stop.
  // "My desktop at sign-in": right after signing in, the dialog that says the desktop is being opened (its spinner
  // runs until the desktop is up: here the desktop named is not in the list, so it stays open for the scan).
  {
    name: 'desktops:sign-in-opening',
    user: 'user',
    path: '/desktops',
    busy: true,
    open: async (p) => {
      await p.route('**/api/v3/user/sign-in-desktop', (r) =>
        r.fulfill({ json: { open: 'group', group_default: true, opens: { desktop_id: 'not-in-the-list', name: 'Demo desktop', viewer: 'browser-vnc' } } }),
      );
      await p.getByTestId('user-menu').click();
      await p.getByTestId('logout').click();
      await loginPage(p).signIn('user');
      await expect(p.getByTestId('sign-in-opening-list')).toBeVisible();
    },
    after: async (p) => {
      await p.unroute('**/api/v3/user/sign-in-desktop');
      await p.getByTestId('sign-in-opening-list').click();
      await expect(p.getByRole('dialog')).toHaveCount(0);
    },
  },
  {
    name: 'desktops:temporary-quota-held',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      await classDesktopRunning();
      await p.getByTestId('new-temporary').click();
      await p.getByTestId('temporary-template').filter({ hasText: 'Demo Linux' }).click();
      await p.getByTestId('temporary-create').click();
      await expect(p.getByTestId('quota-held')).toBeVisible();
      await expect(p.getByRole('dialog')).toHaveCount(1);
    },
    after: async (p) => {
      await expect(async () => {
        await p.keyboard.press('Escape');
        await expect(p.getByRole('dialog')).toHaveCount(0, { timeout: scaled(2_000) });
      }).toPass({ timeout: scaled(20_000) });
    },
  },
  {
    name: 'admin:desktops:force-stop',
    user: 'admin',
    path: '/isard-admin/desktops',
    open: async (p) => {
      await classDesktopRunning();
      await p.reload();
      await p.locator('[data-testid=desktop-row][data-status=Started]').first().getByTestId('desktop-actions').click();
      await via('desktop-force-stop')(p);
    },
    after: closeDialog,
  },
  {
    name: 'admin:desktop-page:force-stop',
    user: 'admin',
    path: (ids) => `/isard-admin/desktops/${ids.classDesktop}`,
    open: async (p) => {
      await classDesktopRunning();
      await p.reload();
      await via('desktop-page-force-stop')(p);
    },
    after: async (p) => {
      await p.getByTestId('desktop-page-confirm-confirm').click().catch(() => undefined);
      await classDesktopStopped();
    },
  },
  // The console.
  {
    name: 'admin:users:import-preview',
    user: 'admin',
    path: '/isard-admin/users',
    open: async (p) => {
      await via('users-import')(p);
      await p.getByTestId('import-text').fill('username,name,email,role,group,password\na11y-one,One Person,one@example.org,user,default-students-1a,\n,No name,bad,nobody,,');
      await p.getByTestId('import-check').click();
      await expect(p.getByTestId('import-preview')).toBeVisible();
    },
    after: closeDialog,
  },
  { name: 'admin:hypervisors:mark-down', user: 'admin', path: '/isard-admin/hypervisors', open: async (p) => (await remoteHostShown(p, 1), await lab(p).getByTestId('hypervisor-mark-down').click(), dialog(p)), after: closeDialog },
  {
    name: 'admin:hypervisors:remove',
    user: 'admin',
    path: '/isard-admin/hypervisors',
    open: async (p) => (await remoteHostShown(p, 0), await lab(p).getByTestId('hypervisor-remove').click(), dialog(p)),
    after: async (p) => {
      await closeDialog(p);
      await p.unroute('**/api/v3/admin/hypervisors');
    },
  },
  // A stored provider: its test with the preview of a sign-in, the preview a redirect test comes back to, its delete (which deletes it).
  {
    name: 'admin:identity_providers:test',
    user: 'admin',
    path: '/isard-admin/identity_providers',
    open: async (p) => {
      await provider(p);
      await p.route('**/api/v3/admin/identity-providers/*/test', (route) => route.fulfill({ json: { preview: PREVIEW } }));
      await p.locator('[data-testid=idp-row][data-name="Accessibility directory"]').getByTestId('idp-test-open').click();
      await p.getByTestId('idp-test-username').fill('tina');
      await p.getByTestId('idp-test-password').fill('not-a-real-password');
      await p.getByTestId('idp-test-run').click();
      await expect(p.getByTestId('idp-test').getByTestId('idp-preview')).toBeVisible();
    },
    after: async (p) => {
      await p.unroute('**/api/v3/admin/identity-providers/*/test');
      await closeDialog(p);
    },
  },
  {
    name: 'admin:identity_providers:preview',
    user: 'admin',
    path: '/isard-admin/identity_providers',
    open: async (p) => {
      const id = await provider(p);
      await p.route('**/api/v3/admin/identity-providers/previews/*', (route) => route.fulfill({ json: { ...PREVIEW, rule: null, outcome: 'refused', group_id: null, category_id: null, role: null, reason: 'identity_not_allowed' } }));
      await p.goto(`/isard-admin/identity_providers?preview=a11y-preview&provider=${id}`);
      await expect(p.getByTestId('idp-returned').getByTestId('idp-preview')).toBeVisible();
    },
    after: async (p) => {
      await p.getByTestId('idp-returned-close').click().catch(() => undefined);
      await p.unroute('**/api/v3/admin/identity-providers/previews/*');
    },
  },
  {
    name: 'admin:identity_providers:delete',
    user: 'admin',
    path: '/isard-admin/identity_providers',
    open: async (p) => (await provider(p), await via('idp-delete')(p)),
    after: async (p) => {
      await p.getByTestId('idp-delete-confirm').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
      if (made.provider) await p.request.fetch(`/api/v3/admin/identity-providers/${made.provider}`, { method: 'DELETE', headers: { authorization: `Bearer ${await sessionOf(p)}` } });
      made.provider = undefined;
    },
  },
  {
    name: 'admin:shutdown_policies:edit',
    user: 'admin',
    path: '/isard-admin/shutdown_policies',
    open: async (p) => {
      made.policy = ((await pageCall(p, 'POST', '/admin/shutdown_policies', { name: 'Accessibility policy', kind: 'group', target: 'default-students-1a', max_time: 120, enabled: false })) as { id: string }).id;
      await p.reload();
      await settled(p);
      await via('policy-edit')(p);
    },
    after: async (p) => {
      await p.keyboard.press('Escape');
      if (made.policy) await pageCall(p, 'DELETE', `/admin/shutdown_policies/${made.policy}`);
      made.policy = undefined;
    },
  },
  // A download kept slow: its job runs while the cancel is asked; the cancel then stops it.
  {
    name: 'admin:jobs:cancel',
    user: 'admin',
    path: '/isard-admin/jobs',
    open: async (p) => {
      made.files = await startMediaFileServer(join(process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'test-cache', 'images'), 'demo.iso'));
      made.files.rate.bytesPerSecond = 16 * 1024;
      made.media = ((await pageCall(p, 'POST', '/media', { name: 'Accessibility installer', url: `${made.files.base}/throttled.iso`, kind: 'iso' })) as { id: string }).id;
      const row = p.locator('[data-testid=job-row][data-kind=media_download][data-status=running]').filter({ hasText: 'Accessibility installer' });
      await expect(row).toBeVisible({ timeout: scaled(30_000) });
      await row.getByRole('button').last().click();
      await dialog(p);
    },
    after: async (p) => {
      await p.getByTestId('job-cancel-confirm').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
      if (made.media) await pageCall(p, 'DELETE', `/media/${made.media}`).catch(() => undefined);
      await made.files?.close();
      made.files = made.media = undefined;
    },
  },
  // A file no record owns in the storage folder: the check lists it, its removal asks first (and removes it).
  {
    name: 'admin:storage:orphans',
    user: 'admin',
    path: '/isard-admin/storage',
    open: async (p) => {
      const name = `a11y-orphan-${Date.now().toString(36)}.qcow2`;
      mkdirSync(join(dataDir, 'storage', 'desktops'), { recursive: true });
      made.orphan = join(dataDir, 'storage', 'desktops', name);
      writeFileSync(made.orphan, 'a file no record owns');
      await p.getByTestId('storage-check-run').click();
      const orphan = p.locator(`[data-testid=storage-orphan][data-path="desktops/${name}"]`);
      await expect(orphan).toBeVisible({ timeout: scaled(30_000) });
      const all = p.getByTestId('storage-orphans').getByRole('checkbox').first();
      if (await all.isChecked()) await all.click();
      await orphan.getByRole('checkbox').check();
      await via('storage-orphans-remove')(p);
    },
    after: async (p) => {
      await p.getByTestId('storage-orphans-confirm').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
      if (made.orphan) rmSync(made.orphan, { force: true });
      made.orphan = undefined;
    },
  },
  // A booking's end announced live (the message dialog): the frame the server sends, put on the page's own socket
  // (a real booking's warning comes minutes after a start, account.spec.ts waits for one).
  {
    name: 'desktops:live-message',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      const send = await liveSocket(p);
      const end = new Date(Date.now() + 5 * 60_000);
      const msg = { type: 'warning', msg_code: BOOKING_END_MSG_CODE, params: { date: formatBookingDate(end), minutes: 5, name: 'GPU desktop', desktop_id: ids.gpuDesktop } };
      // Sent again until the portal listens (its listener comes with the first signed-in screen).
      await expect(async () => {
        if (!(await p.getByTestId('message-dialog').count())) send('msg', msg);
        await expect(p.getByTestId('message-dialog').first()).toBeVisible({ timeout: scaled(3_000) });
      }).toPass({ timeout: scaled(30_000) });
    },
    after: async (p) => {
      for (const close of await p.getByTestId('message-dialog-close').all()) await close.click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
    },
  },
  // A running desktop's reset and a running temporary desktop's delete: the list as the server would give it with one
  // started (the quota the class desktop holds leaves no second start on this machine; the dialogs only ask).
  {
    name: 'desktops:reset',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      await desktopsShown(p, (list) => list.map((d) => (d.id === ids.desktop ? { ...d, state: 'Started' } : d)));
      await p.locator(`[data-desktop-id="${ids.desktop}"]`).first().getByTestId('desktop-menu').click();
      await via('desktop-reset')(p);
    },
    after: desktopsAsTheyAre,
  },
  {
    name: 'desktops:delete-temporary',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      await desktopsShown(p, (list) => {
        const d = list.find((x) => x.id === ids.desktop)!;
        return [...list, { ...d, id: 'a11y-temporary', name: 'Temporary desktop', type: 'nonpersistent', state: 'Started', tag: false }];
      });
      await p.locator('[data-desktop-id="a11y-temporary"]').first().getByTestId('desktop-action-delete').click();
      await dialog(p);
    },
    after: desktopsAsTheyAre,
  },
  // The direct link of the running class desktop, opened signed out: its reset asks first.
  {
    name: 'direct-viewer:reset',
    path: '/login',
    open: async (p) => {
      await classDesktopRunning();
      made.directLink = ids.classDesktop;
      const token = (await pageCall(await other('admin'), 'PUT', `/desktop/jumperurl_reset/${ids.classDesktop}`, { disabled: false })) as string;
      await p.goto(`/vw/${token}`);
      await expect(p.getByTestId('direct-reset')).toBeEnabled({ timeout: scaled(90_000) });
      await via('direct-reset')(p);
    },
    after: async (p) => {
      await closeDialog(p).catch(() => undefined);
      await pageCall(await other('admin'), 'PUT', `/desktop/jumperurl_reset/${ids.classDesktop}`, { disabled: true });
      made.directLink = undefined;
    },
  },
  // Storage: a disk's increase (roles above user), and the cancel of an increase under way (it lasts a moment on
  // this machine's disks: the list as the server gives it while one runs).
  { name: 'storage:increase', user: 'advanced', path: '/userstorage', open: async (p) => (await p.locator('[data-testid=storage-increase]:enabled').first().click(), dialog(p)), after: closeDialog },
  {
    name: 'storage:cancel-operation',
    user: 'advanced',
    path: '/userstorage',
    open: async (p) => {
      const me = ((await pageCall(p, 'GET', '/user')) as { id: string }).id;
      await p.route('**/api/v3/storage/ready', async (route) => {
        const res = await route.fetch();
        const disks = (await res.json()) as { type: string; status: string; operation: unknown }[];
        const i = disks.findIndex((d) => d.type !== 'template');
        if (i >= 0) disks[i] = { ...disks[i]!, status: 'maintenance', operation: { job_id: 'a11y-job', kind: 'increase', user_id: me, progress: 40, priority: 'low' } };
        await route.fulfill({ response: res, json: disks });
      });
      await p.reload();
      await settled(p);
      await via('storage-cancel')(p);
    },
    after: async (p) => {
      await closeDialog(p);
      await p.unroute('**/api/v3/storage/ready');
      await p.reload();
    },
  },
  // Media of Teo's, downloaded from a loopback server: the portal's share and delete, the console's owner and delete
  // (which deletes it).
  { name: 'media:share', user: 'advanced', path: '/media', open: async (p) => (await (await mediaRow(p))!.getByTestId('media-share').click(), dialog(p)), after: closeDialog },
  { name: 'media:delete', user: 'advanced', path: '/media', open: async (p) => (await (await mediaRow(p))!.getByTestId('media-delete').click(), dialog(p)), after: closeDialog },
  {
    name: 'admin:media:owner',
    user: 'admin',
    path: '/isard-admin/media',
    open: async (p) => {
      await mediaRow();
      await p.reload();
      await settled(p);
      await p.locator('[data-testid=media-row][data-name="Accessibility media"]').getByTestId('media-actions').click();
      // (The dialog's own root carries the same test id: the menu's item.)
      await p.locator('[role=menuitem][data-testid=media-owner]').click();
      await dialog(p);
    },
    after: closeDialog,
  },
  {
    name: 'admin:media:delete',
    user: 'admin',
    path: '/isard-admin/media',
    open: async (p) => {
      await mediaRow();
      await p.reload();
      await settled(p);
      await p.locator('[data-testid=media-row][data-name="Accessibility media"]').getByTestId('media-actions').click();
      // (The dialog's own root carries the same test id: the menu's item.)
      await p.locator('[role=menuitem][data-testid=media-delete]').click();
      await dialog(p);
    },
    after: async (p) => {
      await p.getByTestId('media-delete-confirm').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
      if (made.media) await pageCall(p, 'DELETE', `/media/${made.media}`).catch(() => undefined);
      await made.files?.close();
      made.files = made.media = undefined;
    },
  },
  // A person's password reset from the console (a person of the scan's own, deleted after): the result with the
  // one-time password and the credentials sheet.
  {
    name: 'admin:users:reset-password-result',
    user: 'admin',
    path: '/isard-admin/users',
    open: async (p) => {
      made.person = await scanPerson(p);
      await p.getByTestId('users-search').fill(SCAN_PERSON);
      const row = p.locator(`[data-testid=user-row][data-username="${SCAN_PERSON}"]`);
      await row.getByTestId('user-actions').click();
      await via('user-reset-password')(p);
      await p.getByTestId('accounts-run').click();
      await expect(p.getByTestId('accounts-result')).toBeVisible();
    },
    after: async (p) => {
      await p.getByTestId('accounts-close').click().catch(() => undefined);
      await expect(p.getByRole('dialog')).toHaveCount(0);
      if (made.person) await pageCall(p, 'POST', '/admin/users/bulk', { ids: [made.person], action: 'delete' });
      made.person = undefined;
    },
  },
];

/** Frames put on the page's live socket as if the server sent them (the socket is opened again through the route). */
async function liveSocket(page: Page) {
  let ws: WebSocketRoute | undefined;
  await page.routeWebSocket((url) => url.pathname.startsWith(SOCKET_PATH), (route) => {
    route.connectToServer();
    ws = route;
  });
  await page.reload();
  await settled(page);
  await expect.poll(() => Boolean(ws), { timeout: scaled(30_000) }).toBe(true);
  // socket.io's frame of an event in a namespace (engine.io message 4, socket.io event 2); payloads travel as JSON text.
  return (event: string, payload: unknown) => ws!.send(`42${SOCKET_NAMESPACE},${JSON.stringify([event, JSON.stringify(payload)])}`);
}

/** The page's desktops list as the server gives it, changed by `change` (until desktopsAsTheyAre). */
async function desktopsShown(page: Page, change: (list: Record<string, unknown>[]) => Record<string, unknown>[]) {
  await page.unroute('**/api/v3/user/desktops');
  await page.route('**/api/v3/user/desktops', async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, json: change((await res.json()) as Record<string, unknown>[]) });
  });
  await page.reload();
  await settled(page);
}
async function desktopsAsTheyAre(page: Page) {
  await closeDialog(page);
  await page.unroute('**/api/v3/user/desktops');
  await page.reload();
  await settled(page);
}

/** Teo's media, downloaded from a loopback server (made once); on his media page (`page`), its row. */
async function mediaRow(page?: Page) {
  const teo = await other('advanced');
  if (!made.media) {
    made.files = await startMediaFileServer(join(process.env.VDI_TEST_IMAGES ?? join(root, 'data', 'test-cache', 'images'), 'demo.iso'));
    made.media = ((await pageCall(teo, 'POST', '/media', { name: 'Accessibility media', url: `${made.files.base}/demo.iso`, kind: 'iso' })) as { id: string }).id;
  }
  const status = async () => ((await pageCall(teo, 'GET', '/media')) as { id: string; status: string }[]).find((m) => m.id === made.media)?.status;
  await expect.poll(status, { message: 'the media downloaded', timeout: scaled(60_000) }).toBe('Downloaded');
  if (!page) return;
  const row = page.locator('[data-testid=media-row][data-name="Accessibility media"]');
  if (!(await row.count())) {
    await page.reload();
    await settled(page);
  }
  await expect(row).toHaveAttribute('data-status', 'Downloaded');
  return row;
}

const SCAN_PERSON = 'a11y-reset-person';
/** A person of the scan's own in the group "E2E accounts" (no journey counts them), made through the admin's page. */
async function scanPerson(page: Page) {
  const groups = (await pageCall(page, 'GET', `/admin/groups?search=${encodeURIComponent('E2E accounts')}`)) as { items: { id: string; name: string }[] };
  const group = groups.items.find((g) => g.name === 'E2E accounts')?.id ?? ((await pageCall(page, 'POST', '/admin/groups', { name: 'E2E accounts', category: 'default' })) as { id: string }).id;
  const res = await page.request.post('/api/v3/admin/users', {
    headers: { authorization: `Bearer ${await sessionOf(page)}` },
    data: { username: SCAN_PERSON, name: 'Reset Person', email: `${SCAN_PERSON}@example.org`, role: 'user', category: 'default', group, password: 'a11y-Pass-2026' },
  });
  if (res.ok()) return ((await res.json()) as { id: string }).id;
  const users = (await pageCall(page, 'GET', `/admin/users?search=${SCAN_PERSON}`)) as { items: { id: string; username: string }[] };
  return users.items.find((u) => u.username === SCAN_PERSON)!.id;
}

export const SCREENS: Screen[] = [
  { name: 'sign-in', path: '/login', route: 'login' },
  { name: 'sign-in:category', path: '/login/form/default', route: 'login_category' },
  { name: 'sign-in:custom-url', path: '/login/default', route: 'login_custom_url' },
  { name: 'register', path: '/register', route: 'register' },
  { name: 'forgot-password', path: '/forgot-password', route: 'forgot-password' },
  { name: 'reset-password', path: '/reset-password?token=x', route: 'reset-password' },
  { name: 'verify-email', path: '/verify-email?token=x', route: 'verify-email' },
  { name: 'disclaimer', path: '/disclaimer', route: 'disclaimer' },
  // Without a step token: their "sign in again" state (the journeys of two-factor.spec.ts shoot the others).
  { name: 'two-factor', path: '/two-factor', route: 'two-factor' },
  { name: 'two-factor-enrol', path: '/two-factor/enrol', route: 'two-factor-enrol' },
  { name: 'maintenance', path: '/maintenance', route: 'maintenance' },
  { name: 'export-user', path: '/export-user', route: 'export-user' },
  { name: 'error', path: '/error/404', route: 'error' },
  { name: 'direct-viewer:unknown-link', path: '/vw/not-a-valid-code-0000000000000000', route: 'direct_viewer' },
  { name: 'desktops:cards', user: 'user', path: '/desktops', route: 'desktops' },
  { name: 'desktops:table', user: 'user', path: '/desktops', open: async (p) => p.getByTestId('view-table').click() },
  { name: 'desktops:menu', user: 'user', path: '/desktops', open: async (p) => card(p, 'desktop-menu').click() },
  {
    name: 'desktops:direct-link',
    user: 'user',
    path: '/desktops',
    open: async (p) => {
      await card(p, 'desktop-menu').click();
      await p.getByTestId('desktop-direct-link').click();
      await dialog(p);
    },
  },
  { name: 'desktops:new-temporary', user: 'user', path: '/desktops', open: async (p) => (await p.getByTestId('new-temporary').click(), dialog(p)) },
  { name: 'desktops:user-menu', user: 'user', path: '/desktops', open: async (p) => p.getByTestId('user-menu').click() },
  { name: 'new-desktop', user: 'user', path: '/desktops/new', route: 'new_desktop' },
  { name: 'desktop-edit', user: 'user', path: (ids) => `/domain/edit?id=${ids.desktop}`, route: 'edit-domain' },
  { name: 'templates', user: 'admin', path: '/templates', route: 'templates' },
  { name: 'templates:share', user: 'admin', path: '/templates', open: async (p) => (await card(p, 'template-share-button').click(), dialog(p)) },
  { name: 'templates:new', user: 'advanced', path: '/templates/new', route: 'new_template' },
  { name: 'templates:duplicate', user: 'admin', path: '/templates/duplicate', route: 'duplicate_template' },
  { name: 'media', user: 'advanced', path: '/media', route: 'media' },
  { name: 'media:new', user: 'advanced', path: '/media/new', route: 'new_media' },
  { name: 'media:new-desktop', user: 'advanced', path: '/media/desktop/new', route: 'newfrommedia' },
  { name: 'storage', user: 'user', path: '/userstorage', route: 'storage' },
  { name: 'recycle-bin', user: 'advanced', path: '/recycleBins', route: 'recycleBins' },
  { name: 'recycle-bin:detail', user: 'advanced', path: (ids) => `/recyclebin/${ids.bin}`, route: 'recycleBin' },
  { name: 'deployments', user: 'advanced', path: '/deployments', route: 'deployments' },
  { name: 'deployments:new', user: 'advanced', path: '/deployments/new', route: 'new_deployment' },
  { name: 'pools', user: 'advanced', path: '/pools', route: 'pools' },
  { name: 'pools:new', user: 'advanced', path: '/pools', open: via('pools-new') },
  // The console's section of another feature's screen (app/AdminConsole.tsx: not in a sections.ts).
  { name: 'admin:desktop_pools', user: 'admin', path: '/isard-admin/desktop_pools' },
  { name: 'deployment', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, route: 'deployment' },
  { name: 'deployment:more', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}`, open: async (p) => p.getByTestId('deployment-more').click() },
  { name: 'deployment:videowall', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}/videowall`, route: 'deployment_videowall' },
  { name: 'deployment:edit', user: 'advanced', path: (ids) => `/deployment/${ids.deployment}/edit`, route: 'deploymentEdit' },
  { name: 'bookings', user: 'user', path: '/booking/summary', route: 'booking_summary' },
  { name: 'booking-calendar', user: 'user', path: (ids) => `/booking/desktop/${ids.gpuDesktop}`, route: 'booking' },
  { name: 'planner', user: 'admin', path: '/planning', route: 'planning' },
  { name: 'profile', user: 'user', path: '/profile', route: 'profile' },
  { name: 'api-reference', user: 'user', path: '/api-reference', route: 'api_reference' },
  { name: 'profile:two-factor', user: 'user', path: '/profile', open: async (p) => (await p.getByTestId('two-factor-enable').click(), await expect(p.getByTestId('two-factor-qr')).toBeVisible()) },
  { name: 'profile:password', user: 'user', path: '/profile', open: async (p) => (await p.getByTestId('open-password').click(), dialog(p)) },
  { name: 'viewers', user: 'user', path: '/viewers', route: 'viewers' },
  { name: 'viewer:no-ticket', path: '/viewer/vnc', route: 'viewer_vnc' },
  { name: 'rdp:no-ticket', user: 'user', path: '/rdp', route: 'Rdp' },
  // The viewer toolbar's panels (one toolbar for both viewers), on the RDP page without a desktop.
  { name: 'rdp:toolbar-clipboard', user: 'user', path: '/rdp', open: async (p) => (await p.getByTestId('viewer-clipboard').click(), dialog(p)) },
  { name: 'rdp:toolbar-keys', user: 'user', path: '/rdp', open: async (p) => (await p.getByTestId('viewer-keys').click(), await expect(p.getByTestId('viewer-keys-panel')).toBeVisible()) },
  { name: 'rdp:toolbar-display', user: 'user', path: '/rdp', open: async (p) => (await p.getByTestId('viewer-display').click(), await expect(p.getByTestId('viewer-display-menu')).toBeVisible()) },
  // The files panel without a desktop (its reason); with a desktop's folder listed, at desktop and phone width: viewer-files.spec.ts scans it.
  { name: 'rdp:toolbar-files', user: 'user', path: '/rdp', open: async (p) => (await p.getByTestId('viewer-files').click(), dialog(p)) },
  // The phone's menu: its button is there at phone width only.
  {
    name: 'rdp:toolbar-phone-menu',
    user: 'user',
    path: '/rdp',
    open: async (p) => {
      await p.setViewportSize({ width: 390, height: 844 });
      await p.getByTestId('viewer-menu').click();
      await expect(p.getByTestId('viewer-menu-dropdown')).toBeVisible();
    },
  },
  { name: 'migration', user: 'user', path: '/migration', route: 'migration' },
  ...adminSections().map((path): Screen => ({ name: `admin:${path}`, user: 'admin', path: `/isard-admin/${path}` })),
  { name: 'admin:reports:table', user: 'admin', path: '/isard-admin/reports', open: async (p) => (await p.getByTestId('report-sign-ins-table-tab').click(), await expect(p.getByTestId('report-sign-ins-table')).toBeVisible()) },
  { name: 'admin:reports:storage-table', user: 'admin', path: '/isard-admin/reports', open: async (p) => (await p.getByTestId('report-storage-by-table-tab').click(), await expect(p.getByTestId('report-storage-by-table')).toBeVisible()) },
  { name: 'admin:desktop-page', user: 'admin', path: (ids) => `/isard-admin/desktops/${ids.desktop}`, open: async (p) => expect(p.getByTestId('desktop-page-timeline')).toBeVisible() },
  { name: 'admin:desktop-page:move', user: 'admin', path: (ids) => `/isard-admin/desktops/${ids.desktop}`, open: async (p) => (await p.getByTestId('desktop-page-move').click(), dialog(p)) },
  { name: 'admin:desktop-page:confirm', user: 'admin', path: (ids) => `/isard-admin/desktops/${ids.desktop}`, open: async (p) => (await p.getByTestId('desktop-page-delete').click(), dialog(p)) },
  {
    name: 'admin:users:reset-passwords',
    user: 'admin',
    path: '/isard-admin/users',
    open: async (p) => {
      await p.getByTestId('user-select').first().click();
      await p.getByTestId('users-bulk-reset-passwords').click();
      await dialog(p);
    },
  },
  { name: 'admin:identity_providers:new', user: 'admin', path: '/isard-admin/identity_providers', open: async (p) => (await p.getByTestId('idp-new').first().click(), dialog(p)) },
  ...DIALOGS,
  {
    name: 'admin:identity_providers:mapping',
    user: 'admin',
    path: '/isard-admin/identity_providers',
    open: async (p) => {
      await p.getByTestId('idp-new').first().click();
      await dialog(p);
      await p.getByTestId('idp-tab-mapping').click();
      await p.getByTestId('idp-rule-add').click();
    },
  },  ...STATEFUL,
];
/**
 * Routes with no screen of their own to scan: the console (its sections are scanned one by one) and the hand-off of
 * a provider's sign-in (a spinner that leaves at once, for /desktops or the sign-in page).
 */
const NOT_SCANNED = new Set(['isard_admin', 'login_done']);

/** Desktop width first, then phone width; at each, both colour schemes on the same screen. */
const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
const SCHEMES = ['light', 'dark'] as const;
const SCHEME_KEY = 'mantine-color-scheme-value';
/** Not a WCAG rule, but kept: one banner landmark on every screen, whatever is open. */
const ONE_BANNER = 'landmark-no-duplicate-banner';
const report = join(import.meta.dirname, '..', '..', 'artifacts', 'accessibility');

/** One sign-in per demo user for the set-up calls (each sign-in ends the user's earlier session). */
const tokens = new Map<string, string>();
async function tokenOf(request: APIRequestContext, user: string) {
  if (!tokens.has(user)) tokens.set(user, await apiToken(request, user));
  return tokens.get(user)!;
}

async function call(request: APIRequestContext, user: string, method: string, path: string, data?: unknown) {
  const token = await tokenOf(request, user);
  const res = await request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${token}` } });
  expect(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`).toBe(true);
  return res.json().catch(() => null);
}

/** The page of a demo user ('' : signed out), made once; it keeps its session alive (the portal renews it). */
const pages = new Map<string, Page>();
async function pageOf(browser: Browser, request: APIRequestContext, user = '') {
  let page = pages.get(user);
  if (page && !page.isClosed()) return page;
  // Less motion asked (the portal honours it): a screen, a dialog or a new colour scheme is still as soon as it is drawn,
  // not after its transitions; the colours read are the same.
  const context = await browser.newContext({ reducedMotion: 'reduce' });
  await context.addInitScript(([key]) => {
    if (!localStorage.getItem(key)) localStorage.setItem(key, 'light');
  }, [SCHEME_KEY] as const);
  if (user) {
    const url = new URL(test.info().project.use.baseURL!);
    // A session of its own, new: the set-up's may be near its end (this one ends it).
    await context.addCookies([{ name: 'isardvdi_session', value: encodeURIComponent(await apiToken(request, user)), domain: url.hostname, path: '/' }]);
  }
  page = await context.newPage();
  pages.set(user, page);
  return page;
}

/** Waits until the screen has drawn: no loader, nothing moving. */
async function settled(page: Page, opts: { busy?: boolean } = {}) {
  await page.waitForLoadState('domcontentloaded');
  await expect(page.locator('main, h1, [role=dialog]').first()).toBeVisible({ timeout: scaled(30_000) });
  if (!opts.busy) await expect(page.locator('.mantine-Loader-root, [data-testid$=-loading]')).toHaveCount(0, { timeout: scaled(30_000) });
  await stillScreen(page);
}

/** The colour scheme switched on the open screen, as the theme button of another tab does (Mantine follows the stored value). */
async function useScheme(page: Page, scheme: (typeof SCHEMES)[number], opts: { busy?: boolean } = {}) {
  await page.evaluate(
    ([key, value]) => {
      if (localStorage.getItem(key) === value && document.documentElement.getAttribute('data-mantine-color-scheme') === value) return;
      localStorage.setItem(key, value);
      window.dispatchEvent(new StorageEvent('storage', { key, newValue: value, storageArea: localStorage }));
    },
    [SCHEME_KEY, scheme] as const,
  );
  await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', scheme);
  await settled(page, opts);
}

let ids: Ids;
/** The running test's browser and request (the states' steps done as another person open that person's page). */
const run = {} as { browser: Browser; request: APIRequestContext };

/**
 * The states a desktop rests in. A desktop on its way (starting, stopping, waiting for its address: a journey before
 * this one left it so) changes its card while the scan reads it — a loader, then buttons fading in — and once failed
 * "desktops:cards" on a loaded machine: the screens are scanned when every desktop of the demo users rests.
 */
const RESTING = new Set<TDesktopState>(['stopped', 'started', 'paused', 'failed', 'notCreated', 'maintenance', 'unknown']);

test.describe('accessibility', () => {
  test.beforeAll(async ({ request }) => {
    test.setTimeout(scaled(420_000));
    const templates = (await call(request, 'advanced', 'GET', '/user/templates/allowed/all')) as { id: string; name: string }[];
    const template = templates.find((x) => x.name === 'Demo Linux')!.id;
    const { id: deployment } = (await call(request, 'advanced', 'POST', '/deployments', {
      name: `Accessibility class ${Date.now()}`,
      desktop_name: 'Accessibility desktop',
      template_id: template,
      visible: false,
      allowed: { groups: ['default-students-1b'], users: false },
    })) as { id: string };
    // A desktop of Teo's in his recycle bin.
    const made = (await call(request, 'advanced', 'POST', '/persistent_desktop', { name: `Binned ${Date.now()}`, template_id: template })) as { id: string };
    await call(request, 'advanced', 'DELETE', `/desktop/${made.id}`);
    const bin = ((await call(request, 'advanced', 'GET', '/recycle_bin/item_count/user')) as { id: string }[])[0]!.id;
    const desktops = (await call(request, 'user', 'GET', '/user/desktops')) as { id: string; name: string; state: string }[];
    const desktop = desktops.find((d) => d.state.toLowerCase() === 'stopped' && d.name !== 'GPU desktop')!.id;
    const gpuDesktop = desktops.find((d) => d.name === 'GPU desktop')!.id;
    for (const user of ['user', 'advanced']) {
      await expect
        .poll(async () => ((await call(request, user, 'GET', '/user/desktops')) as { name: string; state: string }[]).filter((d) => !RESTING.has(desktopState(d.state))).map((d) => `${d.name}: ${d.state}`), {
          message: `${user}'s desktops at rest`,
          timeout: scaled(120_000),
        })
        .toEqual([]);
    }
    // The class's desktop of the demo user (hidden from them: the class is not shown), made by the deployment's job.
    const me = (await call(request, 'user', 'GET', '/user')) as { id: string };
    let classDesktop = '';
    await expect
      .poll(async () => {
        const d = ((await call(request, 'advanced', 'GET', `/deployment/${deployment}`)) as { desktops: { id: string; user: string; state: string }[] }).desktops.find((x) => x.user === me.id);
        classDesktop = d?.id ?? '';
        return d?.state.toLowerCase();
      }, { message: 'the class desktop of the demo user made', timeout: scaled(120_000) })
      .toBe('stopped');
    ids = { deployment, bin, desktop, gpuDesktop, classDesktop };
  });
  // Later journeys start from Teo's empty deployments and the students' own desktops: the class goes.
  test.afterAll(async ({ request }) => {
    for (const page of pages.values()) await page.context().close();
    pages.clear();
    tokens.clear();
    // What a state left when its scan stopped half-way.
    await made.files?.close();
    if (made.orphan) rmSync(made.orphan, { force: true });
    for (const path of [made.provider && `/admin/identity-providers/${made.provider}`, made.policy && `/admin/shutdown_policies/${made.policy}`, made.media && `/media/${made.media}`]) {
      if (path) await call(request, 'admin', 'DELETE', path).catch(() => undefined);
    }
    if (made.twoFactor) await call(request, 'admin', 'DELETE', `/admin/users/${((await call(request, 'admin', 'GET', '/admin/users?search=user&per_page=500')) as { items: { id: string; username: string }[] }).items.find((u) => u.username === 'user')!.id}/two-factor`).catch(() => undefined);
    if (made.directLink) await call(request, 'admin', 'PUT', `/desktop/jumperurl_reset/${made.directLink}`, { disabled: true }).catch(() => undefined);
    if (made.person) await call(request, 'admin', 'POST', '/admin/users/bulk', { ids: [made.person], action: 'delete' }).catch(() => undefined);
    if (made.bastionWas !== undefined) await call(request, 'admin', 'PUT', '/admin/settings/bastion', { enabled: made.bastionWas }).catch(() => undefined);
    if (ids?.classDesktop) {
      await call(request, 'admin', 'POST', '/admin/desktops/force_stop', { ids: [ids.classDesktop] }).catch(() => undefined);
      await expect.poll(async () => ((await call(request, 'admin', 'GET', `/admin/desktops/${ids.classDesktop}`)) as { status: string }).status, { timeout: scaled(60_000) }).toBe('Stopped');
    }
    if (ids?.deployment) await call(request, 'advanced', 'DELETE', `/deployments/${ids.deployment}`).catch(() => undefined);
  });

  test('every route of the portal is in the scan', () => {
    const covered = new Set(SCREENS.map((s) => s.route).filter(Boolean));
    const missing = mounted(ROUTES)
      .map((r) => r.name)
      .filter((n) => !covered.has(n) && !NOT_SCANNED.has(n));
    expect(missing, 'routes with a screen but no line in SCREENS').toEqual([]);
  });

  test('a person who asks for less motion gets no transitions (WCAG 2.3.3)', async ({ browser, request }) => {
    const page = await pageOf(browser, request, 'user');
    await page.goto('/desktops');
    await settled(page);
    // (a transition of 0.01 ms is none to see; it still ends, as components wait for)
    const moving = () => page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => getComputedStyle(e).transitionDuration.split(',').some((d) => parseFloat(d) > 0.001)).length);
    // (without the wish the same screen has its transitions: what is counted is there to count)
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    expect(await moving(), 'elements with a transition, as usual').toBeGreaterThan(0);
    await page.emulateMedia({ reducedMotion: 'reduce' });
    expect(await moving(), 'elements with a transition, less motion asked').toBe(0);
    // Only what declares a transition gets the short one: a change of colours starts none on the rest (when every
    // element had one, a colour scheme switched took a second to settle, each element a frame after its parent).
    const started = await page.evaluate(
      ([key, value]) =>
        new Promise<number>((done) => {
          // (counted in the frame after the scheme is applied)
          new MutationObserver((_, seen) => (seen.disconnect(), requestAnimationFrame(() => done(document.getAnimations().length)))).observe(document.documentElement, { attributeFilter: ['data-mantine-color-scheme'] });
          localStorage.setItem(key, value);
          window.dispatchEvent(new StorageEvent('storage', { key, newValue: value, storageArea: localStorage }));
        }),
      [SCHEME_KEY, 'dark'] as const,
    );
    expect(started, 'transitions started by a colour scheme switch, less motion asked').toBeLessThan(20);
    await useScheme(page, 'light');
  });

  for (const screen of SCREENS) {
    test(`${screen.name}: 0 critical, 0 serious`, async ({ browser, request }) => {
      test.setTimeout(scaled(180_000));
      Object.assign(run, { browser, request });
      const page = await pageOf(browser, request, screen.user);
      const found: { variant: string; id: string; impact: string; help: string; nodes: string[] }[] = [];
      // Opened once (its dialog too), then scanned at each width as the window is resized.
      const widths = screen.phone ? WIDTHS.slice(1) : WIDTHS;
      await page.setViewportSize(widths[0]!);
      try {
        await page.goto(typeof screen.path === 'string' ? screen.path : screen.path(ids));
        await settled(page);
        if (screen.open) {
          await screen.open(page);
          await settled(page, screen);
        }
        for (const size of widths) {
          if (size !== widths[0]) {
            await page.setViewportSize(size);
            await settled(page, screen);
          }
          for (const scheme of size.width === WIDTHS[0].width ? SCHEMES : [...SCHEMES].reverse()) {
            await useScheme(page, scheme, screen);
            const first = scheme === (size.width === WIDTHS[0].width ? SCHEMES[0] : SCHEMES[1]);
            // Every rule in the first scheme scanned at each width, with one more: one banner whatever is open (a
            // dialog's title bar drawn as <header> was a second one; axe rates it moderate). In the second scheme, the
            // rules that read colours (the page's structure, names and roles are the same in both).
            for (const violation of await axeViolations(page, first ? undefined : COLOUR_RULES, first ? [ONE_BANNER] : [])) {
              if (violation.impact !== 'critical' && violation.impact !== 'serious' && violation.id !== ONE_BANNER) continue;
              found.push({
                variant: `${scheme}-${size.width}`,
                id: violation.id,
                impact: violation.impact ?? '',
                help: violation.help,
                nodes: violation.nodes.slice(0, 5).map((n) => `${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 2).join('')}`),
              });
            }
          }
        }
      } finally {
        await screen.after?.(page);
      }
      mkdirSync(report, { recursive: true });
      writeFileSync(join(report, `${screen.name.replace(/[^\w-]+/g, '_')}.json`), JSON.stringify(found, null, 2));
      expect(found, JSON.stringify(found, null, 2)).toEqual([]);
    });
  }
});
