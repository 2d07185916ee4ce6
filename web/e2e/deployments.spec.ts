import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import en from '../src/i18n/locales/en.json' with { type: 'json' };
import enDep from '../src/i18n/locales/deployments/en.json' with { type: 'json' };
import esDep from '../src/i18n/locales/deployments/es.json' with { type: 'json' };
import esMain from '../src/i18n/locales/es.json' with { type: 'json' };
import { apiToken, litPixels, notice, scaled, signInAs, windowShot as shot } from './support';

// `advanced` (Teo) rolls the Demo Linux template out to Students 1B (Nora, Iker, and Uma by her
// secondary group: 3 desktops), starts them, watches them on the videowall, hides and shows the
// deployment, recreates, downloads the direct links, adds a co-owner, lets the students recreate,
// and deletes it. A second deployment for Sara (student01) alone shows the student's side. Nothing
// else in the e2e runs touches these deployments.

const t = enDep.deployments;
const card = (page: Page, name: string) => page.locator(`[data-testid=deployment-card][data-name="${name}"]`);
const desktopCard = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);

async function api(request: APIRequestContext, user: string) {
  const headers = { authorization: `Bearer ${await apiToken(request, user)}` };
  return {
    get: async (path: string) => {
      const res = await request.get(`/api/v3${path}`, { headers });
      expect(res.ok(), `GET ${path}: ${res.status()}`).toBe(true);
      return res.json();
    },
    send: async (method: 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown) => {
      const res = await request.fetch(`/api/v3${path}`, { method, data, headers });
      expect(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`).toBe(true);
      return res.json().catch(() => null);
    },
  };
}

async function demoTemplateId(client: Awaited<ReturnType<typeof api>>) {
  const templates = (await client.get('/user/templates/allowed/all')) as { id: string; name: string }[];
  return templates.find((x) => x.name === 'Demo Linux')!.id;
}

/** Selects a group or user in the allowed picker by typing (at least 2 letters). */
async function pick(page: Page, testId: string, typed: string, option: string, typeMore = t.allowed.type_more_other) {
  const search = page.getByTestId(testId);
  await search.click();
  await search.fill(typed.slice(0, 1));
  await expect(page.getByText(typeMore.replace('{{count}}', '2'))).toBeVisible();
  await search.fill(typed);
  await page.getByRole('option', { name: option }).click();
  await page.keyboard.press('Escape');
}

test.describe.serial('deployments', () => {
  test('a teacher rolls a template out to a group and runs the class with it', async ({ page, request }) => {
    test.setTimeout(scaled(8 * 60_000));
    // A retry starts as the first attempt did, with no deployment: what an attempt made goes first.
    const teo = await api(request, 'advanced');
    for (const d of (await teo.get('/deployments')) as { id: string }[]) await teo.send('DELETE', `/deployments/${d.id}/permanent`);
    // Seen creation progress, recorded as it happens (three desktops are made in well under a second).
    await page.addInitScript(() => {
      const w = window as unknown as { __creating: number[] };
      w.__creating = [];
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('[data-testid=deployment-creating]')) w.__creating.push(Number(el.getAttribute('data-percent')));
      }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-percent'] });
    });
    await signInAs(page, 'advanced');
    await page.getByTestId('navbar').getByTestId('nav-deployments').click();
    await expect(page).toHaveURL(/\/deployments$/);
    await expect(page.getByTestId('empty-state')).toContainText(t.empty_title);
    await shot(page, 'deployments-empty');

    // New: template, names, the group found by typing, the viewers.
    await page.getByTestId('deployment-new').click();
    await expect(page).toHaveURL(/\/deployments\/new$/);
    await page.getByTestId('deployment-template').click();
    await page.getByRole('option', { name: 'Demo Linux' }).click();
    await expect(page.getByTestId('deployment-template-preview')).toContainText('Demo Linux');
    await page.getByTestId('deployment-form-name').fill('Networks lab');
    await page.getByTestId('deployment-form-desktop-name').fill('Networks desktop');
    await page.getByTestId('deployment-form-description').fill('Monday class, first term');
    // Without users it is refused.
    await page.getByTestId('deployment-form-submit').click();
    await expect(page.getByTestId('deployment-users-error')).toHaveText(t.new.users_required);
    await page.getByTestId('sharing-groups').check();
    await expect(page.getByTestId('sharing-summary')).toHaveText(t.allowed.everyone_hint);
    await pick(page, 'sharing-groups-search', 'Stud', 'Students 1B');
    await expect(page.getByTestId('sharing-summary')).toHaveText(t.allowed.chosen_hint);
    // At least one viewer; an RDP viewer brings the VPN and warns that the videowall needs VNC.
    const viewer = (key: string) => page.getByTestId(`viewer-${key}`);
    await expect(viewer('browser_vnc').getByRole('checkbox')).toBeChecked();
    for (const key of ['browser_vnc', 'file_spice']) if (await viewer(key).getByRole('checkbox').isChecked()) await viewer(key).click();
    await page.getByTestId('deployment-form-submit').click();
    await expect(page.getByTestId('viewers-error')).toHaveText(en.errors.one_viewer_minimum);
    await viewer('browser_rdp').click();
    await expect(page.getByTestId('wireguard-note')).toBeVisible();
    await expect(page.getByTestId('deployment-no-videowall')).toBeVisible();
    await viewer('browser_rdp').click();
    await viewer('browser_vnc').click();
    await expect(page.getByTestId('deployment-no-videowall')).toBeHidden();
    await shot(page, 'deployment-new');

    // The confirmation counts the desktops: Nora, Iker and Uma (1B as her second group).
    await page.getByTestId('deployment-form-submit').click();
    const confirm = page.getByTestId('deployment-confirm-count');
    await expect(confirm).toHaveAttribute('data-count', '3');
    await expect(confirm).toHaveText(t.confirm.count_other.replace('{{count}}', '3'));
    await shot(page, 'deployment-confirm');
    await page.getByTestId('deployment-confirm-create').click();

    // The detail: the desktops appear per user as they are made.
    await expect(page).toHaveURL(/\/deployment\/[^/]+$/);
    const deploymentId = page.url().split('/').pop()!;
    const users = page.getByTestId('deployment-user');
    await expect(users).toHaveCount(3, { timeout: scaled(30_000) });
    await expect(page.getByTestId('deployment-creating')).toBeHidden({ timeout: scaled(30_000) });
    await expect(page.getByTestId('deployment-recreate')).toBeEnabled();
    const seen = await page.evaluate(() => (window as unknown as { __creating: number[] }).__creating);
    console.log(`creation progress seen in the page: ${JSON.stringify(seen)}`);
    await expect(users.locator('p').filter({ hasText: 'Nora Student' })).toBeVisible();
    await expect(page.getByTestId('deployment-count-total')).toHaveAttribute('data-value', '3');
    await expect(page.getByTestId('deployment-desktop').first()).toHaveAttribute('data-state', 'stopped');
    await shot(page, 'deployment-detail');

    // Start all: every desktop comes up live (one at a time under TCG).
    await page.getByTestId('deployment-start-all').click();
    const desktops = page.getByTestId('deployment-desktop');
    for (let i = 0; i < 3; i++) await expect(desktops.nth(i)).toHaveAttribute('data-state', /started|waitingip/, { timeout: scaled(120_000) });
    await expect(page.getByTestId('deployment-count-started')).toHaveAttribute('data-value', '3');

    // The videowall: one live screen per student, view-only; one can be enlarged.
    await page.getByTestId('deployment-videowall').click();
    await expect(page).toHaveURL(/\/videowall$/);
    const tiles = page.getByTestId('videowall-tile');
    await expect(tiles).toHaveCount(3);
    for (let i = 0; i < 3; i++) {
      await expect(tiles.nth(i)).toHaveAttribute('data-status', 'connected', { timeout: scaled(30_000) });
      await expect.poll(() => litPixels(tiles.nth(i)), { timeout: scaled(60_000), intervals: [1000] }).toBeGreaterThan(3000);
    }
    // Then each guest's own banner (about 8,300 lit pixels of 720×400, the firmware's text about 5,600).
    for (let i = 0; i < 3; i++) await expect.poll(() => litPixels(tiles.nth(i)), { timeout: scaled(120_000), intervals: [1000] }).toBeGreaterThan(7000);
    await expect(page.getByTestId('videowall-name')).toHaveText(['Iker Student', 'Nora Student', 'Uma User']);
    await shot(page, 'deployments-videowall');
    await tiles.nth(1).getByTestId('videowall-enlarge').click();
    const big = page.getByTestId('videowall-enlarged-screen');
    await expect(big).toHaveAttribute('data-status', 'connected', { timeout: scaled(30_000) });
    await expect.poll(() => litPixels(big), { timeout: scaled(30_000), intervals: [1000] }).toBeGreaterThan(3000);
    await page.getByTestId('videowall-control').click();
    await expect(page.getByTestId('videowall-control')).toHaveText(t.videowall.release);
    await shot(page, 'deployments-videowall-enlarged');
    await page.keyboard.press('Escape');
    await page.getByTestId('videowall-back').click();

    // Hide, choosing to stop the running desktops: they stop, the deployment is hidden.
    await page.getByTestId('deployment-hide').click();
    await expect(page.getByTestId('deployment-hide-modal')).toContainText(t.hide.started_other.replace('{{count}}', '3'));
    await shot(page, 'deployment-hide');
    await page.getByTestId('deployment-hide-stop').click();
    await expect(page.getByTestId('deployment-detail').getByTestId('deployment-visible')).toHaveAttribute('data-visible', 'false');
    for (let i = 0; i < 3; i++) await expect(desktops.nth(i)).toHaveAttribute('data-state', 'stopped', { timeout: scaled(60_000) });
    // The videowall has nothing to show now.
    await page.getByTestId('deployment-videowall').click();
    await expect(page.getByTestId('empty-state')).toContainText(t.videowall.empty_title);
    await shot(page, 'deployments-videowall-empty');
    await page.getByTestId('videowall-back').click();

    // Visible again.
    await page.getByTestId('deployment-show').click();
    await expect(page.getByTestId('deployment-detail').getByTestId('deployment-visible')).toHaveAttribute('data-visible', 'true');
    // One desktop hidden from its user alone, then shown again.
    await expect(page.getByTestId('deployment-count-visible')).toHaveAttribute('data-value', '3');
    const iker = page.locator('[data-testid=deployment-desktop][data-user="Iker Student"]');
    // Shown with the deployment at once (its switch followed the deployment's, not a later read).
    await expect(iker.getByTestId('deployment-desktop-visible')).toBeChecked();
    // (the switch's track is what a person clicks; its input is hidden under it)
    await iker.locator('.mantine-Switch-track').click();
    await expect(iker.getByTestId('deployment-desktop-visible')).not.toBeChecked();
    await expect(page.getByTestId('deployment-count-visible')).toHaveAttribute('data-value', '2');
    await iker.locator('.mantine-Switch-track').click();
    await expect(iker.getByTestId('deployment-desktop-visible')).toBeChecked();
    await expect(page.getByTestId('deployment-count-visible')).toHaveAttribute('data-value', '3');

    // Recreate, confirmed; the button comes back when the job ends.
    await page.getByTestId('deployment-recreate').click();
    await page.getByTestId('deployment-recreate-confirm').click();
    await expect(notice(page, t.recreate.started)).toBeVisible();
    await expect(page.getByTestId('deployment-recreate')).toBeEnabled({ timeout: scaled(30_000) });
    await expect(users).toHaveCount(3);

    // The direct-viewer CSV, then with new links: every desktop has a line, the links change.
    const csv = async (reset: boolean) => {
      await page.getByTestId('deployment-more').click();
      await page.getByTestId('deployment-csv').click();
      if (reset) await page.getByTestId('deployment-csv-reset').check();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('deployment-csv-download').click()]);
      expect(download.suggestedFilename()).toMatch(/\.csv$/);
      return readFileSync((await download.path())!, 'utf8').trim().split(/\r?\n/);
    };
    const first = await csv(false);
    expect(first).toHaveLength(4);
    expect(first[0]).toContain('username');
    expect(first.join('\n')).toContain('student03');
    const again = await csv(true);
    expect(again).toHaveLength(4);
    const links = (lines: string[]) => lines.slice(1).map((l) => l.match(/https?:\/\/\S+/)?.[0]).sort();
    expect(links(again)).not.toEqual(links(first));

    // A co-owner: Marta (manager).
    await page.getByTestId('deployment-more').click();
    await page.getByTestId('deployment-co-owners').click();
    await pick(page, 'deployment-co-owners-search', 'Marta', 'Marta Manager', t.co_owners.type_more_other);
    await shot(page, 'deployment-co-owners');
    await page.getByTestId('deployment-co-owners-save').click();
    await expect(page.getByRole('dialog')).toBeHidden();
    // Checked as the admin: a second sign-in of Teo would end the page's session.
    const admin = await api(request, 'admin');
    const co = (await admin.get(`/deployment/co-owners/${deploymentId}`)) as { co_owners: { name: string }[] };
    expect(co.co_owners.map((c) => c.name)).toEqual(['Marta Manager']);

    // Edit: the students may recreate their desktop.
    await page.getByTestId('deployment-more').click();
    await page.getByTestId('deployment-edit').click();
    await expect(page).toHaveURL(/\/edit$/);
    await expect(page.getByTestId('deployment-form-name')).toHaveValue('Networks lab');
    await expect(page.getByTestId('deployment-form-recreate')).not.toBeChecked();
    await page.getByTestId('deployment-form-recreate').check();
    await page.getByTestId('deployment-form-description').fill('Monday class, students may start over');
    await shot(page, 'deployment-edit');
    await page.getByTestId('deployment-form-submit').click();
    await expect(page).toHaveURL(new RegExp(`/deployment/${deploymentId}$`));
    // The original's answer: the list itself.
    const perms = (await admin.get(`/deployment/permissions/${deploymentId}`)) as string[];
    expect(perms).toContain('recreate');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Networks lab');

    // The list: the card with its counts.
    await page.getByTestId('deployment-back').click();
    const c = card(page, 'Networks lab');
    await expect(c.getByTestId('deployment-count-total')).toHaveAttribute('data-value', '3');
    await expect(c.getByTestId('deployment-count-visible')).toHaveAttribute('data-value', '3');
    await expect(c.getByTestId('deployment-role')).toHaveText(t.owner);
    await shot(page, 'deployments-list');

    // Delete (the owner, with every desktop stopped): to the recycle bin, gone from the list.
    await c.click();
    await page.getByTestId('deployment-more').click();
    await page.getByTestId('deployment-delete').click();
    await expect(page.getByTestId('deployment-delete-running')).toBeHidden();
    await page.getByTestId('deployment-delete-confirm').click();
    await expect(page).toHaveURL(/\/deployments$/);
    await expect(card(page, 'Networks lab')).toHaveCount(0);
    await expect(page.getByTestId('empty-state')).toBeVisible();
  });

  test('a student sees the deployment desktop while the deployment is visible, live', async ({ page, request }) => {
    test.setTimeout(scaled(3 * 60_000));
    const teacher = await api(request, 'advanced');
    const student = await api(request, 'student01');
    const sara = ((await student.get('/user')) as { id: string }).id;
    const { id } = (await teacher.send('POST', '/deployments', {
      name: 'Sara practice',
      desktop_name: 'Practice desktop',
      template_id: await demoTemplateId(teacher),
      visible: true,
      allowed: { groups: false, users: [sara] },
    })) as { id: string };
    await expect.poll(async () => ((await teacher.get(`/deployment/${id}`)) as { totalDesktops: number; creation: unknown }).creation, { timeout: scaled(30_000) }).toBeNull();

    await signInAs(page, 'student01');
    const mine = desktopCard(page, 'Practice desktop');
    await expect(mine).toBeVisible();
    await expect(mine).toHaveAttribute('data-state', 'stopped');
    await shot(page, 'deployment-student-visible');

    // Hidden by the teacher: it leaves the student's list without a reload.
    await teacher.send('PUT', `/deployments/visible/${id}`, { stop_started_domains: true });
    await expect(mine).toHaveCount(0);
    await expect(desktopCard(page, 'Demo desktop')).toBeVisible();
    // The student cannot reach the deployment's screens.
    await page.goto(`/deployment/${id}`);
    await expect(page).toHaveURL(/\/desktops$/);

    // Visible again: back in the list, live.
    await teacher.send('PUT', `/deployments/visible/${id}`, { stop_started_domains: false });
    await expect(mine).toBeVisible();
    await teacher.send('DELETE', `/deployments/${id}`);
    await expect(mine).toHaveCount(0);
  });

  test('every deployment screen speaks Spanish', async ({ page, request }) => {
    test.setTimeout(scaled(3 * 60_000));
    const teacher = await api(request, 'advanced');
    const { id } = (await teacher.send('POST', '/deployments', {
      name: 'Laboratorio redes',
      description: 'Clase del lunes',
      desktop_name: 'Escritorio redes',
      template_id: await demoTemplateId(teacher),
      visible: false,
      allowed: { groups: ['default-students-1a'], users: false },
    })) as { id: string };
    await expect.poll(async () => ((await teacher.get(`/deployment/${id}`)) as { creation: unknown }).creation, { timeout: scaled(30_000) }).toBeNull();

    // Spanish as this browser's stored choice (not saved on the server: the other journeys stay in English).
    await page.addInitScript(() => localStorage.setItem('vdi.language', 'es-ES'));
    await signInAs(page, 'advanced');
    const es = esDep.deployments;
    await page.getByTestId('navbar').getByTestId('nav-deployments').click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(es.heading);
    await expect(card(page, 'Laboratorio redes').getByTestId('deployment-visible')).toHaveText(es.hidden);
    await shot(page, 'deployments-list-es-ES');

    await card(page, 'Laboratorio redes').click();
    await expect(page.getByTestId('deployment-start-all')).toHaveText(es.detail.start_all);
    await expect(page.getByTestId('deployment-user')).toHaveCount(3);
    await shot(page, 'deployment-detail-es-ES');
    // On a phone the rows wrap under the user.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByTestId('deployment-toolbar')).toBeVisible();
    await shot(page, 'deployment-detail-es-ES-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByTestId('deployment-more').click();
    await page.getByTestId('deployment-edit-users').click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await expect(page.getByTestId('sharing-groups-search')).toBeVisible();
    await shot(page, 'deployment-users-es-ES');
    await page.keyboard.press('Escape');

    await page.getByTestId('deployment-videowall').click();
    await expect(page.getByTestId('empty-state')).toContainText(es.videowall.empty_title);
    await shot(page, 'deployments-videowall-es-ES');
    await page.getByTestId('videowall-back').click();

    await page.getByTestId('deployment-more').click();
    await page.getByTestId('deployment-edit').click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(es.edit.heading);
    await shot(page, 'deployment-edit-es-ES');

    await page.goto('/deployments/new');
    await page.getByTestId('deployment-template').click();
    await page.getByRole('option', { name: esMain.built_in.demo_template }).click();
    await page.getByTestId('deployment-form-name').fill('Repaso');
    await page.getByTestId('deployment-form-desktop-name').fill('Escritorio repaso');
    await page.getByTestId('sharing-users').check();
    await pick(page, 'sharing-users-search', 'Sara', 'Sara Student', es.allowed.type_more_other);
    await shot(page, 'deployment-new-es-ES');
    await page.getByTestId('deployment-form-submit').click();
    await expect(page.getByTestId('deployment-confirm-count')).toHaveText(es.confirm.count_one.replace('{{count}}', '1'));
    await shot(page, 'deployment-confirm-es-ES');
    await page.getByTestId('deployment-confirm').getByRole('button', { name: esMain.common.cancel }).click();

    // A fresh token (it ends the page's session, which is done).
    await (await api(request, 'advanced')).send('DELETE', `/deployments/${id}`);
  });
});
