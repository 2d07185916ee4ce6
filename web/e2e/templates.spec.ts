import { expect, test, type Locator, type Page } from '@playwright/test';
import enCore from '../src/i18n/locales/en.json' with { type: 'json' };
import enContent from '../src/i18n/locales/content/en.json' with { type: 'json' };
import { apiToken, scaled, shot as fullShot, signInAs, stillScreen } from './support';

/** The English texts these journeys read: the core catalogue and the content area (templates, media, disks, the desktop form). */
const en = { ...enCore, ...enContent };

/** The whole page in one window-sized shot: the fixed header, modals and their overlay sit where a person sees them. */
const shot = async (page: Page, name: string) => {
  const size = page.viewportSize()!;
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, window.innerHeight));
  await page.setViewportSize({ width: size.width, height });
  await page.evaluate(() => window.scrollTo(0, 0));
  await stillScreen(page);
  await fullShot(page, name);
  await page.setViewportSize(size);
};

// `advanced` (Teo) turns a desktop of his own into a template and shares it with the group
// Students 1B; `student03` (Nora, Students 1B) creates a desktop from it and starts it; Teo's
// delete modal then shows the tree, with Nora's desktop blocking the deletion. No other journey
// uses these desktops or Nora's.

const desktopCard = (page: Page, name: string) => page.locator(`[data-testid=desktop-card][data-name="${name}"]`);
const templateCard = (page: Page, name: string) => page.locator(`[data-testid=template-card][data-name="${name}"]`);
const imagesLoaded = (page: Page) => page.waitForFunction(() => [...document.images].every((i) => i.complete));

/** Stops a started desktop; a guest still booting ignores ACPI, so force it then. */
async function stopAndWait(scope: Locator) {
  await scope.getByTestId('desktop-action-stop').click();
  try {
    await expect(scope).toHaveAttribute('data-state', 'stopped', { timeout: scaled(10_000) });
  } catch {
    await scope.getByTestId('desktop-action-forceStop').click();
    await expect(scope).toHaveAttribute('data-state', 'stopped', { timeout: scaled(30_000) });
  }
}

