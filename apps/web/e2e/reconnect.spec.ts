import { expect, test } from './fixtures';

/** The API is unreachable during a reload, then comes back: the page recovers by itself. */
test.describe('reconnecting', () => {
  test('says it is reconnecting while the API is away, and recovers without a reload', async ({
    chat,
    sidebar,
    page,
  }) => {
    await chat.startThread('[[words:12]] still here after the outage');
    await chat.waitForIdle();

    // Every API request answers as the proxy does while the API is down.
    const down = (route: import('@playwright/test').Route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'unavailable', message: 'The API cannot be reached.' } }),
      });
    await page.route('**/api/**', down);
    await page.reload();
    await expect(page.locator('html[data-hydrated="true"]')).toBeAttached();

    await expect(page.getByTestId('reconnecting')).toContainText('Reconnecting');
    await expect(page.getByTestId('reconnecting-banner')).toBeVisible();
    await expect(sidebar.root).toContainText('Reconnecting');
    await expect(sidebar.root).not.toContainText('No chats yet');
    // Nothing in the page says a reply is running.
    await expect(chat.stopButton).toBeHidden();
    await expect(chat.composerInput).toBeDisabled();

    await page.unroute('**/api/**', down);

    // Back by itself: the transcript, the sidebar and the composer, and no stale warning.
    await expect(chat.userMessages.first()).toContainText('still here after the outage', { timeout: 20_000 });
    await expect(chat.repliesTo('still here after the outage')).toHaveCount(1);
    await expect(sidebar.items).toHaveCount(1, { timeout: 20_000 });
    await expect(page.getByTestId('reconnecting-banner')).toBeHidden({ timeout: 20_000 });
    await expect(chat.composerInput).toBeEnabled();

    // And it is live again: a send streams its reply.
    await chat.send('[[words:12]] after');
    await expect(chat.repliesTo('after')).toHaveCount(1);
  });
});
