import { expect, test, type APIRequestContext } from '@playwright/test';
import account from '../src/i18n/locales/account/en.json' with { type: 'json' };
import { apiToken, chooseLanguage, freshUser, shot, signInAs, windowShot } from './support';

// Personal API tokens (issue 27): made in the profile and seen once, used from outside the browser as
// `Authorization: Bearer`, revoked by their owner or in the console; the API's reference page.

const asBearer = (request: APIRequestContext, token: string, path = '/api/v3/user') => request.get(path, { headers: { authorization: `Bearer ${token}` } });

test.describe('API tokens', () => {
  test('a person makes a token in the profile, sees it once, uses it from a script, and revokes it', async ({ page, request }) => {
    await freshUser(request, 'tok-user');
    await signInAs(page, 'tok-user');
    await page.goto('/profile');
    const card = page.getByTestId('api-tokens');
    await expect(card.getByText(account.account.tokens.empty)).toBeVisible();

    await card.getByTestId('token-new').click();
    await page.getByTestId('token-name').fill('nightly report');
    await page.getByTestId('token-scope').getByText(account.account.tokens.scopes.full).click();
    await page.getByTestId('token-create').click();
    const secret = (await page.getByTestId('token-secret').textContent())!.trim();
    expect(secret).toMatch(/^vdi_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    await windowShot(page, 'api-tokens-created-once');
    await page.getByTestId('token-created-done').click();
    const row = card.locator('[data-testid="token-row"][data-name="nightly report"]');
    await expect(row).toBeVisible();
    await expect(row).toContainText(secret.slice(0, 20));
    // Once closed, the secret is nowhere on the page.
    await expect(page.getByText(secret)).toHaveCount(0);
    await expect(row.getByTestId('token-last-used')).toHaveText(account.account.tokens.never_used);

    // A script calls the API with it, as its owner.
    const me = await asBearer(request, secret);
    expect(me.status()).toBe(200);
    expect((await me.json()).username).toBe('tok-user');
    await page.reload();
    await expect(row.getByTestId('token-last-used')).not.toHaveText(account.account.tokens.never_used);
    await shot(page, 'api-tokens-profile');

    await row.getByTestId('token-revoke').click();
    await page.getByTestId('confirm-token-revoke').click();
    await expect(row).toHaveCount(0);
    expect((await asBearer(request, secret)).status()).toBe(401);
  });

  test('an administrator lists everyone’s tokens in the console and revokes one', async ({ page, request }) => {
    await freshUser(request, 'tok-owner');
    const session = await apiToken(request, 'tok-owner');
    const made = await request.post('/api/v3/user/api-tokens', { headers: { authorization: `Bearer ${session}` }, data: { name: 'backup robot', scope: 'read', expires: null } });
    expect(made.status()).toBe(200);
    const { token } = (await made.json()) as { token: string };
    expect((await asBearer(request, token)).status()).toBe(200);
    // A read-only token is refused on a write.
    const write = await request.put('/api/v3/user/language/en', { headers: { authorization: `Bearer ${token}` } });
    expect(write.status()).toBe(403);
    expect((await write.json()).description_code).toBe('api_token_read_only');

    await freshUser(request, 'tok-admin', 'admin');
    await signInAs(page, 'tok-admin');
    await page.goto('/isard-admin/api_tokens');
    await page.getByTestId('api-tokens-search').fill('backup robot');
    const row = page.locator('[data-testid="api-token-row"][data-name="backup robot"]');
    await expect(row).toBeVisible();
    await expect(row).toContainText('tok-owner');
    await shot(page, 'api-tokens-console');
    await row.getByTestId('api-token-revoke').click();
    await page.getByTestId('api-token-revoke-confirm').click();
    await expect(row).toHaveCount(0);
    expect((await asBearer(request, token)).status()).toBe(401);
    // Among the revoked ones now.
    await page.getByTestId('api-tokens-filter-state').click();
    await page.getByRole('option', { name: 'Revoked' }).click();
    await expect(row).toBeVisible();
    await expect(row.getByTestId('api-token-state')).toBeVisible();
  });

  test('the screens in another language, empty, and at phone width; the API reference', async ({ page, request }) => {
    await freshUser(request, 'tok-ca', 'admin');
    await signInAs(page, 'tok-ca');
    await page.goto('/profile');
    await chooseLanguage(page, 'ca-ES');
    try {
      await expect(page.getByTestId('api-tokens')).toContainText('Testimonis d');
      await expect(page.locator('.mantine-Notification-root')).toHaveCount(0);
      await shot(page, 'api-tokens-profile-empty-ca');
      await page.goto('/isard-admin/api_tokens');
      await page.getByTestId('api-tokens-search').fill('cap-testimoni-així');
      await expect(page.getByText('Cap testimoni no coincideix')).toBeVisible();
      await shot(page, 'api-tokens-console-empty-ca');
      await page.goto('/api-reference');
      await expect(page.getByTestId('api-group').first()).toBeVisible();
      await page.getByTestId('api-search').fill('/user/');
      const op = page.locator('[data-testid="api-operation"][data-key="post /user/api-tokens"]');
      await op.getByRole('button').click();
      await expect(op.getByText('Cos de la petició')).toBeVisible();
      // The opened call scrolled the page: the whole page is shot from its top, with the header where a person sees it.
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(page, 'api-reference-ca');

      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto('/profile');
      await expect(page.getByTestId('api-tokens')).toBeVisible();
      await shot(page, 'api-tokens-profile-phone-ca');
      await page.goto('/isard-admin/api_tokens');
      await expect(page.getByTestId('api-tokens-search')).toBeVisible();
      await shot(page, 'api-tokens-console-phone-ca');
      await page.goto('/api-reference');
      await page.getByTestId('api-search').fill('api-tokens');
      await expect(page.getByTestId('api-operation')).toHaveCount(5);
      await page.locator('[data-testid="api-operation"][data-key="post /user/api-tokens"]').getByRole('button').click();
      await expect(page.getByText('Cos de la petició')).toBeVisible();
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(page, 'api-reference-phone-ca');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
      await chooseLanguage(page, 'en-US');
    }
  });
});