test.describe.serial('templates', () => {
  test('advanced makes a template of a stopped desktop, sees the progress, and shares it with Students 1B', async ({ page, request }) => {
    // Teo's own desktop to start from (made as in the new-desktop journey).
    const token = await apiToken(request, 'advanced');
    const headers = { authorization: `Bearer ${token}` };
    const [demo] = (await (await request.get('/api/v3/user/templates/allowed/all', { headers })).json()) as { id: string }[];
    expect((await request.post('/api/v3/persistent_desktop', { headers, data: { name: 'Course machine', description: 'Prepared for the course', template_id: demo!.id } })).status()).toBe(200);

    await signInAs(page, 'advanced');
    const source = desktopCard(page, 'Course machine');
    await source.getByTestId('desktop-menu').click();
    await page.getByTestId('desktop-make-template').click();
    await expect(page).toHaveURL(/\/templates\/new\?desktop=/);
    await expect(page.getByTestId('template-source')).toContainText('Course machine');
    await page.getByTestId('template-name').fill('Course base');
    await page.getByTestId('template-description').fill('Networks course, ready to use');
    await expect(page.getByTestId('template-enabled')).toBeChecked();

    // Sharing: groups, found by typing at least 2 letters.
    await page.getByTestId('sharing-groups').check();
    await expect(page.getByTestId('sharing-summary')).toHaveText(en.templates.sharing.everyone_hint);
    const search = page.getByTestId('sharing-groups-search');
    await search.click();
    await search.fill('S');
    await expect(page.getByText(en.templates.sharing.type_more_other.replace('{{count}}', '2'))).toBeVisible();
    await search.fill('Stud');
    await page.getByRole('option', { name: 'Students 1B' }).click();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('sharing-summary')).toHaveText(en.templates.sharing.chosen_hint);
    await imagesLoaded(page);
    await shot(page, 'template-new-form');

    await page.getByTestId('template-submit').click();
    const progress = page.getByTestId('template-progress');
    await expect(progress).toBeVisible();
    await expect(progress).toHaveAttribute('data-done', 'true', { timeout: scaled(30_000) });
    await expect(page.getByTestId('template-progress-value')).toHaveText('100%');
    await shot(page, 'template-progress');
    // Then to the desktops, where the desktop is back, stopped, on its new disk.
    await expect(page).toHaveURL(/\/desktops$/, { timeout: scaled(10_000) });
    await expect(desktopCard(page, 'Course machine')).toHaveAttribute('data-state', 'stopped');

    // The own tab: enabled, shared with one group.
    await page.goto('/templates');
    const tpl = templateCard(page, 'Course base');
    await expect(tpl.getByTestId('template-status')).toHaveText(en.templates.status.enabled);
    await expect(tpl.getByTestId('template-sharing')).toHaveText(en.templates.sharing.with.replace('{{list}}', '1 group'));
    await expect(tpl.getByTestId('template-derivatives')).toHaveText('1 derived');
    await imagesLoaded(page);
    await shot(page, 'templates-own');

    // The share dialog knows the group by name.
    await tpl.getByTestId('template-share-button').click();
    await expect(page.getByRole('dialog')).toContainText('Students 1B');
    await shot(page, 'template-share');
    await page.getByRole('dialog').getByRole('button', { name: en.common.cancel }).click();

    // Shared with Teo: the demo template.
    await page.getByTestId('tab-shared').click();
    await expect(page.locator('[data-testid=shared-template-card][data-name="Demo Linux"]')).toBeVisible();
    await imagesLoaded(page);
    await shot(page, 'templates-shared');
  });

  test('student03 of Students 1B creates a desktop from the shared template and starts it', async ({ page }) => {
    await signInAs(page, 'student03');
    await page.getByTestId('new-desktop').click();
    const tile = page.locator('[data-testid=new-desktop-template][data-template-name="Course base"]');
    await expect(tile).toBeVisible();
    await expect(tile).toContainText('by Teo Teacher');
    await tile.click();
    await page.getByTestId('new-desktop-name').fill('Nora course');
    await page.getByTestId('new-desktop-advanced').click();
    // Nora's group quota bounds the hardware: 2 GB, 2 vCPUs.
    await expect(page.getByText(en.domain_edit.up_to_gb.replace('{{value}}', '2')).first()).toBeVisible();
    await imagesLoaded(page);
    await shot(page, 'new-desktop-student');
    await page.getByTestId('new-desktop-create').click();
    await expect(page).toHaveURL(/\/desktops$/);
    const mine = desktopCard(page, 'Nora course');
    await expect(mine).toBeVisible();
    await mine.getByTestId('desktop-action-start').click();
    await expect(mine).toHaveAttribute('data-state', 'started', { timeout: scaled(60_000) });
    await shot(page, 'template-student-desktop-started');
    await stopAndWait(mine);
  });

  test('the delete modal shows the tree of derivatives; others\' desktops block it; make-desktop needs none', async ({ page }) => {
    await signInAs(page, 'advanced');
    await page.goto('/templates');
    const tpl = templateCard(page, 'Course base');
    await expect(tpl.getByTestId('template-derivatives')).toHaveText('2 derived');

    await tpl.getByTestId('template-menu').click();
    await page.getByTestId('template-delete').click();
    const modal = page.getByTestId('delete-template-modal');
    const tree = modal.getByTestId('template-tree');
    await expect(tree.locator('[data-testid=tree-node][data-name="Course base"]')).toBeVisible();
    await expect(tree.locator('[data-testid=tree-node][data-name="Course machine"]')).toContainText('Teo Teacher');
    const nora = tree.locator('[data-testid=tree-node][data-name="Nora course"]');
    await expect(nora).toContainText('Nora Student');
    await expect(nora).toHaveAttribute('data-pending', 'true');
    await expect(modal.getByTestId('delete-pending')).toContainText('Nora course (Nora Student)');
    await expect(modal.getByTestId('delete-template-confirm')).toBeDisabled();
    await shot(page, 'template-delete-tree');
    await modal.getByRole('button', { name: en.common.cancel }).click();

    // Make desktop: a confirmation checkbox, and refused while desktops are built on it.
    await tpl.getByTestId('template-menu').click();
    await page.getByTestId('template-to-desktop').click();
    await expect(page.getByTestId('to-desktop-blocked')).toHaveText(en.errors.template_has_derivatives);
    await expect(page.getByTestId('to-desktop-confirm')).toBeDisabled();
    await shot(page, 'template-to-desktop');
    await page.getByRole('dialog').getByRole('button', { name: en.common.cancel }).click();

    // Disable and enable again from the card.
    await tpl.getByTestId('template-enabled-toggle').click();
    await expect(tpl.getByTestId('template-status')).toHaveText(en.templates.status.disabled);
    await tpl.getByTestId('template-enabled-toggle').click();
    await expect(tpl.getByTestId('template-status')).toHaveText(en.templates.status.enabled);
  });

  test('a shared template is duplicated onto the same disk, and a template nothing depends on is deleted', async ({ page }) => {
    await signInAs(page, 'advanced');
    await page.goto('/templates?tab=shared');
    await page.locator('[data-testid=shared-template-card][data-name="Demo Linux"]').getByTestId('shared-duplicate').click();
    await expect(page).toHaveURL(/\/templates\/duplicate\?id=/);
    await expect(page.getByTestId('duplicate-source')).toContainText(en.templates.duplicate.how);
    await expect(page.getByTestId('template-name')).toHaveValue('Demo Linux copy');
    await page.getByTestId('template-name').fill('Teo demo copy');
    await imagesLoaded(page);
    await shot(page, 'template-duplicate');
    await page.getByTestId('template-submit').click();
    await expect(page).toHaveURL(/\/templates$/);
    const copy = templateCard(page, 'Teo demo copy');
    await expect(copy).toContainText(en.templates.card.duplicate);
    await expect(copy.getByTestId('template-sharing')).toHaveText(en.templates.sharing.not_shared);

    await copy.getByTestId('template-menu').click();
    await page.getByTestId('template-delete').click();
    const modal = page.getByTestId('delete-template-modal');
    await expect(modal).toContainText(en.templates.delete.alone);
    await modal.getByTestId('delete-template-confirm').click();
    await expect(copy).toBeHidden();
    await expect(templateCard(page, 'Course base')).toBeVisible();
  });
});
