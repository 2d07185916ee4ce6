import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { apiToken, scaled, showAsSaved, windowShot } from '../e2e/support';

// Screenshots a person looks at, of the screens the accessibility work changed: English and
// Catalan, light at desktop width and dark at phone width (artifacts/screenshots/a11y-*.png).

type Shot = { name: string; user?: string; path: string | (() => string); open?: (page: Page) => Promise<void> };

let binEntry = '';
let deployment = '';
let gpuDesktop = '';

const SHOTS: Shot[] = [
  { name: 'sign-in', path: '/login' },
  { name: 'forgot-password', path: '/forgot-password' },
  { name: 'desktops-user-menu', user: 'user', path: '/desktops', open: async (p) => p.getByTestId('user-menu').click() },
  { name: 'templates-tabs', user: 'admin', path: '/templates' },
  { name: 'media-tabs', user: 'advanced', path: '/media' },
  { name: 'storage', user: 'user', path: '/userstorage' },
  { name: 'recycle-bin', user: 'advanced', path: '/recycleBins' },
  {
    name: 'recycle-bin-restore-confirm',
    user: 'advanced',
    path: () => `/recyclebin/${binEntry}`,
    open: async (p) => {
      await p.getByTestId('bin-detail-restore').click();
      await expect(p.getByRole('dialog')).toBeVisible();
    },
  },
  { name: 'deployment-header', user: 'advanced', path: () => `/deployment/${deployment}` },
  { name: 'booking-calendar', user: 'user', path: () => `/booking/desktop/${gpuDesktop}` },
  { name: 'planner', user: 'admin', path: '/planning' },
];

const VARIANTS = [
  { lang: 'en-US', scheme: 'light', width: 1280, height: 800 },
  { lang: 'en-US', scheme: 'dark', width: 390, height: 844 },
  { lang: 'ca-ES', scheme: 'dark', width: 1280, height: 800 },
  { lang: 'ca-ES', scheme: 'light', width: 390, height: 844 },
] as const;

async function call(request: APIRequestContext, user: string, method: string, path: string, data?: unknown) {
  const res = await request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${await apiToken(request, user)}` } });
  expect(res.ok(), `${method} ${path}: ${res.status()}`).toBe(true);
  return res.json().catch(() => null);
}

test.describe('accessibility screenshots', () => {
  test.beforeAll(async ({ request }) => {
    test.setTimeout(scaled(120_000));
    const templates = (await call(request, 'advanced', 'GET', '/user/templates/allowed/all')) as { id: string; name: string }[];
    const template = templates.find((x) => x.name === 'Demo Linux')!.id;
    deployment = ((await call(request, 'advanced', 'POST', '/deployments', {
      name: `Shots class ${Date.now()}`,
      description: 'Monday networks lab',
      desktop_name: 'Shots desktop',
      template_id: template,
      visible: false,
      allowed: { groups: ['default-students-1b'], users: false },
    })) as { id: string }).id;
    const made = (await call(request, 'advanced', 'POST', '/persistent_desktop', { name: `Old notes ${Date.now()}`, template_id: template })) as { id: string };
    await call(request, 'advanced', 'DELETE', `/desktop/${made.id}`);
    binEntry = ((await call(request, 'advanced', 'GET', '/recycle_bin/item_count/user')) as { id: string }[])[0]!.id;
    gpuDesktop = ((await call(request, 'user', 'GET', '/user/desktops')) as { id: string; name: string }[]).find((d) => d.name === 'GPU desktop')!.id;
  });

  // Later journeys start from Teo's empty deployments and the students' quotas.
  test.afterAll(async ({ request }) => {
    if (deployment) await call(request, 'advanced', 'DELETE', `/deployments/${deployment}`).catch(() => undefined);
  });

  for (const s of SHOTS) {
    test(s.name, async ({ page, request }) => {
      test.setTimeout(scaled(180_000));
      if (s.user) {
        const token = await apiToken(request, s.user);
        await page.context().addCookies([{ name: 'isardvdi_session', value: encodeURIComponent(token), domain: '127.0.0.1', path: '/' }]);
      }
      for (const v of VARIANTS) {
        await page.setViewportSize({ width: v.width, height: v.height });
        // A signed-in person sees the language they saved: this one as saved (the demo account keeps its own).
        if (s.user) await showAsSaved(page, v.lang.slice(0, 2));
        await page.addInitScript(
          ([scheme, lang]) => {
            localStorage.setItem('mantine-color-scheme-value', scheme);
            localStorage.setItem('vdi.language', lang);
          },
          [v.scheme, v.lang] as const,
        );
        await page.goto(typeof s.path === 'string' ? s.path : s.path());
        await expect(page.locator('h1').first()).toBeVisible({ timeout: scaled(30_000) });
        await expect(page.locator('.mantine-Loader-root, [data-testid$=-loading]')).toHaveCount(0, { timeout: scaled(30_000) });
        if (s.open) await s.open(page);
        await windowShot(page, `a11y-${s.name}-${v.lang.slice(0, 2)}-${v.scheme}-${v.width}`);
      }
    });
  }
});
