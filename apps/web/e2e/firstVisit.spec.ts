import type { Route } from '@playwright/test';
import { expect, test } from './fixtures';

/**
 * Holds every request to `pattern` until `release` is called; then they go on to the server.
 * Outcome checks, not timings: what the page shows while the server has not answered yet.
 */
async function hold(page: import('@playwright/test').Page, pattern: string) {
  const held: Route[] = [];
  let released = false;
  await page.route(pattern, async (route) => {
    if (released) return route.continue();
    held.push(route);
  });
  return {
    held,
    async release() {
      released = true;
      await Promise.all(held.splice(0).map((route) => route.continue()));
    },
  };
}

test.describe('the first visit and the next', () => {
  test("the page's first byte holds the app's outline", async ({ page }) => {
    const html = await (await page.request.get('/')).text();
    expect(html).toContain('class="shell-outline"');
  });

  test('a first visit shows the app before its guest session is made, and nothing answers 401', async ({
    chat,
    page,
  }) => {
    const refusals: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 401) refusals.push(`${response.request().method()} ${response.url()}`);
    });
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    const signIn = await hold(page, '**/api/auth/sign-in/anonymous');

    await page.goto('/');
    // While the guest is being made, the shell and the start page are already there.
    await expect(page.getByTestId('new-chat')).toBeVisible();
    await expect(chat.composerInput).toBeEnabled();
    await expect.poll(() => signIn.held.length).toBe(1);

    await signIn.release();
    await expect(page.getByTestId('account-menu')).toHaveAccessibleName('Account menu: Guest');
    await expect(page.getByRole('navigation', { name: 'Chats' })).toContainText('No chats yet.');
    // A message typed right away goes out once the session is there.
    await chat.send('[[words:3]] hello');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.lastReply()).toContainText('You said: "hello"');
    expect(refusals).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  test("a returning visit asks for the chat without waiting for the session's check", async ({
    chat,
    page,
  }) => {
    const url = await chat.startThread('[[words:12]] come back to me');
    await chat.waitForIdle();
    const detailPath = new URL(url).pathname.replace('/chat/', '/api/threads/');

    const check = await hold(page, '**/api/auth/get-session');
    const detailRequests: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === detailPath) detailRequests.push(request.url());
    });
    await page.reload();
    await expect.poll(() => check.held.length).toBeGreaterThan(0);
    // The session check has not answered, and the chat is already shown.
    await expect(chat.lastReply()).toContainText('You said: "come back to me"');
    expect(detailRequests.length).toBeGreaterThan(0);
    expect(check.held.length).toBeGreaterThan(0);
    await check.release();
    await expect(page.getByTestId('account-menu')).toHaveAccessibleName('Account menu: Guest');
  });
});
