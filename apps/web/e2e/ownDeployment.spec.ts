import { expect, test } from './fixtures';
import { AccountPages } from './pages/AccountPages';
import { OwnServers } from './support/ownServers';

/**
 * A deployment set up its own way (its own API and web app): sign-up closed. The shared servers
 * keep the defaults every other test relies on.
 */
test.describe('a deployment with sign-up closed (AUTH_ALLOW_SIGNUP=false)', () => {
  let servers: OwnServers;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    servers = await OwnServers.start({ AUTH_ALLOW_SIGNUP: 'false' });
  });

  test.afterAll(async () => {
    await servers?.stop();
  });

  test('offers no sign-up: not on the sign-in page, not in the guest menu, and the sign-up page says so', async ({
    page,
  }) => {
    const account = new AccountPages(page);
    await page.goto(`${servers.webOrigin}/`);
    await expect(page.locator('html[data-hydrated="true"]')).toBeAttached();
    await expect(account.menuButton).toHaveAccessibleName('Account menu: Guest');
    const menu = await account.openMenu();
    await expect(menu.getByRole('menuitem', { name: 'Sign in' })).toBeVisible();
    await expect(menu.getByRole('menuitem', { name: 'Create an account' })).toHaveCount(0);
    await page.keyboard.press('Escape');

    await page.goto(`${servers.webOrigin}/sign-in`);
    await expect(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Back to your chats' })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Create an account' })).toHaveCount(0);

    await page.goto(`${servers.webOrigin}/sign-up`);
    await expect(page.getByTestId('sign-up-closed')).toHaveText(
      'This server does not take new accounts. Sign in with an existing one.',
    );
    await expect(page.getByRole('button', { name: 'Create account' })).toHaveCount(0);
    await expect(page.getByRole('link', { name: 'Sign in' })).toBeVisible();
  });
});
